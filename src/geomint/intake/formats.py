"""Which format a source is: by its first bytes, checked against its name and media type.

A file's name says what its maker meant; its first bytes say what it is. Where both are
known and they disagree (a ``.gpkg`` that is an HTML error page) the source is refused
with both named, rather than handed to a parser that would fail obscurely.
"""

from __future__ import annotations

import re

from geomint.intake.errors import IntakeError

__all__ = ["BINARY", "FORMATS", "SUFFIXES", "sniff"]

#: Format id -> what to call it in messages.
FORMATS = {
    "geojson": "GeoJSON",
    "geojsonseq": "newline-delimited GeoJSON",
    "geoparquet": "GeoParquet",
    "gpkg": "GeoPackage",
    "shapefile": "zipped Shapefile",
    "flatgeobuf": "FlatGeobuf",
    "kml": "KML",
    "kmz": "KMZ",
    "csv": "CSV",
}

#: Formats converted in the confined child process.
BINARY = frozenset({"geoparquet", "gpkg", "shapefile", "flatgeobuf", "kml", "kmz"})

#: File name ending -> format id: what a name says it holds (the web page's file picker
#: offers these).
SUFFIXES = {
    ".geojson": "geojson",
    ".json": "geojson",
    ".geojsonl": "geojsonseq",
    ".geojsons": "geojsonseq",
    ".ndjson": "geojsonseq",
    ".jsonl": "geojsonseq",
    ".parquet": "geoparquet",
    ".geoparquet": "geoparquet",
    ".gpkg": "gpkg",
    ".zip": "shapefile",
    ".shz": "shapefile",
    ".fgb": "flatgeobuf",
    ".kml": "kml",
    ".kmz": "kmz",
    ".csv": "csv",
    ".tsv": "csv",
}

_MEDIA_TYPES = {
    "application/geo+json": "geojson",
    "application/vnd.geo+json": "geojson",
    "application/json": "geojson",
    "application/geo+json-seq": "geojsonseq",
    "application/x-ndjson": "geojsonseq",
    "application/vnd.apache.parquet": "geoparquet",
    "application/geopackage+sqlite3": "gpkg",
    "application/vnd.google-earth.kml+xml": "kml",
    "application/vnd.google-earth.kmz": "kmz",
    "application/vnd.flatgeobuf": "flatgeobuf",
    "text/csv": "csv",
}

_MAGIC = (
    (b"PAR1", "geoparquet"),
    (b"SQLite format 3\x00", "gpkg"),
    (b"fgb\x03", "flatgeobuf"),
    (b"PK\x03\x04", "zip"),
)

_FOREIGN = (
    (b"\x1f\x8b", "a gzip archive", "unpack it first"),
    (b"%PDF", "a PDF document", "export the map data itself, e.g. as GeoJSON"),
    (b"\x89PNG", "a PNG image", "raster images are not vector layers"),
    (b"\xff\xd8\xff", "a JPEG image", "raster images are not vector layers"),
    (b"II*\x00", "a TIFF image", "a GeoTIFF is read as a raster (intake.load_raster)"),
    (b"MM\x00*", "a TIFF image", "a GeoTIFF is read as a raster (intake.load_raster)"),
    (b"\x00\x00'\n", "a bare .shp file", "zip it with its .shx, .dbf and .prj"),
    (b"PK\x05\x06", "an empty zip archive", "add the layer's files to it"),
)


# What may stand before an XML document's root element: white space, the declaration and
# processing instructions, comments, and a DOCTYPE without an internal subset.
_PROLOG = re.compile(
    rb"""\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE(?:[^\[>"']|"[^"]*"|'[^']*')*>""", re.S | re.I
)
_KML_ROOT = re.compile(rb"<(?:[A-Za-z_][\w.-]*:)?kml[\s/>]")
_INTERNAL_DTD = re.compile(rb"<!DOCTYPE(?:[^\[>\"']|\"[^\"]*\"|'[^']*')*\[", re.I)


def _xml(text: bytes) -> str:
    """Say what XML ``text`` is: "kml" only when the root element is ``<kml>``.

    A document that merely mentions ``<kml`` (in a comment, say, of a GDAL VRT file) is
    not KML, and must not reach a reader that would open it as what it really is.
    """
    at = 0
    while (prolog := _PROLOG.match(text, at)) is not None:
        at = prolog.end()
    if _KML_ROOT.match(text, at):
        return "kml"
    if _INTERNAL_DTD.match(text, at):
        return "dtd"
    return "html" if b"<html" in text.lower() else "xml"


