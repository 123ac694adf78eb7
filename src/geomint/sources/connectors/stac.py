"""STAC APIs (Earth Search, Planetary Computer...): search a collection's items, read a window.

A source names its catalogue in ``config``: ``api_url`` (the STAC API's root,
``"https://earth-search.aws.element84.com/v1"``), ``collection`` (``"cop-dem-glo-30"``)
and ``asset`` (the asset read by default, ``"data"``); ``cloud_cover: true`` when the
collection's items carry ``eo:cloud_cover``, and ``unit`` for the cells' unit when the
items do not say. A fetch does one of two things:

* with ``list``: search the collection (``POST /search`` with the place's bounding
  box, the datetime and the cloud cover asked, following ``next`` links up to
  :data:`MAX_PAGES` pages) and return a
  :class:`~geomint.sources.connectors.base.Listing`: each item with its date, cloud
  cover, licence and GeoTIFF assets;
* otherwise: read one item's asset (the ``item`` asked, or the newest the search finds
  over the area) as a :class:`~geomint.sources.connectors.base.Grid`: a window of the
  Cloud-Optimised GeoTIFF over only the area asked, decoded in a confined child from
  byte ranges fetched here (:mod:`~geomint.sources.connectors._confined_cog`), with the
  licence and providers the catalogue gives, the item's date as the period and notes on
  what was narrowed (the window, the band, an overview read when the area is more
  cells than one read returns).

Every request goes through :mod:`geomint.http`. pystac-client is not used: it sends its
requests with ``requests``, past geomint's guard, caps and policy. Search answers are
fetched here (8 MB at most), and pystac only parses them
(``pystac.ItemCollection.from_dict``): an answer it cannot read is ``malformed``, one
without the fields read here is ``changed``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urlsplit

import pystac

from geomint.http import shown_url
from geomint.sources.connectors._cog_child import MAX_CELLS
from geomint.sources.connectors._common import now, short_text, unit_text
from geomint.sources.connectors._confined_cog import (
    MAX_READ_BYTES,
    Reader,
    Window,
    read_in_child,
    read_window,
)
from geomint.sources.connectors._stac_api import (
    StacApi,
    collection_licence,
    is_licence,
    licence_link,
    publisher,
    search_collections,
)
from geomint.sources.connectors.base import (
    Grid,
    ListedDataset,
    ListedResource,
    Listing,
    PeriodFilter,
    Request,
    SourceFetchError,
    Unit,
)
from geomint.sources.discovery import CatalogueQuery, CatalogueResults
from geomint.sources.model import Source

__all__ = ["DEFAULT_LIMIT", "MAX_LIMIT", "MAX_PAGES", "StacConnector"]

DEFAULT_LIMIT: Final = 10
MAX_LIMIT: Final = 100
#: Most pages of a search followed by their ``next`` links.
MAX_PAGES: Final = 5
# Items read when choosing one to read: enough to find the newest over an area.
_CHOOSE_FROM: Final = 20
_TIFF: Final = re.compile(r"image/tiff|application=geotiff", re.IGNORECASE)
_DATETIME: Final = re.compile(
    r"(\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2}))?|\.\.)"
)
_ID: Final = re.compile(r"[A-Za-z0-9_.:@\-]{1,200}")
_MAX_TITLE: Final = 200
# What pystac raises for a dict that is not the STAC it was told (it has no one root).
_UNREADABLE: Final = (
    pystac.STACError,
    pystac.STACTypeError,
    KeyError,
    TypeError,
    ValueError,
    AttributeError,
)


class StacConnector:
    """Search a STAC API's collection, or read a window of one item's GeoTIFF asset.

    Settings in ``source.config``: ``api_url``, ``collection`` and ``asset`` (required);
    ``cloud_cover`` (true when items carry ``eo:cloud_cover``) and ``unit``.
    """

    def __init__(self, *, reader: Reader | None = None, max_cells: int = MAX_CELLS) -> None:
        """Decode windows with ``reader``: by default in a confined child process.

        Args:
            reader: Decodes a window from the child's request and a way to answer its
                questions; a test passes one that runs the child's ``answer`` in process
                (never do so outside tests: a remote file is hostile bytes).
            max_cells: The most cells one read returns (at most :data:`MAX_CELLS`); a
                larger area is read from the finest overview that fits.
        """
        self._reader: Reader = reader or read_in_child
        self._max_cells = min(max(1, max_cells), MAX_CELLS)

    @property
    def name(self) -> str:
        """``"stac"``."""
        return "stac"

    @property
    def needs_network(self) -> bool:
        """True: every fetch is a request to the catalogue and the file's server."""
        return True

    @property
    def vocabulary(self) -> Mapping[str, str]:
        """What a fetch of a STAC collection takes."""
        return {
            "bbox": "an area as west,south,east,north in degrees (lon/lat); the units' "
            "bounding box is used when none is given",
            "collection": "a collection id of the STAC API (the source's own by default)",
            "datetime": "a date or an interval, 2024-07-01 or 2024-06-01/2024-08-31 "
            "(period takes whole years)",
            "asset": "the asset to read, by its key in the item (the source's own by default)",
            "band": "which band of the asset's file to read, from 1 (default 1)",
            "max_cloud_cover": "the most cloud cover in percent, 0 to 100 (collections "
            "whose items carry eo:cloud_cover)",
            "item": "an item id from a listing, to read that item",
            "list": "yes, to list the items the search finds instead of reading one",
            "limit": f"how many items to list, 1 to {MAX_LIMIT} (default {DEFAULT_LIMIT})",
        }

    def is_catalogue(self, source: Source) -> bool:
        """Whether ``source`` is a whole STAC API to search (its config names no
        ``collection``) rather than one collection to read."""
        return "collection" not in source.config

    def search(self, query: CatalogueQuery) -> CatalogueResults:
        """Discovery: the API's collections whose id, title, keywords or description
        hold the query's words, best first, and only those covering the place asked.

        Raises:
            SourceFetchError: As :meth:`fetch` does for a request that fails.
        """
        return search_collections(query)

    def fetch(self, request: Request) -> Listing | Grid:
        """List the collection's items over the area, or read a window of one.

        Raises:
            SourceFetchError: ``refused_filter`` for a filter value it does not take (an
                area, a date, an asset the item lacks, with the item's assets as
                options) or an area too large even at the file's coarsest overview;
                ``not_found`` for a collection or item the catalogue does not have, or
                no item over the area; ``not_covered`` when the item's file does not
                cover the area; ``malformed`` or ``changed`` for an answer of another
                shape or a file geomint refuses; ``timeout``, ``rate_limited`` or
                ``unavailable`` when the catalogue or the file's server fails.
        """
        listing, limit = _yes(_one(request, "list")), _limit(request)
        catalogue = _Catalogue(request)
        if listing:
            return catalogue.listing(limit)
        return catalogue.read(self._reader, self._max_cells)


