"""The reply wire: what the host refuses to decode, and that its value count is a bound."""

from __future__ import annotations

import json
from typing import Any

import pytest

from geomint.sandbox import Sandbox
from geomint.sandbox._protocol import MAX_VALUES, Reply, ReplyTooComplexError, count_values

ENVELOPE: dict[str, Any] = {
    "ok": True, "value": 0, "error": None, "figures": [], "layers": [], "stdout": "",
    "stdout_truncated": False, "returned_none": False,
}  # fmt: skip


DOCUMENTS = [
    "0", '""', "[]", "{}", "[[]]", "[0]", "[0,1,2]", '{"a":0}', '{"a":[1,{"b":null}],"c":{}}',
    '["a,b:c[{", 1.5e3, true, false, null]', '[[[[0]]],{"k":{"k":{"k":[]}}}]',
    '{"type":"Feature","geometry":{"type":"Point","coordinates":[13.4,52.5]},'
    '"properties":{"id":7}}',
]  # fmt: skip


def _reply(value: bytes) -> bytes:
    return json.dumps(ENVELOPE).encode().replace(b'"value": 0', b'"value": ' + value)


def _values(node: Any) -> int:
    """Values and object keys in decoded JSON, counted exactly."""
    if isinstance(node, list):
        return 1 + sum(_values(item) for item in node)
    if isinstance(node, dict):
        return 1 + len(node) + sum(_values(item) for item in node.values())
    return 1


@pytest.mark.parametrize("text", DOCUMENTS)
def test_count_values_never_under_counts(text: str) -> None:
    assert count_values(text.encode()) >= _values(json.loads(text))


def test_a_reply_of_too_many_scalars_is_refused_before_decoding() -> None:
    # 22 MB, far under the 64 MB byte cap, but more numbers than the host decodes: each
    # would cost it up to ~70 bytes (15 million floats once grew the host by 1.1 GB).
    value = b"[" + b"0," * MAX_VALUES + b"0]"
    with pytest.raises(ReplyTooComplexError, match=f"over the limit of {MAX_VALUES:,}"):
        Reply.parse(_reply(value))


def test_a_reply_under_the_budget_decodes() -> None:
    items = MAX_VALUES // 100
    reply = Reply.parse(_reply(b"[" + b",".join([b"0"] * items) + b"]"))
    assert reply.value == [0] * items


def test_too_many_scalars_from_a_child_are_a_result_too_large(isolated: Sandbox) -> None:
    # Gate 1 lets this through (it is ordinary code) and the reply is 21 MB: only the
    # value count stops the host from building ten million Python ints.
    result = isolated.run(f"return np.zeros({MAX_VALUES + 500_000}, dtype=np.int8)")
    assert not result.ok
    assert result.error is not None
    assert result.error.type == "ResultTooLarge", result.error
    assert f"over the limit of {MAX_VALUES:,}" in result.error.message
    assert "aggregate" in result.error.message
    assert result.hint is not None
    assert isolated.run("return 1").value == 1
