"""What the offline provider covers, said the same way in every miss: the box of the demo
city's data, and where it lies from a point outside it."""

from __future__ import annotations

import math
from typing import Final

from geomint.providers import bundled

__all__ = ["covered_text", "nearest_covered"]

_EARTH_M: Final = 6_371_008.8
_COMPASS: Final = (
    "north",
    "north-east",
    "east",
    "south-east",
    "south",
    "south-west",
    "west",
    "north-west",
)


def covered_text() -> str:
    """``"central Helsinki (bbox 24.935, 60.164, 24.953, 60.179)"``."""
    west, south, east, north = bundled.bounds()
    return f"central Helsinki (bbox {west:.3f}, {south:.3f}, {east:.3f}, {north:.3f})"


def nearest_covered(lon: float, lat: float) -> str:
    """Where the covered box lies from a point outside it, in a clause of a miss.

    Example:
        >>> nearest_covered(23.7610, 61.4978).split("), ")[1]  # from Tampere
        '160 km south-east'
    """
    west, south, east, north = bundled.bounds()
    # The nearest point of the box, and the distance and bearing to it on a sphere.
    to_lon, to_lat = min(max(lon, west), east), min(max(lat, south), north)
    phi1, phi2 = math.radians(lat), math.radians(to_lat)
    dphi, dlmb = phi2 - phi1, math.radians(to_lon - lon)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
    metres = 2 * _EARTH_M * math.asin(math.sqrt(min(1.0, a)))
    y = math.sin(dlmb) * math.cos(phi2)
    x = math.cos(phi1) * math.sin(phi2) - math.sin(phi1) * math.cos(phi2) * math.cos(dlmb)
    bearing = math.degrees(math.atan2(y, x)) % 360
    where = _COMPASS[round(bearing / 45) % 8]
    distance = f"{metres / 1000:,.0f} km" if metres >= 1_000 else f"{metres:,.0f} m"
    return f"the nearest covered area is {covered_text()}, {distance} {where}"
