"""resolve_model turns a spec or the environment into a model, and says clearly when it cannot."""

from __future__ import annotations

import importlib.util

import pytest
from pydantic_ai.models import Model
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel
from pydantic_ai.models.test import TestModel

import geomint.models
from geomint.errors import UsageError
from geomint.models import describe_model, resolve_model


def test_public_surface() -> None:
    assert sorted(geomint.models.__all__) == [
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


# --- what a spec resolves to -------------------------------------------------------------


@pytest.mark.parametrize("env", [None, "", "   ", "demo"])
def test_no_spec_reads_geomint_model_and_defaults_to_the_demo(
    env: str | None, demo_model: type[Model], monkeypatch: pytest.MonkeyPatch
) -> None:
    if env is not None:
        monkeypatch.setenv("GEOMINT_MODEL", env)
    model = resolve_model()
    assert isinstance(model, demo_model)
    assert describe_model(model)["demo"] is True


def test_demo_by_name_needs_no_key(demo_model: type[Model]) -> None:
    assert isinstance(resolve_model("demo"), demo_model)
    # An endpoint meant for a real model does not stop the demo (it makes no requests).
    assert isinstance(resolve_model("demo", api_key="unused"), demo_model)


def test_no_spec_reads_a_real_model_from_geomint_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEOMINT_MODEL", "anthropic:claude-sonnet-4-6")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "from-env")
    model = resolve_model()
    assert isinstance(model, AnthropicModel)
    assert describe_model(model) == {
        "name": "claude-sonnet-4-6",
        "provider": "anthropic",
        "demo": False,
    }


def test_a_model_instance_is_returned_unchanged() -> None:
    model = TestModel()
    assert resolve_model(model) is model


@pytest.mark.parametrize(
    ("spec", "cls", "provider"),
    [
        ("openai:gpt-4.1", OpenAIChatModel, "openai"),
        ("anthropic:claude-sonnet-4-6", AnthropicModel, "anthropic"),
    ],
)
def test_first_class_providers(spec: str, cls: type[Model], provider: str) -> None:
    model = resolve_model(spec, api_key="k")
    assert type(model) is cls
    assert describe_model(model) == {
        "name": spec.split(":", 1)[1],
        "provider": provider,
        "demo": False,
    }


def test_openai_means_chat_completions_not_pydantic_ais_default() -> None:
    # pydantic-ai v2 maps the bare "openai:" prefix to the Responses API; geomint keeps Chat
    # Completions, which every OpenAI-compatible server speaks. The Responses API is opt-in.
    assert type(resolve_model("openai:gpt-4.1", api_key="k")) is OpenAIChatModel


def test_other_prefixes_go_to_pydantic_ai(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    model = resolve_model("openai-responses:gpt-4.1")
    assert type(model) is OpenAIResponsesModel
    assert model.model_name == "gpt-4.1"


@pytest.mark.parametrize(
    ("spec", "env", "url"),
    [
        ("openai:gpt-4.1", "OPENAI_BASE_URL", "http://127.0.0.1:9/v1/"),
        ("anthropic:claude-sonnet-4-6", "ANTHROPIC_BASE_URL", "http://127.0.0.1:9/"),
    ],
)
def test_base_url_argument_wins_over_the_environment(
    spec: str, env: str, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(env, "http://127.0.0.1:1/")
    assert resolve_model(spec, api_key="k").base_url == "http://127.0.0.1:1/"
    assert resolve_model(spec, api_key="k", base_url=url).base_url == url


# --- what it refuses, and how it says so -------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "variable"),
    [("openai:gpt-4.1", "OPENAI_API_KEY"), ("anthropic:claude-sonnet-4-6", "ANTHROPIC_API_KEY")],
)
def test_a_missing_key_names_the_variable_and_the_demo(spec: str, variable: str) -> None:
    with pytest.raises(UsageError) as caught:
        resolve_model(spec)
    message = str(caught.value)
    assert message == (
        f"The model {spec!r} needs an API key: set the {variable} environment variable "
        "(or pass api_key). To try geomint without a key, run `geomint demo` "
        "or use the model 'demo'."
    )


def test_a_missing_key_says_when_the_spec_came_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GEOMINT_MODEL", "openai:gpt-4.1")
    with pytest.raises(UsageError, match="from the GEOMINT_MODEL environment variable"):
        resolve_model()


def test_a_blank_key_counts_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "  ")
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        resolve_model("anthropic:claude-sonnet-4-6")


def test_a_local_openai_compatible_server_needs_no_key() -> None:
    model = resolve_model("openai:llama3.2", base_url="http://127.0.0.1:11434/v1")
    assert model.base_url == "http://127.0.0.1:11434/v1/"
    # Anthropic has no keyless local servers: the key is still required.
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        resolve_model("anthropic:claude-sonnet-4-6", base_url="http://127.0.0.1:9")


def test_an_unknown_provider_suggests_the_near_miss_and_lists_the_known() -> None:
    with pytest.raises(UsageError) as caught:
        resolve_model("opnai:gpt-4.1")
    message = str(caught.value)
    assert message.startswith(
        "Unknown model provider 'opnai' in 'opnai:gpt-4.1'. Did you mean 'openai'? "
        "Known providers: demo, openai, anthropic, "
    )
    assert "ollama" in message
    assert "groq" in message


def test_an_unknown_provider_with_no_near_miss_is_not_guessed() -> None:
    with pytest.raises(UsageError) as caught:
        resolve_model("zzqx:model")
    assert "Did you mean" not in str(caught.value)
    assert "Known providers: demo, openai, anthropic" in str(caught.value)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("gpt-4.1", "The model 'gpt-4.1' names no provider; write it as 'provider:name'"),
        ("openai:", "The model 'openai:' names no model after 'openai:'."),
    ],
)
def test_a_malformed_spec(spec: str, expected: str) -> None:
    with pytest.raises(UsageError, match="^" + expected.replace("(", r"\(").replace(".", r"\.")):
        resolve_model(spec)


