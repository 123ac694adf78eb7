"""``geomint mcp``: the toolkit over the Model Context Protocol (docs/mcp.md).

Standard input and output by default (what desktop clients start); ``--http`` serves
streamable HTTP at ``/mcp`` on localhost, with the web app's rules: GEOMINT_TOKEN when
set (and a warning beyond localhost without it), only loopback host names on localhost,
and writes from other sites refused.
"""

from __future__ import annotations

import asyncio
import os
from typing import Annotated

import typer

from geomint._commands._options import AgentMode, ApproveEffects, StoreUrl
from geomint.errors import UsageError

__all__ = ["mcp"]


def mcp(
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")
    ] = False,
    host: Annotated[str, typer.Option("--host", help="Address to listen on (--http).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option("--port", help="Port to listen on (--http).")] = 8765,
    chat: Annotated[
        str | None,
        typer.Option("--chat", help="The chat the calls work in (a new one by default)."),
    ] = None,
    store: StoreUrl = None,
    mode: AgentMode = "auto",
    approve: ApproveEffects = None,
) -> None:
    """Serve geomint's tools, chats and prompts to an MCP client.

    The access token for --http comes from GEOMINT_TOKEN, never from the command line.
    """
    if mode == "in-process":
        _fail("MCP clients send code to run: use auto, isolated or restricted")
    from geomint.agent import create_map_agent  # noqa: PLC0415 - keep `geomint --help` fast
    from geomint.mcp import http_app, serve_stdio  # noqa: PLC0415

    try:
        # No model is asked: the client's model chooses. The demo model fills the slot.
        agent = create_map_agent(
            "demo", store=store, code_execution={"mode": mode}, require_approval=approve or ()
        )
    except UsageError as exc:
        _fail(str(exc))
    try:
        sandbox = agent.ready()
        if not http:
            typer.echo(f"geomint mcp on stdio, sandbox {sandbox}", err=True)
            chat_id = asyncio.run(serve_stdio(agent, chat))
            typer.echo(f"geomint mcp: the calls are in chat {chat_id}", err=True)
            return
        import uvicorn  # noqa: PLC0415

        from geomint.server.serving import LOOPBACK_NAMES, is_loopback  # noqa: PLC0415

        token = os.environ.get("GEOMINT_TOKEN") or None
        loopback = is_loopback(host)
        if token is None and not loopback:
            typer.echo(
                f"warning: {host} is reachable from other machines and GEOMINT_TOKEN is not "
                "set: anyone who can reach it can use the sandbox and your chats",
                err=True,
            )
        app = http_app(
            agent, token=token, allowed_hosts=[*LOOPBACK_NAMES, host] if loopback else None,
            chat_id=chat,
        )  # fmt: skip
        typer.echo(f"geomint mcp http://{host}:{port}/mcp, sandbox {sandbox}", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    except UsageError as exc:
        _fail(str(exc))
    finally:
        agent.close()


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
