"""``geomint mcp`` over both transports with the SDK's own client: the command started
over stdio as a desktop client starts it, and streamable HTTP served on 127.0.0.1 with the
web app's rules (a client without the token is refused; a page of another site cannot
write). Each lists the tools, adds a layer, runs an analysis that mints a figure, reads
the figure back, and has an escape refused."""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import mcp_types as types
import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from tests.server.web import make_agent

from geomint.agent import MapAgent
from geomint.mcp import http_app
from geomint.sandbox import Sandbox
from geomint.store import Chats, open_store

pytestmark = pytest.mark.anyio

TOKEN = "mcp-test-token"
STOPS = {"path": "helsinki_stops.csv", "label": "stops"}
COUNT = "mint.value(len(byod['features']), 'stops', unit='stops')\nreturn len(byod['features'])"
ESCAPE = "import subprocess\nreturn subprocess.run(['id'], capture_output=True).stdout"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def text(result: types.CallToolResult) -> dict[str, Any]:
    found = result.content[0]
    assert isinstance(found, types.TextContent)
    parsed: dict[str, Any] = json.loads(found.text)
    return parsed


async def session(client: Client, chat: str) -> None:
    """What every transport must do, start to end."""
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"add_byod_layer", "analyse_data", "fetch", "help"} <= names
    added = text(await client.call_tool("add_byod_layer", STOPS))
    counted = await client.call_tool(
        "analyse_data", {"byod_entry_ids": [added["entry_id"]], "name": "n", "code": COUNT}
    )
    (figure,) = text(counted)["figures"]
    card = await client.read_resource(f"geomint://chats/{chat}/figures/{figure['id']}")
    shown = json.loads(card.contents[0].text)  # type: ignore[union-attr]
    assert shown["value"] == 125 and shown["sources"]
    escaped = await client.call_tool(
        "analyse_data", {"byod_entry_ids": [added["entry_id"]], "name": "e", "code": ESCAPE}
    )
    assert escaped.is_error and "subprocess" in json.dumps(text(escaped))


async def test_stdio_the_command_a_desktop_client_starts(tmp_path: Path) -> None:
    store = f"sqlite:///{tmp_path / 'chats.db'}"
    command = StdioServerParameters(
        command=str(Path(sys.executable).parent / "geomint"),  # the venv's own command
        args=["mcp", "--store", store, "--chat", "desk-1"],
        cwd=str(tmp_path),
    )
    async with Client(command) as client:
        await session(client, "desk-1")
    # what the client did is a chat the web app and `geomint chat` open
    chats = Chats(open_store(store))
    try:
        tools = [e.body.tool for e in chats.store.read("desk-1") if e.body.type == "tool_called"]
    finally:
        chats.store.close()
    assert tools == ["add_byod_layer", "analyse_data", "analyse_data"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture
def served(isolated: Sandbox) -> Iterator[tuple[str, MapAgent]]:
    agent = make_agent(isolated, require_approval=[])
    app = http_app(agent, token=TOKEN, allowed_hosts=["127.0.0.1", "localhost"])
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}/mcp", agent
    server.should_exit = True
    thread.join(timeout=10)


async def test_streamable_http_with_the_token(served: tuple[str, MapAgent]) -> None:
    import httpx2  # the SDK's own HTTP client

    url, agent = served
    headers = {"Authorization": f"Bearer {TOKEN}", "geomint-chat": "http-1"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        from mcp.client.streamable_http import streamable_http_client

        async with Client(streamable_http_client(url, http_client=http)) as client:
            await session(client, "http-1")
    assert any(e.body.type == "value_minted" for e in agent.chats.store.read("http-1"))


def test_http_without_the_token_or_from_another_site_is_refused(
    served: tuple[str, MapAgent],
) -> None:
    url, _ = served
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    bare = httpx.post(url, json=hello, headers=accept, timeout=10)
    assert bare.status_code == 401
    crossed = httpx.post(
        url,
        json=hello,
        headers={**accept, "Authorization": f"Bearer {TOKEN}", "Origin": "https://evil.example"},
        timeout=10,
    )
    assert crossed.status_code == 403
    rebound = httpx.post(
        url.replace("127.0.0.1", "localhost"),
        json=hello,
        headers={**accept, "Authorization": f"Bearer {TOKEN}", "Host": "evil.example"},
        timeout=10,
    )
    assert rebound.status_code == 421


async def test_http_a_client_names_its_chat_or_is_told_to(served: tuple[str, MapAgent]) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.exceptions import MCPError

    url, _ = served
    headers = {"Authorization": f"Bearer {TOKEN}"}  # no geomint-chat
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        with pytest.raises(MCPError, match="geomint-chat header"):
            await client.call_tool("recall_state", {})


def test_http_takes_the_token_as_a_header_not_the_pages_cookie(
    served: tuple[str, MapAgent],
) -> None:
    url, _ = served
    hello = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    accept = {"Accept": "application/json, text/event-stream"}
    cookied = httpx.post(url, json=hello, headers=accept, cookies={"geomint_token": TOKEN})
    assert cookied.status_code == 401