# --- the catalogue ------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _Collection:
    licence: str | None
    publisher: str | None


class _Catalogue(StacApi):
    """One fetch's conversation with a STAC API: its address, the filters, the notes."""

    def __init__(self, request: Request) -> None:
        super().__init__(request.source, request.policy)
        self.request = request
        collection = _one(request, "collection") or self.source.config.get("collection")
        if not isinstance(collection, str) or not collection:
            raise _refused(
                "collection",
                f"{self.title} is a catalogue of collections: name one with collection "
                "(find_sources with search_catalogues=true lists those that match)",
            )
        if not _ID.fullmatch(collection):
            raise _refused("collection", f"{collection!r} is not a STAC collection id")
        self.collection = collection
        self.bbox = _area(request)
        self.datetime = _datetime(request)
        self.cloud = _cloud(request)
        self.band = _band(request)
        self.notes: list[str] = []

    # -- search --------------------------------------------------------------------------

    def search(self, limit: int, *, pages: int = MAX_PAGES) -> tuple[list[pystac.Item], int]:
        """The items over the area, at most ``limit``, newest first; and how many match."""
        body: dict[str, Any] = {
            "collections": [self.collection],
            "bbox": list(self.bbox),
            "limit": min(limit, MAX_LIMIT),
        }
        if self.datetime is not None:
            body["datetime"] = self.datetime
        if self.cloud is not None:
            body["query"] = {"eo:cloud_cover": {"lte": self.cloud}}
        items: list[pystac.Item] = []
        matched: int | None = None
        method, url = "POST", f"{self.api}/search"
        sent: dict[str, Any] | None = body
        for page in range(pages):
            answer = self.json(method, url, sent, key="collection", value=self.collection)
            found, link, count = self._page(answer)
            matched = count if matched is None else matched
            items.extend(found)
            if len(items) >= limit or link is None:
                break
            following = self._next(link, sent or body)
            if following is None:
                break
            method, url, sent = following
            if page == pages - 1:
                self.notes.append(f"followed {pages} pages of results; narrow the search")
        items.sort(key=_when, reverse=True)
        return items[:limit], max(matched or 0, len(items))

    def _page(self, answer: Any) -> tuple[list[pystac.Item], dict[str, Any] | None, int | None]:
        if not isinstance(answer, dict) or not isinstance(answer.get("features"), list):
            has = (
                ", ".join(sorted(answer)[:10])
                if isinstance(answer, dict)
                else type(answer).__name__
            )
            raise self.changed(f"a search answered without features (it has {has})")
        try:
            found = pystac.ItemCollection.from_dict(answer, preserve_dict=False)
        except _UNREADABLE as exc:
            raise self.malformed(f"an item does not parse as STAC ({type(exc).__name__})") from None
        links = answer.get("links")
        link = next(
            (x for x in links if isinstance(x, dict) and x.get("rel") == "next"),
            None,
        ) if isinstance(links, list) else None  # fmt: skip
        count = answer.get("numberMatched")
        context = answer.get("context")
        if count is None and isinstance(context, dict):
            count = context.get("matched")
        matched = count if isinstance(count, int) and not isinstance(count, bool) else None
        return list(found.items), link, matched

    def _next(
        self, link: dict[str, Any], sent: dict[str, Any]
    ) -> tuple[str, str, dict[str, Any] | None] | None:
        """The request a ``next`` link asks for, when it stays on the catalogue's site."""
        href = link.get("href")
        if not isinstance(href, str) or urlsplit(href)[:2] != urlsplit(self.api)[:2]:
            self.notes.append("the catalogue's next page is on another site; not followed")
            return None
        if str(link.get("method", "GET")).upper() != "POST":
            return "GET", href, None
        given = link.get("body")
        given = given if isinstance(given, dict) else {}
        return "POST", href, ({**sent, **given} if link.get("merge") is True else given)

    # -- list ----------------------------------------------------------------------------

    def listing(self, limit: int) -> Listing:
        collection = self._collection()
        items, matched = self.search(limit)
        if matched > len(items):
            self.notes.append(
                f"showing {len(items)} of {matched} items, newest first; narrow the area or "
                f"the dates, or ask up to {MAX_LIMIT} with limit"
            )
        if not items:
            self.notes.append(self._nothing())
        return Listing(
            datasets=tuple(self._listed(item, collection) for item in items),
            count=matched,
            url=self.last_url,
            retrieved_at=now(),
            notes=tuple(self.notes),
            next=(
                f"fetch again with filters={{'collection': {self.collection!r}, 'item': "
                "<a dataset>, 'asset': <one of its resources>, 'bbox': ...}} to read a "
                "window of that item's GeoTIFF over the area"
            ),
        )

    def _listed(self, item: pystac.Item, collection: _Collection) -> ListedDataset:
        cloud = item.properties.get("eo:cloud_cover")
        said = [_period(item)]
        if isinstance(cloud, int | float) and not isinstance(cloud, bool):
            said.append(f"cloud cover {cloud:g}%")
        resources = tuple(
            ListedResource(
                id=key,
                name=short_text(asset.title, _MAX_TITLE),
                format=short_text(asset.media_type, 100),
                url=asset.href if _is_web(asset.href) else None,
            )
            for key, asset in item.assets.items()
            if _is_tiff(asset)
        )
        return ListedDataset(
            name=item.id,
            title=f"{item.id} ({', '.join(said)})",
            organisation=collection.publisher,
            licence_id=_licence(item.properties, collection.licence),
            licence_title=None,
            metadata_modified=short_text(item.properties.get("updated"), 40),
            resources=resources,
        )

    # -- read ----------------------------------------------------------------------------

    def read(self, reader: Reader, max_cells: int) -> Grid:
        collection = self._collection()
        wanted = _one(self.request, "item")
        if wanted is not None:
            item = self._item(wanted)
        else:
            items, matched = self.search(_CHOOSE_FROM, pages=1)
            if not items:
                raise SourceFetchError("not_found", self._nothing(), url=self.last_url)
            item = _best(items, self.bbox)
            if matched > 1:
                self.notes.append(
                    f"{matched} items match; read {item.id}, the newest covering the most of "
                    "the area (fetch with list=yes to see them, and item= to pick one)"
                )
        tiffs = tuple(k for k, a in item.assets.items() if _is_tiff(a))
        key = _one(self.request, "asset") or self.source.config.get("asset")
        if not isinstance(key, str) or not key:
            if len(tiffs) != 1:
                raise SourceFetchError(
                    "refused_filter",
                    f"item {item.id} has {len(tiffs)} GeoTIFF assets; name one with asset: "
                    f"{', '.join(tiffs) or 'none'}",
                    key="asset",
                    options=tiffs,
                )
            key = tiffs[0]
        asset = item.assets.get(key)
        if asset is None or not _is_tiff(asset):
            raise SourceFetchError(
                "refused_filter",
                f"item {item.id} has no GeoTIFF asset {key!r}; its GeoTIFF assets are "
                f"{', '.join(tiffs) or 'none'}",
                key="asset",
                options=tiffs,
            )
        if not _is_web(asset.href):
            raise SourceFetchError(
                "unavailable",
                f"asset {key} of item {item.id} is at {asset.href[:120]!r}, not an http(s) "
                "address geomint can read",
            )
        band = self.band
        what = f"asset {key} of {item.id} ({self.title})"
        window = read_window(
            asset.href,
            bbox=self.bbox,
            band=band,
            policy=self.policy,
            what=what,
            reader=reader,
            max_cells=max_cells,
        )
        return Grid(
            raster=window.raster,
            url=shown_url(asset.href),
            retrieved_at=now(),
            licence=_licence(item.properties, collection.licence),
            title=f"{self.title}: {item.id}, {key}"[:500],
            publisher=collection.publisher,
            period=_period(item),
            unit=_unit(asset, band) or unit_text(self.source.config.get("unit")),
            notes=(*self.notes, *_read_notes(window, item, key, asset, band, self.bbox)),
        )

    def _item(self, wanted: str) -> pystac.Item:
        if not _ID.fullmatch(wanted):
            raise _refused("item", f"{wanted!r} is not an item id; list the items to see theirs")
        url = f"{self.api}/collections/{quote(self.collection)}/items/{quote(wanted)}"
        answer = self.json("GET", url, None, key="item", value=wanted)
        if not isinstance(answer, dict) or answer.get("type") != "Feature":
            raise self.changed("an item answered without being a GeoJSON Feature")
        try:
            return pystac.Item.from_dict(answer, preserve_dict=False)
        except _UNREADABLE as exc:
            raise self.malformed(
                f"the item does not parse as STAC ({type(exc).__name__})"
            ) from None

    def _collection(self) -> _Collection:
        url = f"{self.api}/collections/{quote(self.collection)}"
        found = self.json("GET", url, None, key="collection", value=self.collection)
        if not isinstance(found, dict) or found.get("type", "Collection") != "Collection":
            raise self.changed("the collection answered without being a STAC Collection")
        licence = found.get("license")
        return _Collection(
            licence=collection_licence(licence, licence_link(found.get("links"))),
            publisher=publisher(found.get("providers")),
        )

    def _nothing(self) -> str:
        asked = [f"bbox {','.join(f'{v:g}' for v in self.bbox)}"]
        if self.datetime:
            asked.append(f"datetime {self.datetime}")
        if self.cloud is not None:
            asked.append(f"cloud cover at most {self.cloud:g}%")
        return (
            f"{self.title} has no item in collection {self.collection} for "
            f"{', '.join(asked)}; widen the dates or the cloud cover, or check the area"
        )