def test_options_that_cannot_be_applied_are_refused_not_ignored() -> None:
    with pytest.raises(UsageError, match="base_url cannot be applied to a model instance"):
        resolve_model(TestModel(), base_url="http://127.0.0.1:9")
    with pytest.raises(UsageError, match="apply to 'openai:' and 'anthropic:' models only"):
        resolve_model("openai-responses:gpt-4.1", api_key="k")
    with pytest.raises(UsageError, match="max_retries must be 0 or more"):
        resolve_model("openai:gpt-4.1", api_key="k", max_retries=-1)


def test_pydantic_ais_own_errors_become_usage_errors() -> None:
    # A pydantic-ai provider without its key: pydantic-ai's hint is replaced by geomint's.
    with pytest.raises(UsageError) as caught:
        resolve_model("deepseek:deepseek-chat")
    message = str(caught.value)
    assert message.startswith("Cannot use the model 'deepseek:deepseek-chat': ")
    assert "DEEPSEEK_API_KEY" in message
    assert "Pydantic AI without" not in message
    assert message.endswith("run `geomint demo` or use the model 'demo'.")


@pytest.mark.skipif(importlib.util.find_spec("groq") is not None, reason="groq is installed")
def test_a_provider_whose_extra_is_missing_says_what_to_install() -> None:
    with pytest.raises(UsageError, match=r"pydantic-ai-slim\[groq\]"):
        resolve_model("groq:llama-3.3-70b-versatile")


def test_usage_errors_are_value_errors() -> None:
    # Callers that validate input generically (typer, pydantic) can catch ValueError.
    with pytest.raises(ValueError, match="Unknown model provider"):
        resolve_model("nope:x")


# --- describe_model ------------------------------------------------------------------------


def test_describe_model_reads_the_demo_marker() -> None:
    class Marked(TestModel):
        is_demo = True

    assert describe_model(TestModel()) == {"name": "test", "provider": "test", "demo": False}
    assert describe_model(Marked())["demo"] is True
