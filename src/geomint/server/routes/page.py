"""The page and what it loads: ``GET /`` and ``/chat/<id>``, ``/api/health``,
``/api/examples`` (the questions the page offers), the bundled
streets (``/basemap/streets.geojson``) and the static files under ``/static``.

Static files (the vendored front end and the offline basemap) are served with HTTP Range
support, which PMTiles needs.
"""

from __future__ import annotations

import asyncio
import functools
import gzip
import hmac
from pathlib import Path
from typing import Any, Final

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles

from geomint import __version__, audit
from geomint.agent import MapAgent
from geomint.intake.formats import SUFFIXES
from geomint.models.demo import DEMO_PROMPTS
from geomint.providers import bundled
from geomint.server.guards import TOKEN_COOKIE
from geomint.server.routes._deps import Agent, ChatId, served

__all__ = ["router"]

_STATIC: Final = Path(__file__).parent.parent / "static"
#: The page runs only its own scripts and talks only to this server (workers come from
#: blob: URLs MapLibre makes); nothing a chat shows can load or run anything else. The
#: origins of basemap styles the application registered (``MapStyle.origins``) are
#: added to ``connect-src`` and ``img-src``, and nothing else.
_CSP: Final = (
    "default-src 'self'; script-src 'self'; worker-src 'self' blob:; "
    "img-src 'self' data: blob:{origins}; style-src 'self'; "
    "connect-src 'self'{origins}; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
_PAGE_HEADERS: Final = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-cache",
}


def _headers(agent: MapAgent) -> dict[str, str]:
    origins = sorted({o for style in agent.settings.map_styles for o in style.origins})
    csp = _CSP.format(origins="".join(f" {o}" for o in origins))
    return {"content-security-policy": csp, **_PAGE_HEADERS}


router = APIRouter()


def _page(request: Request) -> Response:
    token = served(request).token
    given = request.query_params.get("token")
    if token is None or given is None:
        return FileResponse(_STATIC / "index.html", headers=_headers(served(request).agent))
    # The link `geomint serve` prints carries the token once: it becomes a cookie the
    # page's API calls send (HttpOnly: no script reads it), and leaves the address bar.
    if not hmac.compare_digest(given.encode(), token.encode()):
        return JSONResponse({"error": "that access token is not this server's"}, 401)
    response = RedirectResponse(request.url.remove_query_params("token").path, 303)
    response.set_cookie(
        TOKEN_COOKIE, token, httponly=True, samesite="strict", path="/", max_age=30 * 86400
    )
    return response


@router.get("/", include_in_schema=False)
async def page(request: Request) -> Response:
    """The page, opening a new chat."""
    return _page(request)


@router.get("/chat/{chat_id}", include_in_schema=False)
async def chat_page(chat_id: ChatId, request: Request) -> Response:
    """The page, opening the chat ``chat_id``."""
    return _page(request)


@router.get("/api/health")
async def health(request: Request, agent: Agent) -> dict[str, Any]:
    """The version, the store, the sandbox, the model, what an upload may be, and the
    security events so far."""
    try:
        agent.chats.store.chat_ids()
        store = "ok"
    except Exception as exc:  # the health check reports, it does not fail
        store = f"unavailable: {type(exc).__name__}"
    return {
        "status": "ok" if store == "ok" else "degraded",
        "version": __version__,
        "store": store,
        "sandbox": agent.code_execution_mode,
        "model": agent.model_info,
        "max_upload_bytes": served(request).max_upload_bytes,
        # What the page's file picker offers: the endings intake reads.
        "upload_suffixes": sorted(SUFFIXES),
        "security": audit.counts(),
    }


@router.get("/api/examples")
async def examples(agent: Agent) -> dict[str, list[str]]:
    """The example questions the page offers: with the scripted demo model, every prompt
    it knows (it answers nothing else); none with a real model, which answers anything."""
    demo = agent.model_info["demo"]
    return {"examples": [p.text for p in DEMO_PROMPTS] if demo else []}


@router.get("/basemap/streets.geojson", include_in_schema=False)
async def streets(request: Request) -> Response:
    """The bundled Helsinki streets, drawn under the entries (gzipped: 670 -> 90 KB)."""
    headers = {"cache-control": "public, max-age=86400", "vary": "accept-encoding"}
    if "gzip" in request.headers.get("accept-encoding", ""):
        body = await asyncio.to_thread(_gzipped_streets)
        headers["content-encoding"] = "gzip"
    else:
        body = bundled.street_lines()
    return Response(body, media_type="application/geo+json", headers=headers)


@functools.cache
def _gzipped_streets() -> bytes:
    return gzip.compress(bundled.street_lines(), mtime=0)


if _STATIC.is_dir():
    router.mount("/static", StaticFiles(directory=_STATIC), name="static")
