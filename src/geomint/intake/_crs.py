"""The legacy ``crs`` member of GeoJSON 2008: accept it, drop it, or reproject from it.

WGS 84 longitude/latitude names (CRS84, EPSG:4326) are removed with a warning; any other
CRS that pyproj knows gives the walk a transform to EPSG:4326 for every position.
"""

from __future__ import annotations

import re
from typing import Any

from geomint.intake._walk import Transform, Walker

__all__ = ["crs_transform"]

_CRS84 = re.compile(r"(?:OGC:(?:1\.3)?:?CRS84|CRS:?84)$", re.IGNORECASE)
_EPSG4326 = re.compile(r"EPSG(?::[\d.]*)?:4326$|EPSG/\d+/4326$", re.IGNORECASE)


def crs_transform(value: Any, walker: Walker) -> Transform | None:
    """Return the reprojection a root's legacy 'crs' member asks for, or None.

    None also when the member is absent, names longitude/latitude or is refused; warnings,
    the repair and any problem are recorded through ``walker``.
    """
    if not isinstance(value, dict) or "crs" not in value:
        return None
    crs = value["crs"]
    if crs is None:
        walker.b.warn(
            "'crs': null (an unknown CRS in GeoJSON 2008) removed; "
            "positions were read as longitude/latitude"
        )
        return None
    props = crs.get("properties") if isinstance(crs, dict) else None
    name = props.get("name") if isinstance(props, dict) else None
    if not isinstance(name, str):
        walker.fail(
            "root: the legacy 'crs' member has no properties.name; remove it if the positions "
            'are longitude/latitude, or name the CRS, e.g. {"type": "name", "properties": '
            '{"name": "EPSG:3857"}}'
        )
        return None
    if _CRS84.search(name):
        walker.b.warn(f"legacy 'crs' member ({name}) is WGS 84 longitude/latitude; removed")
        return None
    if _EPSG4326.search(name):
        walker.b.warn(
            f"legacy 'crs' member ({name}) names EPSG:4326, whose official axis order is "
            "latitude, longitude; positions were read as longitude, latitude as GeoJSON "
            "requires (and GDAL writes): if features land in the wrong place, swap the two "
            "numbers of every position; the member was removed"
        )
        return None
    import pyproj  # noqa: PLC0415 - only reprojecting files pay for pyproj

    try:
        source = pyproj.CRS.from_user_input(name)
    except pyproj.exceptions.CRSError:
        walker.fail(
            f"root: the 'crs' member names {name!r}, which is not a recognised CRS; remove the "
            "member if the positions are longitude/latitude, or reproject the file to "
            "EPSG:4326 first (e.g. ogr2ogr -t_srs EPSG:4326 out.geojson in.geojson)"
        )
        return None
    transformer = pyproj.Transformer.from_crs(source, "EPSG:4326", always_xy=True)
    walker.crs_name = name
    walker.b.repaired("reprojected", -1, f"reprojected from {name} to EPSG:4326")

    def transform(x: float, y: float) -> tuple[float, float]:
        lon, lat = transformer.transform(x, y)
        return float(lon), float(lat)

    return transform
