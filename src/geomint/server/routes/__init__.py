"""The web app's routes, one ``APIRouter`` per concern, assembled by
:func:`geomint.server.create_app`.

- :mod:`.page`: the page (``/``, ``/chat/<id>``), ``/api/health``, the bundled streets
  and the static files.
- :mod:`.chats`: the chat list, one chat opened or read back, its parts, an analysis and
  an entry's GeoJSON.
- :mod:`.exports`: downloads: a layer as GeoJSON, CSV or GeoParquet (a raster as
  GeoTIFF), a chart's data as CSV, a figure with its provenance, the whole chat.
- :mod:`.layers`: a layer shown, hidden, faded or reordered from the page.
- :mod:`.rasters`: a raster entry drawn for the map (a PNG) and what its legend needs.
- :mod:`.turns`: a turn (``POST /api/chat``) and the answers to its approval requests.
- :mod:`.uploads`: a file dropped into a chat.

What they share (the agent, the approvals, the rate limit, the chat id check) comes from
the dependencies in :mod:`._deps`, never from a closure.
"""
