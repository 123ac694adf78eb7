"""Attack 19: map code's host side (replay, verify, the fold, the answer parser) against
forged operations and odd but legal call sequences. Each test here failed when written:
it shows a weakness, and says what should happen instead."""

from __future__ import annotations

from typing import Any

from geomint.codegen.pipeline import extract_code
from geomint.codegen.style import apply_diff
from geomint.codegen.verify import Verified, verify_ops
from geomint.sandbox import MapView

STYLE: dict[str, Any] = {
    "sources": {"places-1": {"type": "geojson", "geomint": True}},
    "layers": [
        {"id": "places-1-fill", "type": "fill", "source": "places-1", "geomint": True},
        {"id": "places-1-circle", "type": "circle", "source": "places-1", "geomint": True},
    ],
    "entries": ["places-1"],
}

#: The map after an earlier change (m1) added the source ``mine`` and the layer ``old``.
AFTER_M1: dict[str, Any] = {
    "sources": {
        "places-1": {"type": "geojson", "geomint": True},
        "mine": {"type": "geojson", "data": {"blob": "a" * 64}},
    },
    "layers": [
        {"id": "places-1-circle", "type": "circle", "source": "places-1", "geomint": True},
        {"id": "old", "type": "circle", "source": "mine", "paint": {"circle-radius": 3}},
    ],
    "entries": ["places-1"],
}


def _op(name: str, **args: Any) -> dict[str, Any]:
    return {"op": name, "args": args, "line": 1}


FADE_IN = [
    {"at": 0, "paint": {"circle-opacity": 0}},
    {"at": 1, "paint": {"circle-opacity": 1}},
]


def test_animating_a_layer_then_removing_it_is_a_violation_not_a_crash() -> None:
    """Attack: honest-looking code adds a layer, animates it, then removes it (or a hostile
    child sends those three ops). The diff keeps the animation of a layer that is no longer
    there, ``_check_animation`` (verify.py) looks its type up as ``""`` and
    ``stylespec._property`` raises ``ValueError("unknown layer type ''")`` out of
    ``verify_ops``, whose contract is "the diff, or every violation found". Instead: a
    violation (the model can fix it), or the animation dropped with the layer."""
    ops = [
        _op("add_layer", layer={"id": "h", "type": "circle", "source": "places-1"}, before=None),
        _op("animate", layer_id="h", keyframes=FADE_IN, duration_ms=1000, repeat=False),
        _op("remove_layer", layer_id="h"),
    ]
    result = verify_ops(STYLE, ops)
    assert isinstance(result, list | Verified)


def test_replacing_an_earlier_layer_with_an_unknown_type_is_a_violation_not_a_crash() -> None:
    """Attack: remove a layer an earlier change added, and add one with the same id and a
    layer type that does not exist. The layer existed before the run, so ``_diff`` lists
    it as *updated* (never as added), ``validate_layer`` is never run on it, and
    ``_check_update`` calls ``validate_paint_property("bogus", ...)``, which raises
    ``ValueError`` out of ``verify_ops``. Instead: a violation naming the layer type."""
    ops = [
        _op("remove_layer", layer_id="old"),
        _op(
            "add_layer",
            layer={
                "id": "old",
                "type": "bogus",
                "source": "places-1",
                "paint": {"circle-radius": 30},
            },
            before=None,
        ),
    ]
    result = verify_ops(AFTER_M1, ops)
    assert isinstance(result, list) and result, result


def test_replacing_an_earlier_layer_keeps_its_new_type_and_source_in_the_diff() -> None:
    """Attack: remove the circle layer ``old`` (from m1, drawing ``mine``) and add a
    *heatmap* ``old`` over ``places-1`` in one run. ``_diff`` (sandbox/_mapview.py) compares
    only paint, layout, filter, zooms and order of layers present before and after, so the
    stored diff says "set heatmap-radius on old": the change of type and source is lost,
    the page (and ``current_style``) keep a circle layer drawing ``mine`` and get a
    heatmap paint property set on it, and the person approved a description that is not
    what the code did. Instead: the diff removes and re-adds the layer (or the call is
    refused)."""
    ops = [
        _op("remove_layer", layer_id="old"),
        _op(
            "add_layer",
            layer={
                "id": "old",
                "type": "heatmap",
                "source": "places-1",
                "paint": {"heatmap-radius": 30},
            },
            before=None,
        ),
    ]
    result = verify_ops(AFTER_M1, ops)
    if isinstance(result, list):
        return  # refusing the swap is fine
    after = apply_diff(AFTER_M1, result.diff)
    (layer,) = [layer for layer in after["layers"] if layer["id"] == "old"]
    assert layer["type"] == "heatmap" and layer["source"] == "places-1", layer