def _by_content(head: bytes) -> str | None:
    for magic, fmt in _MAGIC:
        if head.startswith(magic):
            return fmt
    if head.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00")) or head[1:2] == b"\x00":
        return "wide"  # UTF-16/32 text: the JSON reader decodes it or says why not
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith((b"{", b"[")):
        return "json"
    if text.startswith(b"<"):
        return _xml(text)
    return None


# What to call content that is no format of its own, or none geomint reads.
_CONTENT = {
    "zip": "a zip archive",
    "json": "JSON",
    "wide": "UTF-16 text",
    "html": "an HTML page",
    "xml": "an XML document",
}

# The names content may stand under, where more than its own: a zip is a zipped Shapefile
# unless named KMZ; JSON is GeoJSON; UTF-16 text is JSON or CSV, whose readers say if not.
_NAMES_FOR = {
    "zip": {"", "shapefile", "kmz"},
    "json": {"", "geojson", "geojsonseq"},
    "wide": {"", "geojson", "geojsonseq", "csv"},
}


def _refusal(head: bytes) -> str | None:
    for magic, what, advice in _FOREIGN:
        if head.startswith(magic):
            return f"this is {what}, not geodata geomint reads; {advice}"
    return None


def suffix_of(name: str) -> str:
    """Return the format a file name suggests, or "" when it suggests none."""
    lowered = name.lower().split("?", 1)[0].split("#", 1)[0]
    if lowered.endswith(".shp.zip"):
        return "shapefile"
    dot = lowered.rfind(".")
    return SUFFIXES.get(lowered[dot:], "") if dot >= 0 else ""


def sniff(head: bytes, *, name: str = "", media_type: str = "") -> str:
    """Decide a source's format from its first bytes, its name and its media type.

    Args:
        head: The first kilobytes of the source.
        name: A file name or URL path, if known.
        media_type: An HTTP Content-Type without parameters, if known.

    Returns:
        One of :data:`FORMATS`.

    Raises:
        IntakeError: The bytes are no format geomint reads, or contradict the name.
    """
    by_name = suffix_of(name)
    named = by_name or _MEDIA_TYPES.get(media_type, "")
    if not head.strip(b"\xef\xbb\xbf \t\r\n"):
        return named or "geojson"  # its reader says precisely how it is empty
    foreign = _refusal(head)
    if foreign:
        raise IntakeError([foreign])
    found = _by_content(head)
    if found == "wide" and named in BINARY:
        found = None  # zero bytes under a binary format's name: a damaged file, not text
    if found in {"html", "xml"}:
        raise IntakeError(
            [
                f"this is {_CONTENT[found]}, not KML or any geodata geomint reads; "
                "check the link or file"
            ]
        )
    if found == "dtd":
        raise IntakeError(
            [
                "this XML document declares its own DTD (<!DOCTYPE ... [ ... ]>), which KML "
                "never needs and geomint does not read; remove the DOCTYPE"
            ]
        )
    if found is not None and named not in _NAMES_FOR.get(found, {"", found}):
        what = _CONTENT.get(found) or FORMATS[found]
        if by_name:
            how, fix = f"named as {FORMATS[named]}", "rename the file to match what it holds"
        else:
            how, fix = f"served as {media_type} ({FORMATS[named]})", "check the link"
        raise IntakeError([f"{how} but the content is {what}; {fix}"])
    if found == "zip":
        return named or "shapefile"
    if found in {"json", "wide"}:
        return named or "geojson"
    if found is not None:
        return found
    if named in BINARY:
        raise IntakeError(
            [
                f"named as {FORMATS[named]} but the content does not start like one "
                f"(first bytes {head[:16]!r}); the file is damaged or not what its name says"
            ]
        )
    if named == "csv" or (not named and b"," in head[:4096]):
        return "csv"
    if named in {"geojson", "geojsonseq"} or not name:
        return named or "geojson"  # the JSON parser says precisely what is wrong
    known = ", ".join(sorted(set(SUFFIXES)))
    raise IntakeError(
        [f"cannot tell what format this is (first bytes {head[:16]!r}); geomint reads {known}"]
    )
