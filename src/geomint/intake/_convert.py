"""The binary reader: one GeoPackage, Shapefile, FlatGeobuf, KML or GeoParquet file in,
JSON texts out.

These formats are parsed by GDAL and Arrow, large C and C++ libraries with a history of
crashes on malformed files, so this module runs only inside intake's confined child
(:mod:`geomint.intake._child`): a crash or a runaway parse costs that child, never the
application. It returns the metadata (the source CRS, the layers read, the notes, the
column names) and three texts, the rows, the float columns and the geometries, which the
pipeline parses strictly, zips into features and validates exactly like a user's own
GeoJSON, so there is one path to trust.
"""

from __future__ import annotations

import ctypes
import zipfile
from pathlib import Path, PurePosixPath
from typing import Any

from geomint.intake._decoded import (
    FEATURE_BYTES,
    POSITION_BYTES,
    counted,
    table_bytes,
    too_large,
)
from geomint.intake._table_json import TableJSON, table_json

__all__ = ["NETWORK_DRIVERS", "ConvertError", "columns_rows_shapes", "convert", "restrict_drivers"]

#: Drivers that reach the network; skipped even where the network namespace is unavailable.
NETWORK_DRIVERS = (
    "HTTP,WFS,OAPIF,OGCAPI,CSW,NGW,Carto,AmigoCloud,Elasticsearch,EEDA,PLSCENES,GPSBabel,ADBC"
)

# A zipped Shapefile is a handful of files per layer; thousands are an attack on time
# and inodes, not a layer.
_MAX_MEMBERS = 1_000
_SHAPEFILE_PARTS = {".shp", ".shx", ".dbf", ".prj", ".cpg", ".qix", ".sbn", ".sbx"}


class ConvertError(Exception):
    """The file was read far enough to be refused; the message says why."""


def _unzip(path: Path, scratch: Path, max_bytes: int, fmt: str) -> Path:
    """Unpack a zipped Shapefile or a KMZ with its sizes checked; return what to open."""
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ConvertError(f"the zip archive is damaged ({exc}); re-create it") from None
    with archive:
        members = [m for m in archive.infolist() if not m.is_dir()]
        if len(members) > _MAX_MEMBERS:
            raise ConvertError(
                f"the zip archive holds {len(members):,} files, more than the {_MAX_MEMBERS:,} "
                "a zipped layer needs; zip just the layer's files"
            )
        total = sum(m.file_size for m in members)
        if total > max_bytes:
            raise ConvertError(
                f"the zip archive unpacks to {total:,} bytes, over the {max_bytes:,}-byte "
                "limit; pass a larger max_bytes if that is expected"
            )
        if fmt == "kmz":
            wanted = [m for m in members if m.filename.lower().endswith(".kml")]
            if not wanted:
                raise ConvertError("the KMZ archive holds no .kml document")
            main = next((m for m in wanted if m.filename.lower() == "doc.kml"), wanted[0])
            wanted = [main]
        else:
            wanted = [
                m
                for m in members
                if PurePosixPath(m.filename).suffix.lower() in _SHAPEFILE_PARTS
                and not PurePosixPath(m.filename).name.startswith(".")
                and "__MACOSX" not in m.filename
            ]
            if not any(m.filename.lower().endswith(".shp") for m in wanted):
                names = ", ".join(m.filename for m in members[:5]) or "nothing"
                raise ConvertError(
                    f"the zip archive holds no .shp file (it holds {names}); a zipped "
                    "Shapefile needs at least the .shp, .shx and .dbf of one layer"
                )
        written: list[Path] = []
        for member in wanted:
            # Only the base name is used: '../' and absolute names cannot leave scratch.
            name = PurePosixPath(member.filename.replace("\\", "/")).name
            target = scratch / name
            if target.exists():
                raise ConvertError(
                    f"the zip archive holds two files named {name!r}; keep one layer per "
                    "folder or pass the layer you want"
                )
            try:
                with archive.open(member) as source, open(target, "wb") as sink:
                    while chunk := source.read(1 << 20):
                        sink.write(chunk)
            except (zipfile.BadZipFile, OSError, NotImplementedError) as exc:
                raise ConvertError(
                    f"cannot unpack {member.filename!r} from the zip archive: {exc}"
                ) from None
            written.append(target)
    if fmt == "kmz":
        return written[0]
    return scratch


