"""Pure geometry helpers, no I/O: GeoJSON and shapely conversion, metre-true measurement, buffers,
h3 bucketing, route progress, incident clustering. Imports nothing of geomint's.

Not built yet: see the open issues.
"""
