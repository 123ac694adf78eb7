"""Bring your own data: ``add_byod_layer`` (through intake) and ``update_byod_display``.

A layer comes from a URL (the guarded HTTP client: public addresses only, size and time
caps), from inline GeoJSON, or from a file inside a folder the application allowed
(``ToolSettings.byod_dirs``): the model never reads arbitrary files of the host.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, model_validator

from geomint import audit
from geomint.intake import IntakeError, RasterLayer, is_tiff
from geomint.intake import aload as intake_aload
from geomint.intake import aload_raster as intake_aload_raster
from geomint.provenance import LICENCE_NOT_STATED, Provenance
from geomint.providers import bundled
from geomint.state import MessageAdded
from geomint.tools._styling import DRAWN
from geomint.tools.context import ToolContext
from geomint.tools.display import DisplayInput, change_display
from geomint.tools.effects import EffectRefusedError
from geomint.tools.registry import ToolEntry
from geomint.tools.results import ToolError

__all__ = ["ADD_BYOD_LAYER", "UPDATE_BYOD_DISPLAY", "allowed_path"]


class AddByodInput(BaseModel):
    """Arguments of ``add_byod_layer``: exactly one of url, data, path."""

    model_config = ConfigDict(extra="forbid")

    label: str = Field(min_length=1, max_length=200, description="A name for the layer.")
    url: str | None = Field(default=None, max_length=2_000, description="An http(s) URL.")
    data: dict[str, Any] | None = Field(default=None, description="Inline GeoJSON.")
    path: str | None = Field(
        default=None, max_length=1_000, description="A file in a folder the app allows."
    )
    show: bool = True
    replace: str | None = Field(
        default=None,
        pattern=r"^byod-(0|[1-9][0-9]*)$",
        description="Write a new version of this byod entry instead of a new entry.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> AddByodInput:
        given = [n for n in ("url", "data", "path") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(
                f"pass exactly one of url, data or path; got {', '.join(given) or 'none'}"
            )
        return self


def allowed_path(path: str, folders: tuple[Path, ...]) -> Path:
    """Resolve ``path`` (symlinks followed) and return it when it lies in an allowed folder.

    Raises:
        ToolError: It lies outside every allowed folder, or none are allowed.
    """
    if not folders:
        raise ToolError(
            "reading files is switched off for this agent",
            hint="pass the layer as a url or as inline data instead",
        )
    if "\x00" in path:
        raise ToolError("the path holds a NUL character", hint="pass a plain file name")
    candidate = Path(path)
    resolved = [
        (candidate if candidate.is_absolute() else folder / candidate).resolve()
        for folder in folders
    ]
    for folder, target in zip(folders, resolved, strict=True):
        if target.is_relative_to(folder.resolve()) and target.is_file():
            return target
    # The folders are named, not located: the model has no use for the host's paths.
    names = ", ".join(sorted({f.name or "/" for f in folders}))
    raise ToolError(
        f"{path[:200]!r} is not a file in the folders this agent may read",
        hint=f"pass a file name relative to an allowed folder ({names})",
    )


def read_allowed(target: Path, folders: tuple[Path, ...], max_bytes: int) -> bytes:
    """Read a file :func:`allowed_path` accepted, checking again on the open descriptor.

    The path was checked before it is opened, so a symlink swapped in between could point
    elsewhere: the file is opened without following a final symlink, and the descriptor's
    real path and type are checked before a byte is read.

    Raises:
        ToolError: It changed into something outside the folders, or is not a regular
            file, or is larger than ``max_bytes``.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        raise ToolError(f"{target.name!r} cannot be opened ({exc.strerror})") from None
    try:
        info = os.fstat(fd)
        real = Path(os.readlink(f"/proc/self/fd/{fd}"))
        if not stat.S_ISREG(info.st_mode) or not any(
            real.is_relative_to(folder.resolve()) for folder in folders
        ):
            raise ToolError(f"{target.name!r} is not a file in the folders this agent may read")
        if info.st_size > max_bytes:
            raise ToolError(
                f"{target.name!r} is {info.st_size:,} bytes, over the {max_bytes:,}-byte limit"
            )
        chunks, size = [], 0
        while size <= max_bytes and (chunk := os.read(fd, 1 << 20)):
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise ToolError(f"{target.name!r} grew past the {max_bytes:,}-byte limit")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _provenance(source: str, target: Path | None, ctx: ToolContext) -> Provenance:
    if target is not None:
        for name, bundled_path in bundled.files().items():
            if target == bundled_path.resolve():
                return Provenance(**bundled.source(name))
    digest = hashlib.sha256(source.encode()).hexdigest()[:12]
    # The title says where the data came from, in code's words: the model's label names
    # the entry, but it must not be able to name a publisher or a licence as the source.
    return Provenance(
        source_id=f"byod-{digest}",
        title=f"uploaded: {source[:200]}",
        publisher="the user",
        licence=LICENCE_NOT_STATED,
        url=source if source.startswith(("http://", "https://")) else None,
        retrieved_at=ctx.now(),
        evidence="user-supplied",
    )


