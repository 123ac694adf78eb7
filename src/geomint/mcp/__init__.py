"""geomint over the Model Context Protocol: ``geomint mcp`` (docs/mcp.md).

:func:`build_server` makes the MCP server over a :class:`~geomint.agent.MapAgent`;
:func:`serve_stdio` runs it for one client on standard input and output, and
:func:`http_app` as a Starlette app of streamable HTTP behind geomint's own guards (the
access token, the allowed hosts, same-origin writes).
"""

from __future__ import annotations

from geomint.mcp._server import MCP_TOOLS, ChatFor, build_server, mcp_tools, new_chat_id
from geomint.mcp._transports import http_app, serve_stdio

__all__ = [
    "MCP_TOOLS",
    "ChatFor",
    "build_server",
    "http_app",
    "mcp_tools",
    "new_chat_id",
    "serve_stdio",
]
