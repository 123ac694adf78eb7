"""Each way a model call fails, as the sentence the person reads at the end of the turn."""

from __future__ import annotations

import pytest
from pydantic_ai.exceptions import (
    ContentFilterError,
    ModelConnectionError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    UnexpectedModelBehavior,
)

from geomint.models import model_failure, refusal_message


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            ModelHTTPError(401, "gpt-4.1", {"error": {"message": "Incorrect API key provided"}}),
            "The model server refused the API key (HTTP 401: Incorrect API key provided). "
            "Check the key (OPENAI_API_KEY or ANTHROPIC_API_KEY) and the server it is for.",
        ),
        (
            ModelHTTPError(404, "gpt-9", {"error": {"message": "The model does not exist"}}),
            "The model server does not know the model 'gpt-9' (HTTP 404: The model does not "
            "exist). Check GEOMINT_MODEL and the base URL.",
        ),
        (
            ModelHTTPError(429, "gpt-4.1", {"error": {"message": "Slow down"}}),
            "The model server is limiting requests (HTTP 429: Slow down). Wait a minute and "
            "ask again; a higher rate limit or quota from the provider stops it.",
        ),
        (
            ModelHTTPError(529, "claude", {"type": "error", "error": {"message": "Overloaded"}}),
            "The model server is unavailable (HTTP 529: Overloaded). Ask again in a minute.",
        ),
        (
            ModelHTTPError(503, "gpt-4.1", None),
            "The model server is unavailable (HTTP 503). Ask again in a minute.",
        ),
        (
            ModelHTTPError(400, "gpt-4.1", {"error": {"message": "Invalid schema for function"}}),
            "The model server refused the request (HTTP 400: Invalid schema for function).",
        ),
        (
            ModelContextWindowExceededError("gpt-4.1", "too long"),
            "The conversation is too long for the model 'gpt-4.1'. Start a new chat, or use a "
            "model with a longer context.",
        ),
        (
            ModelConnectionError("gpt-4.1", "Connection error."),
            "The connection to the model server broke off before its answer was complete "
            "(Connection error.). What was said so far is kept; ask again to go on.",
        ),
        (
            ContentFilterError("Content filter triggered.", body="[]"),
            "The model declined to answer (it gave no reason). Ask in other words, or ask "
            "something else.",
        ),
        (
            UnexpectedModelBehavior("Received empty model response"),
            "The model's answer could not be used: Received empty model response",
        ),
        (RuntimeError("boom"), "The model failed: RuntimeError: boom"),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, Exception) else "",
)
def test_each_failure_reads_as_what_happened_and_what_to_do(error: Exception, message: str) -> None:
    assert model_failure(error) == message


def test_a_servers_long_message_is_cut_and_the_whole_stays_short() -> None:
    error = ModelHTTPError(500, "gpt-4.1", {"error": {"message": "x " * 5_000}})
    said = model_failure(error)
    assert len(said) < 500
    assert "…" in said and said.endswith("ask again in a moment.")


def test_a_refusal_quotes_the_model() -> None:
    assert refusal_message("Not that.") == (
        "The model declined to answer, saying: “Not that.” Ask in other words, or ask "
        "something else."
    )
