"""``geomint serve``: the web app (chat beside a live map) on the embedded defaults.

SQLite store under GEOMINT_HOME, the local sandbox, the offline provider unless a key says
otherwise, and the scripted demo model when no model is configured. Binds to localhost by
default; on any other address set GEOMINT_TOKEN so that the API needs it.
"""

from __future__ import annotations

import os
import sys
import webbrowser
from typing import Annotated

import typer

from geomint._commands._options import AgentMode, ApproveEffects, StoreUrl
from geomint.errors import UsageError

__all__ = ["serve"]


def serve(
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    store: StoreUrl = None,
    mode: AgentMode = "auto",
    approve: ApproveEffects = None,
    turns_per_minute: Annotated[
        float,
        typer.Option("--turns-per-minute", help="Chat turns and uploads per client a minute."),
    ] = 12.0,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="A host name the app answers to when it listens beyond localhost "
            "(repeatable); by default any.",
        ),
    ] = None,
    forwarded_allow_ips: Annotated[
        list[str] | None,
        typer.Option(
            "--forwarded-allow-ips",
            help="A reverse proxy (address or network) whose X-Forwarded-For names the "
            "client (repeatable); by default none: the client is the connection's peer.",
        ),
    ] = None,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the page in a browser.")
    ] = True,
) -> None:
    """Serve the web app: a chat beside a live map, with charts and figure cards.

    The access token comes from GEOMINT_TOKEN, never from the command line.
    """
    if mode == "in-process":
        _fail("the web app runs model-written code: use auto, isolated or restricted")
    import pydantic_ai  # noqa: PLC0415 - keep `geomint --help` fast
    import uvicorn  # noqa: PLC0415

    from geomint.agent import create_map_agent  # noqa: PLC0415
    from geomint.models.demo import DemoModel  # noqa: PLC0415
    from geomint.server import create_app  # noqa: PLC0415
    from geomint.server.app import TurnLimiter  # noqa: PLC0415
    from geomint.server.serving import (  # noqa: PLC0415
        LOOPBACK_NAMES,
        is_loopback,
        uvicorn_options,
    )

    pydantic_ai.BANNER_ENABLED = False
    token = os.environ.get("GEOMINT_TOKEN") or None
    if token is None and not is_loopback(host):
        typer.echo(
            f"warning: {host} is reachable from other machines and GEOMINT_TOKEN is not set: "
            "anyone who can reach it can use the model and the sandbox",
            err=True,
        )
    try:
        # Without a configured model, the demo model streams its words at a model's pace, so
        # the page shows an answer arriving (and Stop has something to stop).
        demo_model = None if os.environ.get("GEOMINT_MODEL") else DemoModel(word_delay_s=0.03)
        agent = create_map_agent(
            demo_model, store=store, code_execution={"mode": mode}, require_approval=approve or ()
        )
    except UsageError as exc:
        _fail(str(exc))
    try:
        sandbox = agent.ready()
        # On localhost, answer only to the loopback names: a site whose domain resolves to
        # 127.0.0.1 must not reach the app (DNS rebinding). Elsewhere, --allowed-host.
        hosts = [*LOOPBACK_NAMES, host] if is_loopback(host) else allowed_host or None
        app = create_app(
            agent,
            token=token,
            limiter=TurnLimiter(per_minute=turns_per_minute),
            allowed_hosts=hosts,
        )
        wildcard = host in ("0.0.0.0", "::")  # noqa: S104 - only to print a URL to open
        url = f"http://{'127.0.0.1' if wildcard else host}:{port}/"
        model = agent.model_info
        demo = (
            " (the scripted demo model: set GEOMINT_MODEL for a real one)"
            if model.get("demo")
            else ""
        )
        if token is not None:
            url += f"?token={token}"  # opened once, it becomes a cookie (see docs/web.md)
        typer.echo(f"geomint {url} model {model.get('name')}{demo}, sandbox {sandbox}")
        if open_browser and _has_desktop():
            webbrowser.open(url)
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level="warning",
            access_log=False,
            **uvicorn_options(forwarded_allow_ips=forwarded_allow_ips or ()),
        )
    finally:
        agent.close()


def _has_desktop() -> bool:
    """Whether a graphical browser can open: without one, Python's webbrowser would start
    a text browser (lynx, w3m) inside this terminal instead."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)
