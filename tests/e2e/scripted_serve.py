"""A test-only ``geomint serve`` whose model calls ``execute_map_code`` with code the test
chose: a hostile body (tiles from another host), an entry restyled, and a change that
builds on the one before. Run by :func:`tests.e2e.web_server.running_server` with
``module="tests.e2e.scripted_serve"``, with the same options as ``geomint serve``.

It counts as the demo model (``is_demo``), so a new chat starts with the Helsinki places
(``places-1``) and parks; generation requests (a retry of refused code) go to the demo's
own second model, which writes nothing for these intents (but the hostile one, for which
the hostile body is written again on every retry).
"""

from __future__ import annotations

import argparse
from typing import Final

import uvicorn
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from geomint import create_map_agent
from geomint.models import CODEGEN_MARKER
from geomint.models.demo import DemoModel, scripted_model
from geomint.server import create_app
from geomint.server.app import TurnLimiter

__all__ = ["HOSTILE", "PROMPTS"]

#: Raster tiles from another host: map code adds no URLs, so this never becomes a diff.
HOSTILE: Final = """\
mapview.add_source("sat", {"type": "raster", "tiles": ["https://evil.example/{z}/{x}/{y}.png"]})
mapview.add_layer({"id": "sat", "type": "raster", "source": "sat"})"""
#: geomint's own layer restyled, and a ring layer added over the same entry.
RESTYLE: Final = """\
mapview.set_paint_property("places-1-circle", "circle-color", "#ff00ff")
mapview.set_paint_property("places-1-circle", "circle-radius", 9)
mapview.add_layer({"id": "places-ring", "type": "circle", "source": "places-1",
                   "paint": {"circle-radius": 16, "circle-color": "rgba(0, 0, 0, 0)",
                             "circle-stroke-color": "#ff00ff", "circle-stroke-width": 2}},
                  before="places-1-circle")"""
#: A change to what RESTYLE added: it builds on it.
WIDER: Final = 'mapview.set_paint_property("places-ring", "circle-radius", 24)'

#: An entry layer moved to the top and a new layer put under it, in that order: the new
#: layer's ``before`` names a layer that moves in the same change.
RESTACK: Final = """\
mapview.move_layer("places-1-fill")
mapview.add_layer({"id": "under-fill", "type": "circle", "source": "places-1",
                   "paint": {"circle-radius": 4}}, before="places-1-fill")"""

#: ``question keyword -> execute_map_code arguments``.
PROMPTS: Final = {
    "evil tiles": {"intent": "satellite imagery under the places", "code": HOSTILE},
    "pink places": {
        "intent": "pink places with a ring",
        "entry_ids": ["places-1"],
        "code": RESTYLE,
    },
    "wider ring": {"intent": "a wider ring", "entry_ids": ["places-1"], "code": WIDER},
    "restack": {"intent": "the fills on top", "entry_ids": ["places-1"], "code": RESTACK},
}

_DEMO = DemoModel()


def _newest_question(messages: list[ModelMessage]) -> tuple[str, bool]:
    """The newest user prompt, and whether a tool has answered since."""
    answered = False
    for message in reversed(messages):
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart | RetryPromptPart):
                answered = True
            if isinstance(part, UserPromptPart):
                return str(part.content), answered
    return "", answered


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Pick execute_map_code, call it once with the scripted code, then say so."""
    first = messages[0] if messages else None
    if isinstance(first, ModelRequest) and any(
        isinstance(p, SystemPromptPart) and p.content.startswith(CODEGEN_MARKER)
        for p in first.parts
    ):
        asked = [p.content for p in first.parts if isinstance(p, UserPromptPart)]
        if asked and "satellite" in str(asked[-1]).split("\n", 1)[0]:
            # The second model insists on the hostile body, retry after retry.
            return ModelResponse(parts=[TextPart(f"```python\n{HOSTILE}\n```")])
        return _DEMO.function(messages, info)  # type: ignore[misc]
    if info.output_tools and not info.function_tools:
        pick = {"tools": ["execute_map_code"], "scopes": {}}
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, pick)])
    question, answered = _newest_question(messages)
    arguments = next((a for k, a in PROMPTS.items() if k in question.lower()), None)
    if arguments is None or answered:
        return ModelResponse(parts=[TextPart("Done, as far as the map code went.")])
    return ModelResponse(parts=[ToolCallPart("execute_map_code", arguments)])


class ScriptedMapModel(FunctionModel):
    """The script above, counted as the demo (so a new chat has the demo's entries)."""

    is_demo: Final = True

    def __init__(self) -> None:
        twin = scripted_model(respond, name="scripted-map-code")
        super().__init__(respond, stream_function=twin.stream_function, model_name="scripted")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("serve", nargs="?")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--approve", action="append", default=[])
    parser.add_argument("--turns-per-minute", type=float, default=600.0)
    parser.add_argument("--no-open", action="store_true")
    args = parser.parse_args()
    agent = create_map_agent(
        ScriptedMapModel(),
        store=args.store,
        code_execution={"mode": "auto"},
        require_approval=args.approve,
    )
    try:
        agent.ready()
        app = create_app(
            agent,
            limiter=TurnLimiter(per_minute=args.turns_per_minute),
            allowed_hosts=["localhost", "127.0.0.1", args.host],
        )
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False)
    finally:
        agent.close()


if __name__ == "__main__":
    main()