#: The GDAL drivers a format may be read with. Every other driver is deregistered before
#: a user's file is opened: GDAL picks a driver by content, and a file named .kml that is
#: really a VRT document would otherwise make GDAL open whatever local file it names.
_DRIVERS = {
    "gpkg": {"GPKG"},
    "flatgeobuf": {"FlatGeobuf"},
    "shapefile": {"ESRI Shapefile"},
    "kml": {"KML", "LIBKML"},
    "kmz": {"KML", "LIBKML"},
}
_ALLOWED_DRIVERS = frozenset(set().union(*_DRIVERS.values()))


def restrict_drivers() -> str:
    """Deregister every GDAL driver but the few intake reads; return what was done.

    pyogrio exposes no way to open a file with only some drivers, so this reaches into
    the GDAL library pyogrio bundles through its C API. Where that library cannot be
    found (a pyogrio built against a system GDAL), each read still checks which driver
    opened the file before it reads a single feature (:func:`_layers`).
    """
    import pyogrio  # noqa: PLC0415

    here = Path(pyogrio.__file__).resolve().parent
    found = sorted((here.parent / "pyogrio.libs").glob("libgdal*"))
    if not found:
        return "drivers checked per file (no bundled GDAL library found)"
    gdal = ctypes.CDLL(str(found[0]))
    gdal.GDALGetDriverCount.restype = ctypes.c_int
    gdal.GDALGetDriver.restype = ctypes.c_void_p
    gdal.GDALGetDriver.argtypes = [ctypes.c_int]
    gdal.GDALGetDriverShortName.restype = ctypes.c_char_p
    gdal.GDALGetDriverShortName.argtypes = [ctypes.c_void_p]
    gdal.GDALDeregisterDriver.argtypes = [ctypes.c_void_p]
    for index in reversed(range(gdal.GDALGetDriverCount())):
        driver = gdal.GDALGetDriver(index)
        name = gdal.GDALGetDriverShortName(driver).decode()
        if name not in _ALLOWED_DRIVERS:
            gdal.GDALDeregisterDriver(driver)
    return f"drivers: {', '.join(sorted(pyogrio.list_drivers()))}"


def _layers(target: Path, layer: str | None, fmt: str) -> list[str]:
    import pyogrio  # noqa: PLC0415 - imported after the limits are in place

    try:
        found = [str(name) for name, _ in pyogrio.list_layers(str(target))]
        driver = str(pyogrio.read_info(str(target), layer=found[0])["driver"]) if found else ""
    except Exception as exc:
        raise ConvertError(
            f"the file cannot be read as a {_NAMES[fmt]} ({_gdal_text(exc)}); {_DAMAGED}"
        ) from None
    if not found:
        raise ConvertError(f"the {_NAMES[fmt]} holds no layers; {_DAMAGED}")
    if driver not in _DRIVERS[fmt]:
        raise ConvertError(
            f"the file is not a {_NAMES[fmt]} (GDAL reads it as {driver}); {_DAMAGED}"
        )
    if layer is not None:
        if layer not in found:
            raise ConvertError(f"no layer named {layer!r}; the layers are {_listing(found)}")
        return [layer]
    if fmt in {"kml", "kmz"}:
        return found  # KML folders are parts of one document: read them all.
    if len(found) > 1:
        raise ConvertError(
            f"the {_NAMES[fmt]} holds {len(found)} layers ({_listing(found)}); "
            "pass layer= to choose one"
        )
    return found