async def _require_fetch(ctx: ToolContext, url: str) -> None:
    """Ask for the fetch of ``url``; always ask the person when none of their messages in
    this chat holds it. A model steered by text inside data it read (a layer's property, a
    place's name) must not send the chat's contents to an address nobody gave it."""
    given = any(
        isinstance(event.body, MessageAdded)
        and event.body.role == "user"
        and url in event.body.text()
        for event in ctx.chats.trace(ctx.chat_id)
    )
    if given:
        await ctx.require("network", {"url": url})
        return
    try:
        await ctx.require(
            "network", {"url": url, "why": "the person did not give this URL"}, always=True
        )
    except EffectRefusedError as refused:
        raise EffectRefusedError(
            f"{refused.message}: {url} is in none of the person's messages, so fetching it "
            "needs their approval",
            hint="ask the person to paste the URL if they want it loaded",
        ) from None


async def _add(arguments: AddByodInput, ctx: ToolContext) -> dict[str, Any]:
    settings = ctx.settings
    if arguments.replace is not None and arguments.replace not in ctx.workspace.entries:
        known = [e.entry_id for e in ctx.workspace.byod]
        raise ToolError(
            f"no entry {arguments.replace!r} to replace",
            hint=f"the byod entries are {', '.join(known) or 'none'}",
        )
    target: Path | None = None
    name: str | None = arguments.label
    if arguments.path is not None:
        target = allowed_path(arguments.path, settings.byod_dirs)
        source: Any = read_allowed(target, settings.byod_dirs, settings.max_upload_bytes)
        described = name = target.name  # the file's name lets intake check its format
    elif arguments.url is not None:
        if not arguments.url.lower().startswith(("http://", "https://")):
            # intake.load reads a string without a scheme as a host path: never from here.
            raise ToolError(
                "url must be an http:// or https:// address",
                hint="for a file in an allowed folder, pass it as path",
            )
        source = described = arguments.url
        await _require_fetch(ctx, arguments.url)
    else:
        source, described = arguments.data, "inline data"
    if isinstance(source, bytes) and is_tiff(source[:8]):
        return await _add_raster(ctx, source, str(described), arguments, target)
    try:
        layer = await intake_aload(
            source,
            label=name,
            max_bytes=settings.max_upload_bytes,
            timeout_s=settings.fetch_timeout_s,
            allowed_networks=settings.allowed_networks,
        )
    except IntakeError as exc:
        problems = "; ".join(_for_the_model(p) for p in exc.problems[:5])
        raise ToolError(
            f"the layer could not be loaded: {problems}",
            hint="fix the source and call add_byod_layer again; nothing was stored",
        ) from None
    await ctx.require(
        "fetched_entry",
        {"label": arguments.label or str(described), "features": layer.report.feature_count},
    )
    if not arguments.show and arguments.replace is not None:  # the layer it replaces hides
        await ctx.require("display", {"hides": arguments.replace})
    written = await ctx.write_entry(
        kind="byod",
        data=layer.data,
        label=arguments.label,
        sources=[_provenance(str(described), target, ctx)],
        entry_id=arguments.replace,
        show=arguments.show,
    )
    out: dict[str, Any] = {
        "entry_id": written.entry_id,
        "version": written.version,
        "format": layer.report.format,
        "digest": written.digest,
    }
    if layer.report.warnings:
        out["warnings"] = list(layer.report.warnings[:10])
    return out