# --- reading the filters ------------------------------------------------------------------


def _one(request: Request, key: str) -> str | None:
    given = request.options.get(key)
    if given is None:
        return None
    if isinstance(given, tuple):
        if len(given) != 1:
            raise _refused(key, f"{key} takes one value, and {len(given)} were given")
        given = given[0]
    return given.strip() or None


def _refused(key: str, message: str) -> SourceFetchError:
    return SourceFetchError("refused_filter", message, key=key)


def _yes(value: str | None) -> bool:
    if value is None:
        return False
    if value.lower() in ("yes", "true", "1"):
        return True
    if value.lower() in ("no", "false", "0"):
        return False
    raise _refused("list", f"list takes yes or no, not {value!r}")


def _limit(request: Request) -> int:
    given = _one(request, "limit")
    if given is None:
        return DEFAULT_LIMIT
    if not given.isdigit() or not 1 <= int(given) <= MAX_LIMIT:
        raise _refused("limit", f"limit takes a whole number from 1 to {MAX_LIMIT}, not {given!r}")
    return int(given)


def _band(request: Request) -> int:
    given = _one(request, "band")
    if given is None:
        return 1
    if not given.isdigit() or not 1 <= int(given) <= 64:
        raise _refused("band", f"band takes a whole number from 1, not {given!r}")
    return int(given)


