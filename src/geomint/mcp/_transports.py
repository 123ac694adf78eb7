"""How an MCP client reaches geomint: standard input and output (one client, one chat),
or streamable HTTP (a chat per session) behind the web app's guards."""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any, Final

from mcp.server.context import ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from starlette.applications import Starlette

from geomint.agent import MapAgent
from geomint.errors import UsageError
from geomint.mcp._server import build_server, new_chat_id
from geomint.server.guards import AllowedHosts, RequireToken, SameOriginWrites

__all__ = ["CHAT_HEADER", "http_app", "serve_stdio"]

#: The request header an HTTP client names its chat with (else each session gets one).
CHAT_HEADER: Final = "geomint-chat"
_CHAT_ID: Final = re.compile(r"[A-Za-z0-9_.:-]{1,200}")
_MAX_SESSIONS: Final = 10_000


async def serve_stdio(agent: MapAgent, chat_id: str | None = None) -> str:
    """Serve one client on standard input and output until it closes them; its calls
    work in ``chat_id`` (a new chat by default). Returns the chat's id."""
    from mcp.server.stdio import stdio_server  # noqa: PLC0415

    chat = _chat_id(chat_id) if chat_id else new_chat_id()
    server = build_server(agent, lambda ctx: chat)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
    return chat


def http_app(
    agent: MapAgent,
    *,
    token: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
    chat_id: str | None = None,
) -> Starlette:
    """The MCP server as streamable HTTP at ``/mcp``, behind the web app's guards.

    Args:
        agent: Runs the tools and holds the chats.
        token: When set, every request needs ``Authorization: Bearer <token>``.
        allowed_hosts: Host names it answers to (DNS rebinding); None for any.
        chat_id: The chat every client works in; by default a client names one with the
            ``geomint-chat`` header, or a handshake-era session gets its own.
    """
    if token is not None and not token:
        raise UsageError("the access token is empty; pass None for no token")
    sessions: OrderedDict[str, str] = OrderedDict()
    fixed = _chat_id(chat_id) if chat_id else None

    def chat_for(ctx: ServerRequestContext[Any, Any]) -> str:
        if fixed is not None:
            return fixed
        headers = getattr(ctx.request, "headers", None)
        named = headers.get(CHAT_HEADER) if headers is not None else None
        if named:
            return _chat_id(named)
        session = headers.get("mcp-session-id") if headers is not None else None
        # A handshake-era session's id is the SDK's own (it refuses ids it did not issue);
        # the 2026-07-28 era has no sessions, so a client names its chat.
        if session and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            chat = sessions.pop(session, None) or new_chat_id()
            sessions[session] = chat
            while len(sessions) > _MAX_SESSIONS:
                sessions.popitem(last=False)
            return chat
        raise MCPError(
            INVALID_PARAMS,
            f"name the chat this client works in with the {CHAT_HEADER} header (this "
            "protocol has no sessions to give each client its own chat), or start the "
            "server with --chat",
        )

    server = build_server(agent, chat_for)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        # geomint's own guards below check the host and the origin, as for the web app.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    # The last added runs first: the token, then the host, then the origin.
    app.add_middleware(SameOriginWrites)
    if allowed_hosts is not None:
        app.add_middleware(AllowedHosts, hosts=tuple(allowed_hosts))
    if token is not None:
        app.add_middleware(RequireToken, token=token, prefix="/", cookie=False)
    return app


def _chat_id(given: str) -> str:
    if not _CHAT_ID.fullmatch(given):
        raise UsageError(f"a chat id is 1-200 letters, digits and _.:-; got {given[:60]!r}")
    return given
