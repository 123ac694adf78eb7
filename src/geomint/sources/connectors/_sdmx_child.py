"""The SDMX connector's handler in a confinement template: parse one data message.

An SDMX answer is hostile bytes: ``sdmx1`` builds an object per observation and
``to_pandas`` a frame of them, which for 19 MB took 27 s of CPU and 760 MB. So it is
parsed here, in a confined child (:mod:`geomint.confine`), never in the application.
The template calls :func:`prepare` once (imports ``sdmx1``, pandas and the readers of
both formats, by parsing two tiny messages); each child calls :func:`serve`, which reads
the body from one frame and answers with one JSON frame made by :func:`answer`:

* ``{"ok": true, "dims": [...], "attributes": [...], "rows": [[...], ...],
  "deferred": false}``: one row per observation, its dimension values (text) in the
  order of ``dims``, then its value (a finite number, or null when missing), then its
  observation attributes (text or null) in the order of ``attributes``. ``deferred`` is
  true for a message without data whose footer points at a later download.
* ``{"ok": false, "problem": "..."}``: it does not parse as SDMX data, or holds a value
  that is not a finite number.
* ``{"ok": false, "too_many": N}``: more than :data:`MAX_ROWS` observations.
* ``{"ok": false, "memory": true}``: parsing ran out of the child's memory.

:func:`answer` is a plain function of bytes, so tests run it in process; the host
(:mod:`geomint.sources.connectors._confined_sdmx`) trusts none of what it returns.
"""

from __future__ import annotations

import gc
import math
import socket
from io import BytesIO
from typing import Any, Final

import orjson

from geomint.confine import _wire

__all__ = ["MAX_BODY", "MAX_ROWS", "answer", "prepare", "serve"]

MAX_BODY: Final = 8_000_000
"""The largest body a child reads (the connector asks for no more)."""
MAX_ROWS: Final = 100_000
"""The most observations an answer carries."""

_WARM: Final = (
    b'<?xml version="1.0" encoding="UTF-8"?><message:GenericData'
    b' xmlns:message="http://www.sdmx.org/resources/sdmxml/schemas/v2_1/message"'
    b' xmlns:common="http://www.sdmx.org/resources/sdmxml/schemas/v2_1/common"'
    b' xmlns:generic="http://www.sdmx.org/resources/sdmxml/schemas/v2_1/data/generic">'
    b"<message:Header><message:ID>W</message:ID><message:Test>false</message:Test>"
    b'<message:Prepared>2026-01-01T00:00:00Z</message:Prepared><message:Sender id="W"/>'
    b'<message:Structure structureID="W" dimensionAtObservation="TIME_PERIOD">'
    b'<common:Structure><Ref agencyID="W" id="W" version="1.0"/></common:Structure>'
    b'</message:Structure></message:Header><message:DataSet structureRef="W">'
    b'<generic:Series><generic:SeriesKey><generic:Value id="geo" value="FI"/>'
    b'</generic:SeriesKey><generic:Obs><generic:ObsDimension value="2024"/>'
    b'<generic:ObsValue value="1"/><generic:Attributes><generic:Value id="F" value="p"/>'
    b"</generic:Attributes></generic:Obs></generic:Series></message:DataSet>"
    b"</message:GenericData>",
    b'{"header":{"id":"W","test":false,"prepared":"2026-01-01T00:00:00Z",'
    b'"sender":{"id":"W"}},"dataSets":[{"action":"Information","series":{"0":'
    b'{"attributes":[],"observations":{"0":[1.5]}}}}],"structure":{"name":"W",'
    b'"dimensions":{"dataset":[],"series":[{"id":"REF_AREA","name":"Area","values":'
    b'[{"id":"FIN","name":"Finland"}]}],"observation":[{"id":"TIME_PERIOD","name":'
    b'"Time","values":[{"id":"2024","name":"2024"}]}]},"attributes":{"dataSet":[],'
    b'"series":[],"observation":[]}}}',
)


def prepare(settings: dict[str, Any]) -> None:
    """Import sdmx1 and pandas and parse a tiny message of each format, before any fork."""
    import pandas  # noqa: F401, PLC0415 - loaded once here, inherited by every child
    import sdmx  # noqa: F401, PLC0415

    for body in _WARM:
        answer(body)


def serve(sock: socket.socket, _state: None, report: dict[str, Any]) -> None:
    """Read the body, parse it, answer with one frame."""
    # A child lives for one message: the cyclic collector would only rescan its objects.
    gc.disable()
    _wire.receive_descriptors(sock, limit=1)
    body = _wire.read_frame(sock, limit=MAX_BODY)
    _wire.write_frame(sock, answer(body))
    sock.shutdown(socket.SHUT_WR)


def answer(body: bytes) -> bytes:
    """Parse ``body`` as an SDMX data message and say what it holds, as JSON bytes."""
    try:
        return orjson.dumps(_parse(body))
    except MemoryError:
        return orjson.dumps({"ok": False, "memory": True})


def _parse(body: bytes) -> dict[str, Any]:
    import pandas as pd  # noqa: PLC0415 - imported by prepare already
    import sdmx  # noqa: PLC0415
    from sdmx.message import DataMessage  # noqa: PLC0415

    try:
        message = sdmx.read_sdmx(BytesIO(body))
        if not isinstance(message, DataMessage):
            return _problem(f"it is an SDMX {type(message).__name__}, not data")
        footer = [str(text) for text in getattr(message.footer, "text", None) or ()]
        if not message.data:
            deferred = any("http" in line for line in footer)
            return {"ok": True, "dims": [], "attributes": [], "rows": [], "deferred": deferred}
        converted = sdmx.to_pandas(message.data[0], attributes="o")
    except MemoryError:
        raise
    except Exception as exc:  # sdmx1 raises many kinds (AssertionError, KeyError...)
        return _problem(f"it does not parse as SDMX ({type(exc).__name__}: {str(exc)[:200]})")
    # a data set without observation attributes comes back as a Series of the values
    frame = converted.to_frame("value") if isinstance(converted, pd.Series) else converted
    if "value" not in frame.columns:
        return _problem("its observations have no values")
    if len(frame) > MAX_ROWS:
        return {"ok": False, "too_many": len(frame)}
    dims = [str(name) for name in frame.index.names]
    attributes = [str(name) for name in frame.columns if name != "value"]
    rows: list[list[Any]] = []
    for index, record in zip(frame.index, frame.to_dict("records"), strict=True):
        keys = index if isinstance(index, tuple) else (index,)
        value = _value(record["value"])
        if isinstance(value, str):
            return _problem(value)
        row: list[Any] = [str(key) for key in keys]
        row.append(value)
        row.extend(_text(record[name]) for name in frame.columns if name != "value")
        rows.append(row)
    return {"ok": True, "dims": dims, "attributes": attributes, "rows": rows, "deferred": False}


def _value(raw: Any) -> float | str | None:
    """The value as a finite number, None when missing, or why it is neither (text)."""
    if raw is None:
        return None
    try:
        number = float(raw)
    except (TypeError, ValueError):
        return f"an observation's value {str(raw)[:40]!r} is not a number"
    if math.isnan(number):
        return None  # SDMX's NaN: the observation is there, its value is missing
    if not math.isfinite(number):
        return f"an observation's value {str(raw)[:40]!r} is not a finite number"
    return number


def _text(raw: Any) -> str | None:
    return raw if isinstance(raw, str) and raw else None


def _problem(text: str) -> dict[str, Any]:
    return {"ok": False, "problem": text}