async def _add_raster(
    ctx: ToolContext, data: bytes, name: str, arguments: AddByodInput, target: Path | None
) -> dict[str, Any]:
    """A GeoTIFF from an allowed folder: read confined, stored as a rasters entry."""
    if arguments.replace is not None:
        raise ToolError(
            "a GeoTIFF becomes a rasters entry of its own and cannot replace a byod layer",
            hint="call add_byod_layer again without replace",
        )
    loaded = await _read_raster(ctx, data, name)
    rows, cols = loaded.raster.shape
    await ctx.require("fetched_entry", {"label": arguments.label or name,
                                        "raster": f"{rows:,} x {cols:,} cells"})  # fmt: skip
    written = await ctx.write_entry(
        kind="rasters",
        data=loaded.raster,
        label=arguments.label or Path(name).stem or name,
        sources=[_provenance(name, target, ctx)],
        show=arguments.show,
    )
    out: dict[str, Any] = {"entry_id": written.entry_id, "version": written.version,
                           "format": "GeoTIFF", "raster": written.digest.get("raster"),
                           "file": loaded.file}  # fmt: skip
    if loaded.notes:
        out["notes"] = list(loaded.notes)
    return out


async def _read_raster(ctx: ToolContext, data: bytes, name: str) -> RasterLayer:
    try:
        return await intake_aload_raster(
            data, label=name, max_bytes=ctx.settings.max_upload_bytes,
            timeout_s=max(ctx.settings.fetch_timeout_s, 30.0),
        )  # fmt: skip
    except IntakeError as exc:
        problems = "; ".join(_for_the_model(p) for p in exc.problems[:5])
        raise ToolError(f"the raster could not be loaded: {problems}",
                        hint="nothing was stored") from None  # fmt: skip


#: Intake's advice to a caller who can raise its limits ("pass a larger max_bytes"): the
#: model cannot, so it is told what it can do instead.
_SETTINGS_ADVICE: Final = re.compile(
    r"[;,]?\s*(?:try again, or |or )?pass a larger (max_bytes|timeout_s)\b[^;]*"
)
_LIMITS: Final = {"max_bytes": "the size limit", "timeout_s": "the time limit"}


def _for_the_model(problem: str) -> str:
    """An intake refusal with advice the model can follow.

    Example:
        >>> print(_for_the_model("the file is 30 MB; pass a larger max_bytes if expected"))
        ... # doctest: +NORMALIZE_WHITESPACE
        the file is 30 MB; the size limit is the application's setting, not the call's: load
        a smaller layer, or filter it first
    """
    return _SETTINGS_ADVICE.sub(
        lambda m: (
            f"; {_LIMITS[m[1]]} is the application's setting, not the call's: load "
            "a smaller layer, or filter it first"
        ),
        problem,
    )


def printable_name(name: str) -> str:
    """A file name as it may be shown and stored: its last part, without control or
    format characters (NUL, newlines, escapes, bidi overrides that make ``gnp.geojson``
    read as ``geojson.png``), at most 200 characters."""
    base = Path(name.replace("\\", "/")).name
    shown = "".join(c for c in base if unicodedata.category(c) not in ("Cc", "Cf", "Cs"))
    return shown.strip()[:200] or "upload"