def _listing(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:8])
    return shown + (f" and {len(names) - 8} more" if len(names) > 8 else "")


def _gdal_text(exc: Exception) -> str:
    """The library's own words, cut to the part a person can use."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = text.rsplit(" failed: ", 1)[-1]  # SQLite: drop the statement, keep the reason
    text = text.rsplit(" :", 1)[-1].strip()  # libkml: drop "ERROR parsing kml <path>"
    return text[:160].rstrip(". ")


_NAMES = {
    "gpkg": "GeoPackage",
    "shapefile": "zipped Shapefile",
    "flatgeobuf": "FlatGeobuf file",
    "kml": "KML document",
    "kmz": "KMZ archive",
    "geoparquet": "GeoParquet file",
}
_DAMAGED = "it is damaged, incomplete or not what its name says: export it again"


def _read_frame(path: Path, fmt: str, layer: str | None, scratch: Path, max_bytes: int) -> Any:
    import geopandas as gpd  # noqa: PLC0415
    import pandas as pd  # noqa: PLC0415
    import pyogrio  # noqa: PLC0415

    if fmt == "geoparquet":
        _check_parquet_metadata(path, max_bytes)
        try:
            return gpd.read_parquet(path), [None]
        except MemoryError:
            raise  # the memory cap: a dictionary that decodes past it, not a damaged file
        except Exception as exc:  # Arrow raises many kinds for one meaning: unreadable
            if "Missing geo metadata" in str(exc):
                raise ConvertError(
                    "the Parquet file has no 'geo' metadata: it is plain Parquet, not "
                    "GeoParquet; write it with geopandas' to_parquet or GDAL, or send CSV"
                ) from None
            raise ConvertError(
                f"the file cannot be read as a GeoParquet file ({_gdal_text(exc)}); {_DAMAGED}"
            ) from None
    target = _unzip(path, scratch, max_bytes, fmt) if fmt in {"shapefile", "kmz"} else path
    names = _layers(target, layer, fmt)
    frames = []
    for name in names:
        try:
            frame = pyogrio.read_dataframe(str(target), layer=name)
        except Exception as exc:
            raise ConvertError(
                f"layer {name!r} cannot be read ({_gdal_text(exc)}); {_DAMAGED}"
            ) from None
        if fmt in {"kml", "kmz"}:
            frame = _kml_data_only(frame)
        if len(names) > 1:
            frame["kml_folder"] = name
        frames.append(frame)
    if len(frames) == 1:
        return frames[0], names
    crs = frames[0].crs
    return gpd.GeoDataFrame(pd.concat(frames, ignore_index=True), crs=crs), names


def _check_parquet_metadata(path: Path, max_bytes: int) -> None:
    """Refuse a Parquet file whose footer alone shows it decodes past the limit.

    The footer counts the rows and the bytes of every column once decompressed, before
    a page is read: a few kilobytes of zstd or run lengths that stand for millions of
    rows or a gigabyte of text stop here. Values shared through a dictionary are counted
    once in the footer; those are measured after reading (:func:`convert`).
    """
    import pyarrow.parquet as pq  # noqa: PLC0415

    try:
        meta = pq.ParquetFile(path).metadata
        rows = meta.num_rows
        uncompressed = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except Exception:  # a damaged footer is refused, with its reason, by read_parquet
        return
    # A lower bound: each value is at least about half its binary width as JSON text.
    found = rows * FEATURE_BYTES + uncompressed // 2
    what = f"the GeoParquet file ({counted(rows, 'row')}, {uncompressed:,} bytes uncompressed)"
    problem = too_large(what, found, max_bytes, at_least=True)
    if problem:
        raise ConvertError(problem)


def _check_decoded(frame: Any, fmt: str, max_bytes: int) -> None:
    """Refuse a layer whose features and positions alone decode past the limit.

    Runs before the layer is reprojected or written out as text, which cost time and
    memory in proportion to the coordinates.
    """
    import shapely  # noqa: PLC0415

    positions = int(shapely.get_num_coordinates(frame.geometry.array).sum())
    found = len(frame) * FEATURE_BYTES + positions * POSITION_BYTES
    what = f"the {_NAMES[fmt]} ({counted(len(frame), 'feature')}, {counted(positions, 'position')})"
    problem = too_large(what, found, max_bytes, at_least=True)
    if problem:
        raise ConvertError(problem)


# How libkml says a placemark is drawn; presentation, not data.
_KML_STYLE = ("tessellate", "extrude", "visibility", "drawOrder", "icon", "altitudeMode")


def _kml_data_only(frame: Any) -> Any:
    """Drop KML's drawing columns and the columns libkml adds that no placemark filled."""
    empty = [c for c in frame.columns if c != frame.geometry.name and frame[c].isna().all()]
    return frame.drop(columns=[c for c in frame.columns if c in _KML_STYLE or c in empty])


