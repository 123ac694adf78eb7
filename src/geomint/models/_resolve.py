"""Turn a model spec (a name, a pydantic-ai model, or nothing) into a pydantic-ai ``Model``.

geomint builds the two providers it documents (``openai:`` and ``anthropic:``) itself, so their
endpoint, key and retry count are read the same way everywhere and a missing key is a
:class:`~geomint.errors.UsageError` that names the variable to set. Any other
``provider:name`` goes to pydantic-ai's ``infer_model``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeAlias, TypedDict

from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model, known_model_names
from pydantic_ai.providers import infer_provider_class
from pydantic_ai.settings import ModelSettings

from geomint.errors import UsageError

__all__ = ["MODEL_ENV", "ModelDescription", "ModelSpec", "describe_model", "resolve_model"]

ModelSpec: TypeAlias = str | Model | None
"""What :func:`resolve_model` accepts: ``"provider:name"``, ``"demo"``, a model, or ``None``."""

MODEL_ENV = "GEOMINT_MODEL"
"""The environment variable read when no model is given."""

_DEMO = "demo"
_DEMO_HINT = "To try geomint without a key, run `geomint demo` or use the model 'demo'."


class ModelDescription(TypedDict):
    """What a health endpoint or a banner shows about a model (never its key or URL)."""

    name: str
    provider: str
    demo: bool


@dataclass(frozen=True, kw_only=True)
class _Endpoint:
    """Where one first-class provider reads its settings from, and how its model is built.

    Attributes:
        key_env: The environment variable holding the API key.
        base_url_env: The environment variable holding the endpoint.
        keyless_with_base_url: Whether a custom endpoint may go without a key (local
            OpenAI-compatible servers such as vLLM or Ollama take none).
        build: Builds the model from a name, endpoint, key and default settings.
    """

    key_env: str
    base_url_env: str
    keyless_with_base_url: bool
    build: Callable[[str, str | None, str | None, ModelSettings | None], Model]


def _openai(
    name: str, base_url: str | None, api_key: str | None, settings: ModelSettings | None
) -> Model:
    # Each SDK is imported only by the deployments that use it: they are slow to import.
    from pydantic_ai.models.openai import OpenAIChatModel  # noqa: PLC0415
    from pydantic_ai.providers.openai import OpenAIProvider  # noqa: PLC0415

    if api_key is None:
        # Local servers take any key; the SDK refuses to send none.
        api_key = "not-needed"
    provider = OpenAIProvider(base_url=base_url, api_key=api_key)
    return OpenAIChatModel(name, provider=provider, settings=settings)


def _anthropic(
    name: str, base_url: str | None, api_key: str | None, settings: ModelSettings | None
) -> Model:
    from pydantic_ai.models.anthropic import AnthropicModel  # noqa: PLC0415
    from pydantic_ai.providers.anthropic import AnthropicProvider  # noqa: PLC0415

    provider = AnthropicProvider(base_url=base_url, api_key=api_key)
    return AnthropicModel(name, provider=provider, settings=settings)


_ENDPOINTS: dict[str, _Endpoint] = {
    "openai": _Endpoint(
        key_env="OPENAI_API_KEY",
        base_url_env="OPENAI_BASE_URL",
        keyless_with_base_url=True,
        build=_openai,
    ),
    "anthropic": _Endpoint(
        key_env="ANTHROPIC_API_KEY",
        base_url_env="ANTHROPIC_BASE_URL",
        keyless_with_base_url=False,
        build=_anthropic,
    ),
}

# Prefixes pydantic-ai accepts that its list of known model names does not show; only used to
# list and suggest names, and filtered through pydantic-ai so a dropped one is never offered.
_MORE_PREFIXES = ("azure", "litellm", "ollama", "openrouter", "together", "vllm")


def resolve_model(
    spec: ModelSpec = None,
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    max_retries: int | None = None,
) -> Model:
    """Return the pydantic-ai model a spec names.

    Args:
        spec: ``"openai:<name>"``, ``"anthropic:<name>"``, any other pydantic-ai
            ``"provider:<name>"``, ``"demo"`` for the scripted demo model, a ``Model``
            (returned unchanged), or ``None`` to read ``GEOMINT_MODEL`` (unset means the demo).
        base_url: The endpoint, for ``openai:`` and ``anthropic:`` only; else
            ``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``, else the provider's own.
        api_key: The key, for ``openai:`` and ``anthropic:`` only; else ``OPENAI_API_KEY`` /
            ``ANTHROPIC_API_KEY``.
        max_retries: How many times the provider SDK retries a failed request (``0`` for
            none), for ``openai:`` and ``anthropic:`` only; ``None`` keeps the SDK's default.

    Returns:
        A model to hand to ``pydantic_ai.Agent``. It owns an HTTP client: use it as
        ``async with model:`` to close that client when done.

    Raises:
        UsageError: The spec is malformed or names an unknown provider, the key is missing,
            or an option was given that the chosen model cannot take.
    """
    if max_retries is not None and max_retries < 0:
        raise UsageError(f"max_retries must be 0 or more, not {max_retries}.")
    source = ""
    if spec is None or (isinstance(spec, str) and not spec.strip()):
        spec = _env(MODEL_ENV) or _DEMO
        source = f" (from the {MODEL_ENV} environment variable)"
    options = {"base_url": base_url, "api_key": api_key, "max_retries": max_retries}
    given = [name for name, value in options.items() if value is not None]

    if isinstance(spec, Model):
        if given:
            raise UsageError(
                f"{', '.join(given)} cannot be applied to a model instance; "
                "pass them to the pydantic-ai model and provider when you build it."
            )
        return spec
    spec = spec.strip()
    if spec == _DEMO:
        # The demo makes no requests, so an endpoint or key meant for a real model is moot.
        return _demo()

    prefix, colon, name = spec.partition(":")
    name = name.strip()
    if not colon:
        raise UsageError(_no_prefix_message(spec, source))
    if not name:
        raise UsageError(f"The model {spec!r}{source} names no model after {prefix + ':'!r}.")
    if (endpoint := _ENDPOINTS.get(prefix)) is not None:
        settings = ModelSettings(max_retries=max_retries) if max_retries is not None else None
        url = base_url or _env(endpoint.base_url_env)
        key = api_key or _env(endpoint.key_env)
        if key is None and not (endpoint.keyless_with_base_url and url):
            raise UsageError(
                f"The model {spec!r}{source} needs an API key: set the {endpoint.key_env} "
                f"environment variable (or pass api_key). {_DEMO_HINT}"
            )
        return endpoint.build(name, url, key, settings)

    if not _pydantic_ai_knows(prefix):
        raise UsageError(_unknown_provider_message(prefix, spec, source))
    if given:
        raise UsageError(
            f"{', '.join(given)} apply to 'openai:' and 'anthropic:' models only; for {spec!r}, "
            "build the pydantic-ai model yourself and pass it to resolve_model()."
        )
    try:
        return infer_model(spec)
    except (UserError, ImportError) as exc:
        # pydantic-ai's own keyless hint points at its test model, not at geomint's demo.
        reason = str(exc).split(" To try Pydantic AI", 1)[0]
        raise UsageError(f"Cannot use the model {spec!r}{source}: {reason} {_DEMO_HINT}") from exc


def describe_model(model: Model) -> ModelDescription:
    """Describe a model for a health endpoint or a banner.

    Args:
        model: Any pydantic-ai model; the demo model marks itself with ``is_demo = True``.

    Returns:
        The model's name, its provider (pydantic-ai's ``system``) and whether it is the demo.
    """
    return {
        "name": model.model_name,
        "provider": model.system,
        "demo": bool(getattr(model, "is_demo", False)),
    }


def _demo() -> Model:
    # Imported on first use: a deployment with a real model never loads the demo's script.
    from geomint.models.demo import DemoModel  # noqa: PLC0415

    return DemoModel()


def _env(name: str) -> str | None:
    """An environment variable's value, with unset and blank alike ``None``."""
    value = os.environ.get(name, "").strip()
    return value or None


