"""The toolkit as an MCP server: geomint's own tools, an MCP session's chat as resources,
and the example prompts.

An MCP client (a desktop chat app, an IDE agent) has its own model; it chooses tools and
geomint runs them exactly as the agent does: :meth:`geomint.agent.MapAgent.call_tool` is
the agent's own call path (arguments checked against the tool's schema, code through the
isolated sandbox and Gate 1, approvals asked where the policy asks, the call recorded in
the chat's log). What the client reads is the digest the agent's model reads, as text and
as ``structuredContent``.

Each session works in one geomint chat, stored in the chat store: the web app and
``geomint chat --chat ID`` open what an MCP client did, and its figures carry the same
provenance. Resources: each entry (GeoJSON), each figure with its provenance, and the
chat's event log, with a resource-updated notification when a call writes an entry or
mints a figure.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import INVALID_PARAMS

from geomint.agent import MapAgent
from geomint.errors import UsageError
from geomint.mcp._approvals import Asking, Questions
from geomint.models.demo import DEMO_PROMPTS
from geomint.tools import ToolEntry
from geomint.ui import figure_card

__all__ = ["MCP_TOOLS", "ChatFor", "build_server", "mcp_tools"]

_log = logging.getLogger(__name__)

#: The scheme of every resource geomint serves.
SCHEME: Final = "geomint"
_ENTRY_URI: Final = re.compile(r"geomint://chats/([A-Za-z0-9_.:-]{1,200})/entries/([a-z_]+-\d+)")
_FIGURE_URI: Final = re.compile(r"geomint://chats/([A-Za-z0-9_.:-]{1,200})/figures/(v\d+)")
_EVENTS_URI: Final = re.compile(r"geomint://chats/([A-Za-z0-9_.:-]{1,200})/events")
_INSTRUCTIONS: Final = (
    "geomint: geodata tools (places, boundaries, routes, open data with provenance) and an "
    "isolated Python sandbox (analyse_data, process_data) over what this session fetched. "
    "Every number for a person should be a minted figure: mint it in analyse_data's code "
    "(mint.value) and cite it; present_figure shows figures with their sources. Call help "
    "for the tools by topic."
)
#: Tools an MCP client is offered: not those that only move the web page's map, nor one
#: that reads the device's position from a page. Their names, for the docs and the tests.
MCP_TOOLS: Final = "every tool but the map display ones and get_current_location"

#: Which chat a request works in: from the request's context (a stdio process has one;
#: an HTTP session has its own).
ChatFor = Callable[[ServerRequestContext[Any, Any]], str]


def mcp_tools(entries: Mapping[str, ToolEntry[Any]]) -> dict[str, ToolEntry[Any]]:
    """The tools an MCP client is offered, of the agent's: a tool that only changes the web
    page's map has no map to change, and the device's position needs a page."""
    return {
        name: entry
        for name, entry in entries.items()
        if not ("map" in entry.tags and "data" not in entry.tags)
        and "location" not in entry.effects
    }


@dataclass
class _Session:
    agent: MapAgent
    chat_for: ChatFor
    tools: dict[str, ToolEntry[Any]]
    questions: Questions


def build_server(agent: MapAgent, chat_for: ChatFor) -> Server[Any]:
    """An MCP server over ``agent``'s tools, chats and prompts.

    Args:
        agent: Runs the tools and holds the chats.
        chat_for: The chat a request works in.
    """
    state = _Session(
        agent=agent,
        chat_for=chat_for,
        tools=mcp_tools(agent.tool_entries()),
        questions=Questions(),
    )

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[_tool(n, e) for n, e in state.tools.items()])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name not in state.tools:
            return _error(f"no tool {params.name!r} here; list_tools names them")
        chat_id = state.chat_for(ctx)
        approvals = Asking.of(ctx, params, state.questions, chat_id)
        try:
            outcome = await state.agent.call_tool(
                chat_id, params.name, dict(params.arguments or {}), approve=approvals.approve
            )
        except UsageError as exc:
            return _error(str(exc))
        if approvals.asked:
            # Not run: the client asks the person and calls again with the answer.
            return types.InputRequiredResult(
                input_requests=approvals.requests(), request_state=approvals.state()
            )
        for entry_id in outcome.entries:
            await _updated(ctx, _uri(chat_id, "entries", entry_id))
        for figure_id in outcome.figures:
            await _updated(ctx, _uri(chat_id, "figures", figure_id))
        if outcome.entries or outcome.figures:
            await _updated(ctx, _uri(chat_id, "events", None))
            await _notify(ctx.session.send_resource_list_changed())
        text = json.dumps(outcome.result, ensure_ascii=False, default=str)
        structured = outcome.result if isinstance(outcome.result, dict) else None
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=structured,
            is_error=outcome.failed,
        )

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        chat_id = state.chat_for(ctx)
        found: list[types.Resource] = [
            types.Resource(
                name="events",
                uri=_uri(chat_id, "events", None),
                description="this session's chat: its event log, one JSON object a line",
                mime_type="application/x-ndjson",
            )
        ]
        workspace = _workspace(state.agent, chat_id)
        if workspace is not None:
            for entry_id, entry in workspace.entries.items():
                found.append(
                    types.Resource(
                        name=entry_id,
                        title=entry.latest.label or entry_id,
                        uri=_uri(chat_id, "entries", entry_id),
                        description=f"{entry.latest.kind} entry, version {entry.latest.version}",
                        mime_type="application/geo+json",
                    )
                )
            for value in workspace.values:
                found.append(
                    types.Resource(
                        name=value.id,
                        title=value.label,
                        uri=_uri(chat_id, "figures", value.id),
                        description="a minted figure with its provenance",
                        mime_type="application/json",
                    )
                )
        return types.ListResourcesResult(resources=found)

    async def list_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        templates = [
            ("entry", "geomint://chats/{chat_id}/entries/{entry_id}", "application/geo+json"),
            ("figure", "geomint://chats/{chat_id}/figures/{figure_id}", "application/json"),
            ("events", "geomint://chats/{chat_id}/events", "application/x-ndjson"),
        ]
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(name=n, uri_template=u, mime_type=m) for n, u, m in templates
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)
        text, mime = _read(state.agent, state.chat_for(ctx), uri)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
        )

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(name=_slug(p.text), title=p.text, description=p.text)
                for p in DEMO_PROMPTS
                if not p.needs_page
            ]
        )

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        for prompt in DEMO_PROMPTS:
            if _slug(prompt.text) == params.name:
                said = types.TextContent(type="text", text=prompt.text)
                return types.GetPromptResult(
                    description=prompt.text,
                    messages=[types.PromptMessage(role="user", content=said)],
                )
        raise _invalid(f"no prompt {params.name!r}; list_prompts names them")

    return Server(
        "geomint",
        version=_version(),
        instructions=_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def _tool(name: str, entry: ToolEntry[Any]) -> types.Tool:
    return types.Tool(
        name=name,
        description=entry.description,
        input_schema=entry.input_schema.model_json_schema(),
        annotations=types.ToolAnnotations(
            read_only_hint=not entry.changes_chat,
            open_world_hint="network" in entry.effects,
        ),
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps({"error": message}))],
        structured_content={"error": message},
        is_error=True,
    )


async def _updated(ctx: ServerRequestContext[Any, Any], uri: str) -> None:
    await _notify(ctx.session.send_resource_updated(uri))


async def _notify(sending: Awaitable[None]) -> None:
    """Send a notification; a client that cannot take it loses a hint, not the call."""
    try:
        await sending
    except Exception:
        _log.debug("a resource notification was not sent", exc_info=True)


def _workspace(agent: MapAgent, chat_id: str) -> Any:
    try:
        return agent.chats.open(chat_id)
    except Exception:
        return None


def _read(agent: MapAgent, session_chat: str, uri: str) -> tuple[str, str]:
    """A resource's text and media type; only this session's chat is readable."""
    for pattern in (_ENTRY_URI, _FIGURE_URI, _EVENTS_URI):
        found = pattern.fullmatch(uri)
        if found is None:
            continue
        if found[1] != session_chat:
            raise _invalid(f"{uri} is not of this session's chat")
        if pattern is _EVENTS_URI:
            lines = (
                json.dumps(
                    {"seq": e.seq, "run_id": e.run_id, **e.body.model_dump(mode="json")},
                    ensure_ascii=False,
                )
                for e in agent.chats.store.read(session_chat)
            )
            return "\n".join(lines), "application/x-ndjson"
        context = agent.context(session_chat, "read")
        if pattern is _ENTRY_URI:
            try:
                data = context.entry_data(found[2])
            except TypeError:  # a raster: its grid, not GeoJSON
                described = context.entry_raster(found[2]).describe()
                return json.dumps(described, ensure_ascii=False), "application/json"
            except (KeyError, LookupError, UsageError) as exc:
                raise _invalid(f"no entry {found[2]} in this chat") from exc
            return json.dumps(data, ensure_ascii=False), "application/geo+json"
        values = {v.id: v for v in context.workspace.values}
        value = values.get(found[2])
        if value is None:
            raise _invalid(f"no figure {found[2]} in this chat")
        card = figure_card(value).model_dump(mode="json")
        return json.dumps(card, ensure_ascii=False), "application/json"
    raise _invalid(f"{uri} is not a geomint resource (geomint://chats/<id>/...)")


def _invalid(message: str) -> MCPError:
    """An error the client reads as such (invalid params), with what was wrong."""
    return MCPError(INVALID_PARAMS, message)


def _uri(chat_id: str, kind: str, name: str | None) -> str:
    return f"{SCHEME}://chats/{chat_id}/{kind}" + (f"/{name}" if name else "")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("geomint")
    except PackageNotFoundError:
        return "0"


def new_chat_id() -> str:
    """A chat id for a session that named none."""
    return "mcp-" + secrets.token_urlsafe(9)
