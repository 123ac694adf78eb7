"""The web app: a chat beside a live map. So far the API (health, chats, a chat turn
streamed in the Vercel AI UI-message protocol) and the vendored front-end assets."""

from __future__ import annotations

from geomint.server.app import create_app

__all__ = ["create_app"]
