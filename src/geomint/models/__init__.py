"""The seam to language models: pydantic-ai underneath, geomint's own names on top.

Everything in geomint that needs a model asks :func:`resolve_model` for one, so a change in
pydantic-ai's model API is absorbed here rather than in every caller. A spec is
``"openai:<name>"`` or ``"anthropic:<name>"`` (built by geomint, reading ``OPENAI_API_KEY`` /
``ANTHROPIC_API_KEY`` and the matching ``*_BASE_URL``), any other pydantic-ai
``"provider:<name>"``, ``"demo"`` for the scripted model that needs no key, or ``None`` to read
``GEOMINT_MODEL``. A tool that asks a model of its own (map code, discovery's shortlist)
does it through :func:`second_call`, counted against the turn's :class:`TurnBudget`.

Example:
    >>> from geomint.models import describe_model, resolve_model
    >>> model = resolve_model(
    ...     "openai:gpt-4.1", base_url="http://127.0.0.1:8000/v1", api_key="sk-local"
    ... )
    >>> describe_model(model)
    {'name': 'gpt-4.1', 'provider': 'openai', 'demo': False}

    Run it with ``async with model:`` around the agent runs, so its HTTP client is closed.
"""

from __future__ import annotations

from geomint.models._demo_discovery import DISCOVERY_MARKER
from geomint.models._demo_mapcode import CODEGEN_MARKER
from geomint.models._failures import ARGUMENT_RETRIES, model_failure, refusal_message
from geomint.models._resolve import (
    MODEL_ENV,
    ModelDescription,
    ModelSpec,
    describe_model,
    resolve_model,
)
from geomint.models._second import TurnBudget, Usage, second_call

__all__ = [
    "ARGUMENT_RETRIES",
    "CODEGEN_MARKER",
    "DISCOVERY_MARKER",
    "MODEL_ENV",
    "ModelDescription",
    "ModelSpec",
    "TurnBudget",
    "Usage",
    "describe_model",
    "model_failure",
    "refusal_message",
    "resolve_model",
    "second_call",
]
