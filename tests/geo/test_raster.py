"""Raster operations against grids worked out by hand: zonal statistics with partial
cells and nodata, resampling that leaves nodata out, and cell areas on the ellipsoid."""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pytest
import shapely
from pyproj import Transformer

from geomint.geo import GeoInputError
from geomint.geo.raster import Raster, cell_area, resample, zonal_stats

#: A 4 x 4 grid of 10 m cells in ETRS-TM35FIN, its top-left corner at (385,000, 6,672,040).
ORIGIN_X, ORIGIN_Y = 385_000.0, 6_672_040.0
GRID = (10.0, 0.0, ORIGIN_X, 0.0, -10.0, ORIGIN_Y)
NODATA = -9999.0


def values() -> np.ndarray:
    return np.arange(1, 17, dtype="float64").reshape(4, 4)  # row 0 is 1 2 3 4


def box(x0: float, y0: float, x1: float, y1: float) -> shapely.Polygon:
    """A box in cells from the grid's top-left corner (x right, y down)."""
    return shapely.box(
        ORIGIN_X + 10 * x0, ORIGIN_Y - 10 * y1, ORIGIN_X + 10 * x1, ORIGIN_Y - 10 * y0
    )


def zones(*polygons: shapely.Polygon) -> gpd.GeoDataFrame:
    """Zones in EPSG:3067 named z0, z1...: a GeoDataFrame's CRS is the zones' own."""
    names = [f"z{i}" for i in range(len(polygons))]
    return gpd.GeoDataFrame({"name": names}, geometry=list(polygons), crs="EPSG:3067")


def test_a_zone_covering_whole_and_half_cells_matches_the_hand_sum() -> None:
    raster = Raster(values(), GRID, "EPSG:3067")
    # Rows 0-1; column 0 whole, column 1 half: 1 + 5 + (2 + 6) / 2
    (row,) = zonal_stats(raster, zones(box(0, 0, 1.5, 2)), ["sum", "count", "mean", "min", "max"])
    assert row["sum"] == pytest.approx(1 + 5 + (2 + 6) / 2)
    assert row["count"] == pytest.approx(3.0)
    assert row["mean"] == pytest.approx(10.0 / 3.0)
    assert (row["min"], row["max"]) == (1.0, 6.0)  # every cell the zone touches
    assert row["properties"] == {"name": "z0"}


def test_nodata_cells_are_left_out_of_every_statistic() -> None:
    grid = values()
    grid[1, 0] = NODATA  # the 5
    raster = Raster(grid, GRID, "EPSG:3067", NODATA)
    (row,) = zonal_stats(raster, zones(box(0, 0, 1.5, 2)), ["sum", "count", "min", "max"])
    assert row["sum"] == pytest.approx(1 + (2 + 6) / 2)
    assert row["count"] == pytest.approx(2.0)
    assert (row["min"], row["max"]) == (1.0, 6.0)


def test_zones_in_order_and_one_off_the_grid_has_no_statistics() -> None:
    raster = Raster(values(), GRID, "EPSG:3067")
    found = zonal_stats(raster, zones(box(2, 2, 4, 4), box(10, 10, 12, 12)), ["sum", "count"])
    assert found[0]["sum"] == pytest.approx(11 + 12 + 15 + 16)
    assert found[1]["count"] in (0.0, None) and found[1]["sum"] in (0.0, None)


def test_lon_lat_zones_are_reprojected_onto_the_grid() -> None:
    ones = Raster(np.ones((100, 100)), GRID, "EPSG:3067")  # 1 km x 1 km of 10 m cells
    square = box(20, 20, 60, 50)  # 400 m x 300 m: 1,200 cells
    to_lonlat = Transformer.from_crs(3067, 4326, always_xy=True)
    lonlat = shapely.transform(
        shapely.segmentize(square, 10.0),
        lambda xy: np.column_stack(to_lonlat.transform(xy[:, 0], xy[:, 1])),
    )
    (row,) = zonal_stats(ones, [shapely.geometry.mapping(lonlat)], ["count"])
    assert row["count"] == pytest.approx(1200, rel=1e-3)


def test_a_rotated_raster_is_refused_with_what_to_do() -> None:
    rotated = Raster(values(), (10.0, 1.0, ORIGIN_X, 1.0, -10.0, ORIGIN_Y), "EPSG:3067")
    with pytest.raises(GeoInputError, match="north-up"):
        zonal_stats(rotated, zones(box(0, 0, 1, 1)), ["sum"])


