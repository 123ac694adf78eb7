"""Place search, geocoding, boundaries, routing, reachable ranges and traffic: protocols and
implementations.

Not built yet: see the open issues.
"""
