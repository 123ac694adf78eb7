"""What the web connectors share: one way out through :mod:`geomint.http`, and one
reading of its failures as :class:`~geomint.sources.connectors.base.SourceFetchError`.

Each connector says in its own words what a service's error *means* (an unknown
indicator, a private dataset); the failures every service shares (a timeout, a 429,
a body too large, a server down) are told here, once, the same way for all of them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Final

from pydantic import JsonValue

from geomint.errors import UsageError
from geomint.http import Fetched, FetchError, ParamValue, RequestPolicy, printable, request
from geomint.sources.connectors.base import FetchErrorKind, SourceFetchError
from geomint.sources.model import Source

__all__ = [
    "MAX_UNIT_CHARS",
    "DenseAnswerError",
    "capped",
    "clipped",
    "config_text",
    "fetch_error",
    "get",
    "head_of",
    "json_answer",
    "now",
    "option_values",
    "short_text",
    "trusting",
    "unit_text",
]

_REFUSED_CODES: Final = frozenset({"scheme", "address", "vetoed", "redirects"})
# No "." (SDMX's key separator: one value would fill several dimensions) and no "+"
# (SDMX's "or"): a value is one code.
_SAFE_CODE: Final = re.compile(r"[A-Za-z0-9_@\-]{1,60}")
# An empty list costs the host some 64 bytes for 3 of text, so 8 MB of `[],` decodes to
# hundreds of MB; honest JSON opens a list or an object every 6 bytes at the densest.
_BYTES_PER_CONTAINER: Final = 6
_MIN_CONTAINERS: Final = 10_000
MAX_UNIT_CHARS: Final = 40
"""The longest unit of measure a table carries (``"current US$"``, ``"people"``)."""


class DenseAnswerError(ValueError):
    """An answer denser in lists and objects than honest JSON of its size."""


def json_answer(body: bytes) -> object:
    """A service's JSON answer, parsed here only when it is not denser in lists and
    objects than honest JSON is: decoding costs the host near what honest text costs.

    Raises:
        DenseAnswerError: It opens more lists and objects than its size allows.
        ValueError: It is not JSON.
        RecursionError: It nests deeper than Python's parser goes.
    """
    containers = body.count(b"[") + body.count(b"{")
    if containers > max(_MIN_CONTAINERS, len(body) // _BYTES_PER_CONTAINER):
        raise DenseAnswerError(
            "it nests deeper than geomint reads, or opens more lists and objects than any "
            f"honest answer of its size ({containers:,} in {len(body):,} bytes)"
        )
    return json.loads(body)


def now() -> datetime:
    """The time a fetch is stamped with: now, in UTC."""
    return datetime.now(UTC)


def config_text(source: Source, key: str, default: str | None = None) -> str:
    """Read a text setting of ``source.config``.

    Raises:
        UsageError: The setting is missing (and has no default) or is not text: the
            registry row is wrong, which is the developer's to fix.
    """
    value: JsonValue = source.config.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise UsageError(
            f"source {source.id!r} (connector {source.connector!r}) needs config[{key!r}] "
            f"as non-empty text, and has {value!r}; fix its registry row"
        )
    return value.strip()


def trusting(policy: RequestPolicy, base_url: str) -> RequestPolicy:
    """The caller's policy with the source's own base URL trusted.

    A registry row is written by the developer or the operator, like a provider's base
    URL, so its host may be private (a test's loopback server, an intranet portal).
    Any other host, such as a file a catalogue links to, keeps the public-only guard.
    """
    trusted = tuple(dict.fromkeys((*policy.trusted_base_urls, base_url)))
    return dataclasses.replace(policy, trusted_base_urls=trusted)


def capped(policy: RequestPolicy, max_bytes: int) -> RequestPolicy:
    """The policy with its ``max_bytes`` lowered to ``max_bytes`` (never raised).

    A connector that parses an answer in this process caps it below what the caller
    allows for a file it only stores; the caller's policy object is left as it was.
    """
    if policy.max_bytes <= max_bytes:
        return policy
    return dataclasses.replace(policy, max_bytes=max_bytes)


def short_text(value: object, limit: int) -> str | None:
    """``value`` as stripped printable text of at most ``limit`` characters, or None.

    For text a service sent that a table or a message carries: anything longer, not
    text, empty or with control characters is dropped rather than shown.
    """
    if not isinstance(value, str) or len(value) > limit * 4:
        return None
    text = value.strip()
    if not text or len(text) > limit or not text.isprintable():
        return None
    return text


def clipped(value: object, limit: int | None = None) -> str | None:
    """Stripped text, clipped to ``limit`` characters (with "..."), or None when empty.

    For a service's prose a model reads (a description, a publisher's long name): kept
    in part rather than dropped, unlike :func:`short_text`.
    """
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if limit is not None and len(text) > limit:
        return text[: limit - 3].rstrip() + "..."
    return text


def unit_text(value: object) -> str | None:
    """A unit of measure a table may carry: printable, at most :data:`MAX_UNIT_CHARS`
    characters, or None (the registry row's profile states the unit otherwise)."""
    return short_text(value, MAX_UNIT_CHARS)


def get(
    url: str,
    *,
    policy: RequestPolicy,
    what: str,
    params: Mapping[str, ParamValue] | None = None,
    headers: Mapping[str, str] | None = None,
) -> Fetched:
    """Send one ``GET`` through :func:`geomint.http.request`, told as ``what`` if it fails.

    Raises:
        SourceFetchError: It timed out, was rate limited, was too large, or the service
            failed or refused it. An error status is reported by :func:`fetch_error`;
            a connector that reads a service's error bodies catches ``FetchError``
            itself and calls :func:`request` directly instead.
    """
    try:
        return request("GET", url, params=params, headers=headers, policy=policy)
    except FetchError as error:
        raise fetch_error(error, what) from None


def fetch_error(error: FetchError, what: str) -> SourceFetchError:
    """Tell a failed request to ``what`` (``"the World Bank API"``) as a fetch error.

    A 404 is ``not_found``; every other error status, a refused address or a failed
    connection is ``unavailable``. Connectors that know what a service's 400 or 403
    means say so before falling back on this.
    """
    reason = error.reason if error.reason is not None else str(error)
    code: FetchErrorKind
    if error.code == "timeout":
        code = "timeout"
        message = (
            f"{what} did not answer in time ({reason}); try again later, or ask for fewer "
            "units or years"
        )
    elif error.code == "rate_limited":
        code = "rate_limited"
        wait = (
            f"; try again in {math.ceil(error.retry_after)} s"
            if error.retry_after is not None
            else "; try again later"
        )
        message = f"{what} limits how often it may be asked and refused this request{wait}"
    elif error.code == "too_large":
        code = "unavailable"
        message = f"{what} sent more than geomint accepts ({reason}); ask for fewer units or years"
    elif error.code == "status" and error.status == 404:
        code = "not_found"
        said = f" ({error.detail})" if error.detail else ""
        message = f"{what} has nothing at {error.url}{said}"
    elif error.code == "malformed":
        code = "malformed"
        message = f"{what} sent an answer geomint cannot read: {reason}"
    elif error.code in _REFUSED_CODES:  # geomint's guard, not the service, said no
        code = "unavailable"
        message = f"{what} was not fetched: {reason}"
    else:  # a failed connection, an error status, a broken encoding
        code = "unavailable"
        message = f"{what} failed: {reason}; try again later"
    return SourceFetchError(code, message, retry_after=error.retry_after, url=error.url)


def head_of(body: bytes) -> str:
    """The start of a body as one printable line, for a message about it."""
    head = printable(body, 80)
    return f"it starts {head!r}" if head else "it is empty"


def option_values(source: Source, key: str, given: str | tuple[str, ...]) -> tuple[str, ...]:
    """The values given for filter ``key``, each checked against what the source published.

    Raises:
        SourceFetchError: ``refused_filter`` for a value outside the published options,
            or one that cannot be a code (spaces, slashes): the message lists the options.
    """
    values = (given,) if isinstance(given, str) else tuple(given)
    declared = source.filter_key(key)
    options = declared.options if declared is not None else ()
    for value in values:
        if (options and value not in options) or not _SAFE_CODE.fullmatch(value):
            listed = f"; it takes {', '.join(options)}" if options else ""
            raise SourceFetchError(
                "refused_filter",
                f"{source.title} has no {key} {value!r}{listed}",
                key=key,
                options=options,
            )
    return values