def _to_wgs84(frame: Any) -> tuple[Any, str | None, list[str]]:
    notes: list[str] = []
    crs = frame.crs
    if crs is None:
        bounds = frame.total_bounds if len(frame) and frame.geometry.notna().any() else None
        if bounds is not None and not (
            bounds[0] >= -360 and bounds[2] <= 360 and bounds[1] >= -90 and bounds[3] <= 90
        ):
            raise ConvertError(
                "the file names no coordinate reference system and its coordinates "
                f"(x {bounds[0]:.6g}..{bounds[2]:.6g}, y {bounds[1]:.6g}..{bounds[3]:.6g}) "
                "are not degrees; add the CRS (for a Shapefile, its .prj file) and try again"
            )
        notes.append("the file names no CRS; its coordinates are degrees, read as WGS84")
        return frame, None, notes
    name = crs.to_string()
    if crs.equals("EPSG:4326") or crs.equals("OGC:CRS84"):
        return frame, name, notes
    try:
        reprojected = frame.to_crs(4326)
    except Exception as exc:
        raise ConvertError(f"cannot reproject from {name} to WGS84: {_gdal_text(exc)}") from None
    notes.append(f"reprojected from {name} to WGS84 (EPSG:4326)")
    return reprojected, name, notes


def columns_rows_shapes(frame: Any) -> tuple[TableJSON, str]:
    """The layer's properties (see :func:`table_json`) and geometries, as JSON texts.

    Everything here is vectorised; the parent zips the parts into features, which costs
    far less than writing one Feature object at a time.
    """
    import shapely  # noqa: PLC0415

    table = table_json(frame.drop(columns=frame.geometry.name))
    shapes = shapely.to_geojson(frame.geometry.array)
    return table, "[" + ",".join(s or "null" for s in shapes.tolist()) + "]"


def convert(request: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Convert the file a request names; return the metadata and three JSON texts."""
    restrict_drivers()
    path = Path(request["path"])
    fmt = request["format"]
    max_bytes = int(request["max_bytes"])
    frame, layers = _read_frame(
        path, fmt, request.get("layer"), Path(request["scratch"]), max_bytes
    )
    _check_decoded(frame, fmt, max_bytes)
    frame, crs, notes = _to_wgs84(frame)
    (columns, rows, float_columns, floats), shapes = columns_rows_shapes(frame)
    # The texts are the layer: measured exactly, and refused before a byte is written.
    found = table_bytes(len(rows) + len(floats) + len(shapes), len(frame), columns)
    what = f"the {_NAMES[fmt]} ({counted(len(frame), 'feature')})"
    problem = too_large(what, found, max_bytes)
    if problem:
        raise ConvertError(problem)
    meta = {
        "crs": crs,
        "layers": [n for n in layers if n],
        "notes": notes,
        "columns": columns,
        "float_columns": float_columns,
    }
    return meta, [rows, floats, shapes]