def _area(request: Request) -> tuple[float, float, float, float]:
    """The area asked, in degrees: the ``bbox`` filter, or the units' bounding box."""
    given = _one(request, "bbox")
    if given is not None:
        try:
            west, south, east, north = (float(v) for v in given.split(","))
        except ValueError:
            raise _refused(
                "bbox", f"bbox is west,south,east,north in degrees, not {given[:80]!r}"
            ) from None
        box = (west, south, east, north)
        if not (
            all(math.isfinite(v) for v in box)
            and -180 <= west < east <= 180
            and -90 <= south < north <= 90
        ):
            raise _refused(
                "bbox",
                f"bbox {given[:80]!r} is not an area: west < east within -180..180 and south "
                "< north within -90..90 (an area across the antimeridian is two fetches)",
            )
        return box
    if not request.units:
        raise _refused(
            "bbox", "a raster read needs a place: give a unit (a spine id) or bbox=w,s,e,n"
        )
    return _units_box(request.units)


def _units_box(units: Sequence[Unit]) -> tuple[float, float, float, float]:
    boxes = []
    for unit in units:
        if unit.bbox is None:
            raise _refused(
                "unit",
                f"{unit.id} ({unit.name}) is a point on the place spine, not an area; give "
                "bbox=west,south,east,north around it",
            )
        boxes.append(unit.bbox)
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _datetime(request: Request) -> str | None:
    given = _one(request, "datetime")
    if given is not None:
        parts = given.split("/")
        if len(parts) > 2 or not all(_DATETIME.fullmatch(p) for p in parts) or parts == [".."]:
            raise _refused(
                "datetime",
                f"datetime is a date or an interval (2024-07-01, 2024-06-01/2024-08-31, "
                f"2024-06-01/..), not {given[:80]!r}",
            )
        if len(parts) == 1 and "T" not in given:
            parts = [given, given]  # one day: all of it
        if len(parts) == 1:
            return given
        return f"{_instant(parts[0], end=False)}/{_instant(parts[1], end=True)}"
    return _years(request.period)