async def upload_layer(
    ctx: ToolContext,
    data: bytes,
    name: str,
    *,
    before_write: Callable[[], Awaitable[None]] | None = None,
) -> dict[str, Any]:
    """A file the person dropped into the chat: through intake into a new byod entry.

    The file's name tells intake which format to expect (and is checked against the
    content); the entry's label is the name without its extension. ``before_write`` is
    awaited once the file is read and before anything is written: the web app stores a
    new chat there, so that a refused file stores nothing.

    Raises:
        ToolError: The file was refused (too big, unreadable, not geodata); nothing stored.
    """
    name = printable_name(name)
    limit = ctx.settings.max_upload_bytes
    if len(data) > limit:
        raise ToolError(f"{name!r} is {len(data):,} bytes; the limit is {limit:,}")
    if is_tiff(data[:8]):
        return await _upload_raster(ctx, data, name, before_write)
    try:
        layer = await intake_aload(
            data, label=name, max_bytes=limit, timeout_s=ctx.settings.fetch_timeout_s
        )
    except IntakeError as exc:
        audit.record("upload_refused", size=len(data), problems=len(exc.problems))
        raise ToolError(f"{name} could not be loaded: {'; '.join(exc.problems[:5])}") from None
    if before_write is not None:
        await before_write()
    written = await ctx.write_entry(
        kind="byod",
        data=layer.data,
        label=Path(name).stem or name,
        sources=[_provenance(name, None, ctx)],
    )
    return {
        "name": name,
        "entry_id": written.entry_id,
        "label": written.label,
        "format": layer.report.format,
        "features": len(layer.data.get("features", [])),
        "warnings": list(layer.report.warnings[:10]),
    }


async def _upload_raster(
    ctx: ToolContext,
    data: bytes,
    name: str,
    before_write: Callable[[], Awaitable[None]] | None,
) -> dict[str, Any]:
    try:
        loaded = await _read_raster(ctx, data, name)
    except ToolError:
        audit.record("upload_refused", size=len(data), problems=1)
        raise
    if before_write is not None:
        await before_write()
    written = await ctx.write_entry(
        kind="rasters",
        data=loaded.raster,
        label=Path(name).stem or name,
        sources=[_provenance(name, None, ctx)],
    )
    return {"name": name, "entry_id": written.entry_id, "label": written.label,
            "format": "GeoTIFF", "features": 0, "warnings": list(loaded.notes)}  # fmt: skip


ADD_BYOD_LAYER: Final = ToolEntry(
    description=(
        "Add the user's own layer (GeoJSON, GeoParquet, GeoPackage, zipped Shapefile, "
        "FlatGeobuf, KML, CSV with lon/lat or WKT) from a url, inline data, or a path in an "
        "allowed folder. It is checked, repaired where safe, reprojected to WGS 84, and "
        "stored as a byod entry; a GeoTIFF (from a path) becomes a rasters entry. "
        "`replace='byod-1'` writes a new version of that entry (monitors watching it re-run)."
    ),
    input_schema=AddByodInput,
    execute=_add,
    effects=frozenset({"network", "fetched_entry", "display"}),  # display: show=false
    classification_prompt="Load the user's own file, URL or GeoJSON as a map layer.",
    tags=("byod", "data"),
    examples=("add_byod_layer(label='Bus stops', path='helsinki_stops.csv')",),
    example_prompts=("Load my stops file", "Add this GeoJSON to the map"),
    related_tools=("recall_byod", "update_byod_display", "analyse_data"),
)


async def _byod_display(arguments: DisplayInput, ctx: ToolContext) -> dict[str, Any]:
    return await change_display(ctx, "byod", arguments)


UPDATE_BYOD_DISPLAY: Final = ToolEntry(
    description="Show, hide or style the user's own layers on the map (by entry id, or all "
    "with clear_all). " + DRAWN[0].upper() + DRAWN[1:],
    input_schema=DisplayInput,
    execute=_byod_display,
    effects=frozenset({"display"}),
    classification_prompt="Show, hide or restyle the user's own layers on the map.",
    tags=("byod", "map"),
    related_tools=("add_byod_layer", "recall_byod"),
)
