"""Keep secrets out of text: URLs, messages and bodies fit to print or log.

An API key must not reach a log line, an error a model reads or a cache key, however it
was sent: as a query parameter, a header, or quoted back in a server's error page. These
helpers replace secrets (as written or percent-encoded) with ``***``, and hide the values
of query parameters and headers whose names say they are credentials.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Final
from urllib.parse import quote, quote_plus, unquote_plus

import httpx

__all__ = ["SENSITIVE_HEADERS", "SENSITIVE_PARAMS", "printable", "redact", "shown_url"]

#: Query parameters whose values are credentials, whatever the caller declared.
SENSITIVE_PARAMS: Final = frozenset({"key", "apikey", "api_key", "access_token", "token"})
#: Request headers (lowercase) whose values are credentials.
SENSITIVE_HEADERS: Final = frozenset(
    {"authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"}
)


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every secret in ``text``, as written or percent-encoded, with ``***``.

    >>> redact("GET /search?q=x&key=s3cr%2Ft", ["s3cr/t"])
    'GET /search?q=x&key=***'
    """
    forms = {
        form
        for secret in secrets
        if secret
        for form in (secret, quote(secret, safe=""), quote_plus(secret), quote(secret))
    }
    for form in sorted(forms, key=len, reverse=True):
        text = text.replace(form, "***")
    return text


def shown_url(url: str, secrets: Iterable[str] = ()) -> str:
    """Return a URL fit to print: no user name or password, no secret, and not endless.

    A query parameter whose value is one of ``secrets``, or whose name is a credential's
    (``key``, ``apikey``, ``api_key``, ``access_token``, ``token``), shows ``***``.

    >>> shown_url("https://api.example.com/geocode?q=Lyon&key=abc123")
    'https://api.example.com/geocode?q=Lyon&key=***'
    """
    secrets = tuple(secrets)
    with contextlib.suppress(httpx.InvalidURL):
        parsed = httpx.URL(url)
        if parsed.userinfo:
            url = str(parsed.copy_with(userinfo=b""))
    head, mark, query = url.partition("?")
    if mark:
        query, hash_mark, fragment = query.partition("#")
        pairs = []
        for pair in query.split("&"):
            name, equals, value = pair.partition("=")
            named = unquote_plus(name).lower() in SENSITIVE_PARAMS
            hidden = equals and value and (named or unquote_plus(value) in secrets)
            pairs.append(f"{name}=***" if hidden else pair)
        url = f"{head}?{'&'.join(pairs)}{hash_mark}{fragment}"
    url = redact(url, secrets)
    return url if len(url) <= 300 else url[:300] + "..."


def printable(data: bytes, limit: int = 80, secrets: Iterable[str] = ()) -> str:
    """Show the start of a body as one printable line of at most ``limit`` characters.

    Secrets are replaced by ``***`` before anything is cut, so no part of one shows.

    >>> printable(b'<html>\\n  <body>oops</body>', 20)
    '<html> <body>oops...'
    """
    secrets = tuple(secret for secret in secrets if secret)
    longest = max((len(secret) for secret in secrets), default=0)
    window = limit * 4 + 3 * longest
    text = redact(data[:window].decode("utf-8", "replace"), secrets)
    if len(data) > window and longest:
        text = text[:-longest]  # the cut may have left the start of a secret at the end
    text = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