def _pydantic_ai_knows(prefix: str) -> bool:
    try:
        infer_provider_class(prefix)
    except ValueError:
        return False
    except ImportError:
        # Known, but its optional dependency is missing; infer_model will say which.
        return True
    return True


def _known_prefixes() -> list[str]:
    listed = {n.split(":", 1)[0] for n in known_model_names() if ":" in n}
    others = sorted(
        p
        for p in listed.union(_MORE_PREFIXES)
        if p not in _ENDPOINTS and not p.startswith("gateway/") and _pydantic_ai_knows(p)
    )
    return [_DEMO, *_ENDPOINTS, *others]


def _unknown_provider_message(prefix: str, spec: str, source: str) -> str:
    known = _known_prefixes()
    message = f"Unknown model provider {prefix!r} in {spec!r}{source}."
    if close := difflib.get_close_matches(prefix.lower(), known, n=1, cutoff=0.6):
        message += f" Did you mean {close[0]!r}?"
    return message + f" Known providers: {', '.join(known)}."


def _no_prefix_message(spec: str, source: str) -> str:
    message = f"The model {spec!r}{source} names no provider; write it as 'provider:name'"
    names = [n for n in known_model_names() if n.endswith(f":{spec}") and "/" not in n]
    if names:
        return f"{message}, e.g. {names[0]!r}."
    return f"{message}, e.g. 'openai:gpt-4.1' or 'anthropic:claude-sonnet-4-6', or use 'demo'."