def _instant(text: str, *, end: bool) -> str:
    if text == ".." or "T" in text:
        return text
    return f"{text}T23:59:59Z" if end else f"{text}T00:00:00Z"


def _years(period: PeriodFilter | None) -> str | None:
    if period is None or (period.start is None and period.end is None):
        return None
    start = f"{period.start}-01-01T00:00:00Z" if period.start is not None else ".."
    end = f"{period.end}-12-31T23:59:59Z" if period.end is not None else ".."
    return f"{start}/{end}"


def _cloud(request: Request) -> float | None:
    given = _one(request, "max_cloud_cover")
    if given is None:
        return None
    if request.source.config.get("cloud_cover") is not True:
        raise _refused(
            "max_cloud_cover",
            f"the items of {request.source.title} carry no cloud cover (eo:cloud_cover)",
        )
    try:
        value = float(given)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 100:
        raise _refused("max_cloud_cover", f"max_cloud_cover is 0 to 100 (percent), not {given!r}")
    return value


# --- reading the items --------------------------------------------------------------------


def _when(item: pystac.Item) -> str:
    found = item.datetime or item.common_metadata.end_datetime
    return found.isoformat() if found is not None else ""


def _period(item: pystac.Item) -> str:
    start, end = item.common_metadata.start_datetime, item.common_metadata.end_datetime
    if start is not None and end is not None:
        first, last = start.date().isoformat(), end.date().isoformat()
        return first if first == last else f"{first}/{last}"
    if item.datetime is not None:
        return item.datetime.date().isoformat()
    return "not stated"


