"""The offline provider: answers from data that ships with geomint, with no key and no network.

:class:`OfflineProvider` geocodes countries, large cities and central Helsinki's named
places, finds boundaries and points of interest, and routes on central Helsinki's road
graph (the router is ``_router``). :func:`category_of` reads a category the way the bundled
data names it; the place tools use it for the user's own layers too.
"""

from __future__ import annotations

from geomint.providers.offline._provider import OfflineProvider, category_of

__all__ = ["OfflineProvider", "category_of"]