def test_a_sum_resampling_leaves_nodata_out_and_keeps_the_total() -> None:
    grid = np.ones((4, 4))
    grid[0, 0] = NODATA
    grid[2:, 2:] = NODATA  # a whole coarse cell without data
    fine = Raster(grid, GRID, "EPSG:3067", NODATA)
    coarse_grid = Raster(np.zeros((2, 2)), (20.0, 0.0, ORIGIN_X, 0.0, -20.0, ORIGIN_Y), "EPSG:3067")

    summed = resample(fine, coarse_grid, "sum").values()
    averaged = resample(fine, coarse_grid, "average").values()

    assert summed[0, 0] == pytest.approx(3.0)  # not 3 - 9999
    assert summed[0, 1] == summed[1, 0] == pytest.approx(4.0)
    assert math.isnan(summed[1, 1])  # no data in: no data out, not zero
    assert np.nansum(summed) == pytest.approx(np.sum(grid != NODATA))
    assert averaged[0, 0] == pytest.approx(1.0)  # the mean of the three with data
    assert math.isnan(averaged[1, 1])


def test_an_unknown_resampling_is_refused_naming_the_methods() -> None:
    raster = Raster(values(), GRID, "EPSG:3067")
    with pytest.raises(GeoInputError, match="nearest, bilinear"):
        resample(raster, raster, "lanczos-ish")


def test_cell_areas_of_a_whole_earth_degree_grid_sum_to_the_ellipsoid() -> None:
    degrees = Raster(np.zeros((180, 360)), (1.0, 0.0, -180.0, 0.0, -1.0, 90.0), "EPSG:4326")
    areas = cell_area(degrees)
    assert areas.shape == (180, 360)
    # The WGS84 ellipsoid's surface: 510,065,621.72 km²
    assert areas.sum() / 1e6 == pytest.approx(510_065_621.72, rel=1e-9)
    assert areas[90, 0] > areas[0, 0] * 50  # a cell at the equator against one at the pole


def test_cell_areas_of_a_projected_grid_are_its_ground_areas() -> None:
    # TM35FIN shrinks distances by its scale factor 0.9996 on its central meridian (27°E):
    # a 100 m cell there covers 100² / 0.9996² m² of ground.
    central = Transformer.from_crs(4326, 3067, always_xy=True).transform(27.0, 62.0)
    grid = (100.0, 0.0, central[0] - 50.0, 0.0, -100.0, central[1] + 50.0)
    areas = cell_area(Raster(np.zeros((1, 1)), grid, "EPSG:3067"))
    assert areas[0, 0] == pytest.approx(100.0**2 / 0.9996**2, rel=2e-4)


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("EPSG:3067", "EPSG:3067"),
        (4326, "EPSG:4326"),
        ("WGS 84", "EPSG:4326"),  # a name GDAL would not read
        # the usual Web Mercator string, a "null" grid and all: kept as its code
        ("+proj=merc +a=6378137 +b=6378137 +lat_ts=0 +lon_0=0 +x_0=0 +y_0=0 +k=1 +units=m "
         "+nadgrids=@null +wktext +no_defs", "EPSG:3857"),
    ],
)  # fmt: skip
def test_a_crs_is_kept_as_its_code_when_it_has_one(given: object, kept: str) -> None:
    assert Raster(values(), GRID, given).crs == kept  # type: ignore[arg-type]


def test_a_crs_is_kept_without_the_files_it_names() -> None:
    bound = Raster(values(), GRID, "+proj=longlat +datum=WGS84 +nadgrids=/tmp/x.gsb +type=crs")
    assert "x.gsb" not in bound.crs and "nadgrids" not in bound.crs.lower()
    assert bound.crs.startswith("GEOGCRS[")  # the lon/lat CRS alone, as WKT2
    for named in ("+init=epsg:4326", "+init=/etc/passwd:x"):
        with pytest.raises(GeoInputError, match="may not name a file"):
            Raster(values(), GRID, named)
    with pytest.raises(GeoInputError, match="at most 20,000 characters"):
        Raster(values(), GRID, "GEOGCRS[" + "x" * 30_000)