def test_replacing_an_earlier_source_is_not_silently_dropped() -> None:
    """Attack: remove the source ``mine`` (from m1) and add a new ``mine`` with other data
    and an attribution holding HTML. The source id existed before, so it is in neither
    ``added`` nor ``removed``: ``validate_source`` never sees the new one (its HTML
    attribution is never checked), the new GeoJSON is never stored, and a change that
    "changes nothing" is accepted although the code replaced data. Instead: the diff carries
    the replaced source (removed then added, validated), or the call is refused."""
    ops = [
        _op("remove_layer", layer_id="old"),
        _op("remove_source", source_id="mine"),
        _op(
            "add_source",
            source_id="mine",
            source={
                "type": "geojson",
                "data": {"type": "Point", "coordinates": [1, 2]},
                "attribution": "<img src=x onerror=alert(1)>",
            },
        ),
        _op(
            "add_layer",
            layer={"id": "old", "type": "circle", "source": "mine", "paint": {"circle-radius": 3}},
            before=None,
        ),
    ]
    result = verify_ops(AFTER_M1, ops)
    if isinstance(result, list):
        assert any("attribution" in v.path for v in result), result
        return
    assert "mine" in result.diff["added"]["sources"], result.diff


def test_the_fold_draws_added_layers_in_the_order_the_code_made() -> None:
    """Attack (integrity): add ``a`` then ``b``, both under ``places-1-circle``. The code
    sees ``[places-1-fill, a, b, places-1-circle]``; the diff says ``a`` before ``b`` and
    ``b`` before ``places-1-circle``. ``apply_diff`` (codegen/style.py ``_insert``) adds
    ``a`` first, finds no ``b`` yet and puts ``a`` on top of everything, so the map the
    page and the next run see is ``[places-1-fill, b, places-1-circle, a]``: not what the
    code made nor what was approved. Instead: the fold reproduces the code's order."""
    view = MapView(STYLE)
    view.add_layer({"id": "a", "type": "circle", "source": "places-1"}, before="places-1-circle")
    view.add_layer({"id": "b", "type": "circle", "source": "places-1"}, before="places-1-circle")
    folded = apply_diff(STYLE, view.diff())
    assert [layer["id"] for layer in folded["layers"]] == view.layer_ids()


def test_the_fold_keeps_the_order_of_moved_layers() -> None:
    """Attack (integrity): with map-code layers ``a`` and ``b`` on top, move ``a`` to the
    bottom and ``b`` under ``a``. Each updated layer's ``before`` is resolved against the
    fold's order at the time it is applied, not the final one, so the page shows
    ``[a, places-1-fill, b, places-1-circle]`` instead of the code's
    ``[b, a, places-1-fill, places-1-circle]``."""
    view = MapView(STYLE)
    view.add_layer({"id": "a", "type": "circle", "source": "places-1"})
    view.add_layer({"id": "b", "type": "circle", "source": "places-1"})
    after_m1 = {**apply_diff(STYLE, view.diff()), "entries": ["places-1"]}
    later = MapView(after_m1)
    later.move_layer("a", before="places-1-fill")
    later.move_layer("b", before="a")
    folded = apply_diff(after_m1, later.diff())
    assert [layer["id"] for layer in folded["layers"]] == later.layer_ids()


def test_extract_code_never_raises_on_a_hostile_answer() -> None:
    """Attack: the second model (steered by a prompt injection in an entry's label or
    properties, which reach its prompt) answers with no fence and text that is deeply
    nested Python, e.g. ``"-" * 200_000 + "1"`` or ``"1" + "+1" * 300_000``.
    ``extract_code`` (codegen/pipeline.py) only catches ``SyntaxError`` around
    ``ast.parse``; ``RecursionError`` and ``MemoryError`` escape, so the tool fails with an
    internal error instead of a retry ("the answer held no code"). Instead: a string."""
    for text in ("-" * 200_000 + "1", "a" + ".b" * 300_000):
        assert isinstance(extract_code(text), str)
