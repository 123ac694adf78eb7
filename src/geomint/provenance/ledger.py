"""The ledger of one chat: every value and layer code minted, and the next id of each.

A :class:`Ledger` never changes. Minting or applying a record returns a new ledger, so
the state of a chat can hold one as a fold over its events (``ledger =
ledger.apply(event.record)``) and an earlier state stays valid after a later event. The
tools mint through the same object, append the record as an event, and the fold applies
that event to get the same ledger back.

Numbering is per chat, across runs: ``v1``, ``v2``, … and ``l1``, ``l2``, …, each counter
only growing. A withdrawn value keeps its number, so no later figure can be mistaken for
it, and applying a record whose number the ledger has reached already is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Final, Literal

from geomint.provenance import merge
from geomint.provenance._ids import (
    LAYER_ID,
    NEAR_LAYER_ID,
    NEAR_VALUE_ID,
    VALUE_ID,
    describe_ids,
    number_of,
)
from geomint.provenance.errors import ReusedIdError, UnknownLayerError, UnknownValueError
from geomint.provenance.records import EntryVersion, Layer, Provenance, Value

__all__ = ["Ledger"]

_NEAR: Final = {"value": NEAR_VALUE_ID, "layer": NEAR_LAYER_ID}
_EXAMPLE: Final = {"value": "v3", "layer": "l2"}


class Ledger:
    """The values and layers one chat has minted, in id order.

    Example:
        >>> from datetime import UTC, datetime
        >>> at = datetime(2026, 1, 5, 9, 30, tzinfo=UTC)
        >>> ledger = Ledger()
        >>> first, ledger = ledger.mint_value(label="schools", value=14, minted_at=at)
        >>> second, ledger = ledger.mint_value(label="children", value=2210, minted_at=at)
        >>> second.id, ledger.next_value_id
        ('v2', 'v3')
        >>> Ledger.from_records([first, second]) == ledger
        True
    """

    __slots__ = ("_last_layer", "_last_value", "_layers", "_values", "_withdrawn")

    def __init__(self) -> None:
        """Start the empty ledger of a new chat."""
        self._values: dict[str, Value] = {}
        self._layers: dict[str, Layer] = {}
        self._last_value = 0
        self._last_layer = 0
        self._withdrawn: frozenset[str] = frozenset()

    @classmethod
    def from_records(
        cls,
        values: Iterable[Value] = (),
        layers: Iterable[Layer] = (),
        *,
        withdrawn: Iterable[str] = (),
    ) -> Ledger:
        """Rebuild a ledger from records already minted, in any order.

        Args:
            values: Every value the chat minted, withdrawn ones included.
            layers: Every layer the chat minted, withdrawn ones included.
            withdrawn: Ids of the records withdrawn since.

        Raises:
            ReusedIdError: Two records share an id.
            UnknownValueError: A withdrawn id names no value given.
            UnknownLayerError: A withdrawn id names no layer given.
        """
        ledger = cls()
        for record in sorted(values, key=lambda v: number_of(v.id)):
            ledger = ledger.apply(record)
        for layer in sorted(layers, key=lambda lay: number_of(lay.id)):
            ledger = ledger.apply(layer)
        for record_id in withdrawn:
            ledger = ledger.withdraw(record_id)
        return ledger

    # -- reading ---------------------------------------------------------------------

    @property
    def values(self) -> tuple[Value, ...]:
        """The values that can be cited, in id order (withdrawn ones left out)."""
        return tuple(v for k, v in self._values.items() if k not in self._withdrawn)

    @property
    def layers(self) -> tuple[Layer, ...]:
        """The layers that can be cited, in id order (withdrawn ones left out)."""
        return tuple(v for k, v in self._layers.items() if k not in self._withdrawn)

    @property
    def withdrawn(self) -> frozenset[str]:
        """Ids of the values and layers withdrawn; their numbers are never reissued."""
        return self._withdrawn

    @property
    def next_value_id(self) -> str:
        """The id the next value minted in this chat will take."""
        return f"v{self._last_value + 1}"

    @property
    def next_layer_id(self) -> str:
        """The id the next layer minted in this chat will take."""
        return f"l{self._last_layer + 1}"

    def __contains__(self, record_id: object) -> bool:
        """True when ``record_id`` names a value or layer of this chat that can be cited."""
        return (
            isinstance(record_id, str)
            and record_id not in self._withdrawn
            and (record_id in self._values or record_id in self._layers)
        )

    def value(self, value_id: str) -> Value:
        """Return the value ``value_id`` names.

        Raises:
            UnknownValueError: The chat never minted it, withdrew it, or the id names a
                layer or is not an id; the message lists the ids that can be cited.
        """
        if value_id in self:
            found = self._values.get(value_id)
            if found is not None:
                return found
        known = tuple(v.id for v in self.values)
        message = self._explain("value", value_id, known)
        raise UnknownValueError(message, value_id=str(value_id), known=known)

    def layer(self, layer_id: str) -> Layer:
        """Return the layer ``layer_id`` names.

        Raises:
            UnknownLayerError: The chat never minted it, withdrew it, or the id names a
                value or is not an id; the message lists the ids that can be cited.
        """
        if layer_id in self:
            found = self._layers.get(layer_id)
            if found is not None:
                return found
        known = tuple(lay.id for lay in self.layers)
        message = self._explain("layer", layer_id, known)
        raise UnknownLayerError(message, layer_id=str(layer_id), known=known)

    def record(self, record_id: str) -> Value | Layer:
        """Return the value or layer ``record_id`` names (``v<n>`` or ``l<n>``)."""
        if isinstance(record_id, str) and LAYER_ID.fullmatch(record_id):
            return self.layer(record_id)
        return self.value(record_id)

    # -- changing (each returns a new ledger) ------------------------------------------

    def mint_value(
        self,
        *,
        label: str,
        value: bool | int | float | str,
        unit: str | None = None,
        period: str | None = None,
        sources: Iterable[Provenance] = (),
        derived_from: Iterable[str] = (),
        minted_by: str | None = None,
        code_hash: str | None = None,
        inputs: Iterable[EntryVersion] = (),
        minted_at: datetime | None = None,
    ) -> tuple[Value, Ledger]:
        """Mint a value with the next id of this chat.

        Args:
            label: What the figure is, in a few words.
            value: The figure code computed.
            unit: Its unit, or None for a plain count.
            period: The time it describes, when known.
            sources: The provenance of the data it was computed from.
            derived_from: Ids of values or layers of this chat it was computed from; their
                sources and inputs are added to its own (the union, first seen first).
            minted_by: The analysis or operation that minted it.
            code_hash: sha256 of the code that computed it.
            inputs: The entry versions it was computed from.
            minted_at: When it was minted; now (UTC) when not given.

        Returns:
            The new value and the ledger that holds it.

        Raises:
            UnknownValueError: A ``derived_from`` id names nothing this chat can cite.
            pydantic.ValidationError: A field is not what :class:`Value` accepts.
        """
        bases = [self.record(record_id) for record_id in derived_from]
        record = Value(
            id=self.next_value_id,
            label=label,
            value=value,
            unit=unit,
            period=period,
            sources=merge.union(sources, *(b.sources for b in bases)),
            minted_by=minted_by,
            code_hash=code_hash,
            inputs=merge.union_inputs(inputs, *(b.inputs for b in bases)),
            minted_at=datetime.now(UTC) if minted_at is None else minted_at,
        )
        return record, self.apply(record)

    def mint_layer(
        self,
        *,
        label: str,
        entry: EntryVersion,
        feature_count: int,
        bbox: tuple[float, float, float, float] | None = None,
        sources: Iterable[Provenance] = (),
        derived_from: Iterable[str] = (),
        minted_by: str | None = None,
        code_hash: str | None = None,
        inputs: Iterable[EntryVersion] = (),
        minted_at: datetime | None = None,
    ) -> tuple[Layer, Ledger]:
        """Mint a layer with the next layer id of this chat.

        Args:
            label: What the layer shows.
            entry: The entry and version its features are stored as.
            feature_count: How many features it has.
            bbox: ``(west, south, east, north)``, or None when it has no geometry.
            sources: The provenance of the data it was computed from.
            derived_from: Ids of values or layers of this chat it was computed from; their
                sources and inputs are added to its own.
            minted_by: The analysis or operation that minted it.
            code_hash: sha256 of the code that computed it.
            inputs: The entry versions it was computed from.
            minted_at: When it was minted; now (UTC) when not given.

        Returns:
            The new layer and the ledger that holds it.
        """
        bases = [self.record(record_id) for record_id in derived_from]
        record = Layer(
            id=self.next_layer_id,
            label=label,
            entry=entry,
            feature_count=feature_count,
            bbox=bbox,
            sources=merge.union(sources, *(b.sources for b in bases)),
            minted_by=minted_by,
            code_hash=code_hash,
            inputs=merge.union_inputs(inputs, *(b.inputs for b in bases)),
            minted_at=datetime.now(UTC) if minted_at is None else minted_at,
        )
        return record, self.apply(record)

    def apply(self, record: Value | Layer) -> Ledger:
        """Return a ledger that also holds ``record``, minted earlier and stored.

        This is how a fold replays a stored minting. Ids must grow: the record's number
        must be past every number this ledger has issued, gaps allowed (a run whose
        events were lost leaves a gap; it never makes an id free again).

        Raises:
            ReusedIdError: The ledger already issued this id, or a later one.
        """
        number = number_of(record.id)
        issued = self._last_value if isinstance(record, Value) else self._last_layer
        if number <= issued:
            held = self._values.get(record.id) or self._layers.get(record.id)
            prefix = record.id[0]
            if held is not None:
                reason = f"{record.id} was already minted in this chat ({held.label!r})"
            else:
                reason = f"{record.id} comes after {prefix}{issued} was issued"
            raise ReusedIdError(
                f"cannot apply {record.id}: {reason}; ids are never reissued, so the events "
                f"are repeated or out of order (the next id is {prefix}{issued + 1})"
            )
        ledger = self._copy()
        if isinstance(record, Value):
            ledger._values = {**self._values, record.id: record}
            ledger._last_value = number
        else:
            ledger._layers = {**self._layers, record.id: record}
            ledger._last_layer = number
        return ledger

    def withdraw(self, record_id: str) -> Ledger:
        """Return a ledger in which ``record_id`` can no longer be cited.

        Its number stays issued: no later value or layer takes it.

        Raises:
            UnknownValueError: ``record_id`` names no value this chat can cite.
            UnknownLayerError: ``record_id`` names no layer this chat can cite.
        """
        self.record(record_id)
        ledger = self._copy()
        ledger._withdrawn = self._withdrawn | {record_id}
        return ledger

    # -- plumbing --------------------------------------------------------------------

    def _copy(self) -> Ledger:
        ledger = type(self).__new__(type(self))
        ledger._values = self._values
        ledger._layers = self._layers
        ledger._last_value = self._last_value
        ledger._last_layer = self._last_layer
        ledger._withdrawn = self._withdrawn
        return ledger

    def _explain(
        self, kind: Literal["value", "layer"], given: object, known: tuple[str, ...]
    ) -> str:
        other: Literal["value", "layer"] = "layer" if kind == "value" else "value"
        pattern = VALUE_ID if kind == "value" else LAYER_ID
        if not isinstance(given, str):
            head = f"{given!r} is not a {kind} id"
        elif given in self._withdrawn:
            head = f"{given} was withdrawn in this chat and can no longer be cited"
        elif pattern.fullmatch(given):
            head = f"{given} was never minted in this chat"
        elif given in (self._layers if kind == "value" else self._values):
            head = f"{given} is a {other}, not a {kind}"
        else:
            near = _NEAR[kind].fullmatch(given)
            guess = f"{kind[0]}{near.group(1)}" if near else None
            hint = f"; did you mean {guess}?" if guess in known else ""
            head = f"{given!r} is not a {kind} id ({kind} ids look like {_EXAMPLE[kind]}){hint}"
        return f"{head}; {self._listing(kind, known)}"

    def _listing(self, kind: Literal["value", "layer"], known: tuple[str, ...]) -> str:
        if not known:
            call = "mint.value(...)" if kind == "value" else "mint.layer(...)"
            return f"no {kind}s have been minted in this chat yet; mint one with {call}"
        ids = describe_ids(kind[0], (number_of(k) for k in known))
        issued = self._values if kind == "value" else self._layers
        if len(known) == len(issued):
            return f"the {kind}s minted so far are {ids}"
        return f"the {kind}s that can be cited are {ids}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ledger):
            return NotImplemented
        return (
            self._values == other._values
            and self._layers == other._layers
            and self._last_value == other._last_value
            and self._last_layer == other._last_layer
            and self._withdrawn == other._withdrawn
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        values = describe_ids("v", (number_of(k) for k in self._values)) or "none"
        layers = describe_ids("l", (number_of(k) for k in self._layers)) or "none"
        return (
            f"Ledger(values={values}, layers={layers}, next={self.next_value_id}/"
            f"{self.next_layer_id}, withdrawn={len(self._withdrawn)})"
        )