def _best(items: Sequence[pystac.Item], bbox: tuple[float, float, float, float]) -> pystac.Item:
    """The newest item covering the most of the area (items come newest first)."""

    def covered(item: pystac.Item) -> float:
        box = item.bbox
        if not box or len(box) < 4:
            return 0.0
        west, south = max(box[0], bbox[0]), max(box[1], bbox[1])
        east, north = min(box[-2], bbox[2]), min(box[-1], bbox[3])
        return max(0.0, east - west) * max(0.0, north - south)

    best = max(covered(item) for item in items)
    return next(item for item in items if covered(item) >= best * 0.999)


def _is_tiff(asset: pystac.Asset) -> bool:
    kind = asset.media_type or ""
    path = urlsplit(asset.href).path.lower()
    return bool(_TIFF.search(kind)) or (not kind and path.endswith((".tif", ".tiff")))


def _is_web(href: str) -> bool:
    return urlsplit(href).scheme in ("http", "https")


def _licence(properties: Mapping[str, Any], collection: str | None) -> str | None:
    own = short_text(properties.get("license"), 200)
    if own is not None and is_licence(own):
        return own
    return collection


def _raster_band(asset: pystac.Asset, band: int) -> Mapping[str, Any]:
    bands = asset.extra_fields.get("raster:bands")
    if isinstance(bands, list) and len(bands) >= band and isinstance(bands[band - 1], dict):
        found: Mapping[str, Any] = bands[band - 1]
        return found
    return {}


def _unit(asset: pystac.Asset, band: int) -> str | None:
    return unit_text(_raster_band(asset, band).get("unit"))


def _read_notes(
    window: Window,
    item: pystac.Item,
    key: str,
    asset: pystac.Asset,
    band: int,
    bbox: tuple[float, float, float, float],
) -> list[str]:
    raster = window.raster
    rows, cols = raster.shape
    res = raster.res[0]
    units = "degrees" if raster.crs.upper() in ("EPSG:4326", "OGC:CRS84") else "m"
    notes = [
        f"read item {item.id} ({_period(item)}), asset {key}, band {band}",
        f"a window of {cols:,} x {rows:,} cells of {res:.6g} {units} over the area asked "
        f"(bbox {','.join(f'{v:.5g}' for v in bbox)}), in {raster.crs}: "
        f"{window.fetched:,} bytes of a {window.file_size:,}-byte file in "
        f"{window.requests} requests",
    ]
    if window.level is not None:
        _, _, width, height = window.area
        notes.append(
            f"the area is {width:,} x {height:,} cells at the file's full resolution, more "
            f"than one read returns; read its overview {window.level + 1} "
            f"(1/{window.factor} of the resolution) instead; ask for a smaller area for "
            "full detail"
        )
    col, row, width, height = window.area
    grid_width, grid_height = window.grid
    if col == 0 or row == 0 or col + width == grid_width or row + height == grid_height:
        notes.append(
            f"the area may reach past the edge of item {item.id}'s file; cells beyond it "
            "are not in the window"
        )
    meta = _raster_band(asset, band)
    scale, offset = meta.get("scale"), meta.get("offset")
    if isinstance(scale, int | float) or isinstance(offset, int | float):
        notes.append(
            "cells are the file's stored numbers; the publisher gives scale "
            f"{scale if scale is not None else 1} and offset {offset or 0} "
            "(value = stored * scale + offset)"
        )
    if window.fetched > MAX_READ_BYTES // 2:
        notes.append("this read fetched over half of what one read may; prefer smaller areas")
    return notes
