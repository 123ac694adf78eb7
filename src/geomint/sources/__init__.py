"""Open-data sources: registry, find_sources, resolve_place, connectors.

Not built yet: see the open issues.
"""
