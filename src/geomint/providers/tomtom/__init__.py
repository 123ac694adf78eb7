"""The TomTom provider: TomTom's web APIs, with an API key (``TOMTOM_API_KEY``).

:class:`TomTomProvider` sends the requests; ``_shapes`` reads TomTom's answers into
geomint's shapes and shapes areas for its geometry search.
"""

from __future__ import annotations

from geomint.providers.tomtom._provider import TomTomProvider

__all__ = ["TomTomProvider"]
