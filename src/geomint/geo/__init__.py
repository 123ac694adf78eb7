"""Pure geometry helpers, no I/O: GeoJSON and shapely conversion, metre-true measurement,
buffers, h3 bucketing, route progress, incident clustering. Imports nothing of geomint's.

Every submodule is imported here, eagerly: the sandbox worker imports ``geomint.geo`` once
before forking children that cannot read the source directory afterwards.
"""

from geomint.geo import (
    clustering,
    construction,
    convert,
    errors,
    indexing,
    measurement,
    raster,
    routes,
)
from geomint.geo.clustering import Cluster, Clustering, cluster
from geomint.geo.construction import buffer_m, difference, intersection, make_valid, union
from geomint.geo.convert import feature_collection, to_feature, to_shapely
from geomint.geo.errors import GeoInputError
from geomint.geo.indexing import (
    Matches,
    Nearest,
    cell_boundary,
    cells_for_points,
    cells_for_polygon,
    nearest,
    points_within,
)
from geomint.geo.measurement import (
    NearestPointOnLine,
    along,
    area_m2,
    bbox,
    bearing,
    centroid,
    destination,
    distance_m,
    length_m,
    midpoint,
    nearest_point_on_line,
    point_in_polygon,
    point_to_line_distance_m,
    vertex_mean,
)
from geomint.geo.routes import (
    coordinate_at_progress,
    progress_between,
    route_progress_at_point,
    section_bbox,
)

__all__ = [
    "Cluster",
    "Clustering",
    "GeoInputError",
    "Matches",
    "Nearest",
    "NearestPointOnLine",
    "along",
    "area_m2",
    "bbox",
    "bearing",
    "buffer_m",
    "cell_boundary",
    "cells_for_points",
    "cells_for_polygon",
    "centroid",
    "cluster",
    "clustering",
    "construction",
    "convert",
    "coordinate_at_progress",
    "destination",
    "difference",
    "distance_m",
    "errors",
    "feature_collection",
    "indexing",
    "intersection",
    "length_m",
    "make_valid",
    "measurement",
    "midpoint",
    "nearest",
    "nearest_point_on_line",
    "point_in_polygon",
    "point_to_line_distance_m",
    "points_within",
    "progress_between",
    "raster",
    "route_progress_at_point",
    "routes",
    "section_bbox",
    "to_feature",
    "to_shapely",
    "union",
    "vertex_mean",
]
