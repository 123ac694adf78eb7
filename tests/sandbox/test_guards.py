"""The worker's call-time guards: analysis code that evaluates text still works, and text
that breaks Gate 1's rules is refused with what to write instead, even when caught."""

from __future__ import annotations

import pytest

from geomint import audit
from geomint.sandbox import Sandbox

pytestmark = pytest.mark.isolation


@pytest.mark.parametrize(
    ("code", "value"),
    [
        (
            "df = pd.DataFrame({'a': [1, 2, 3], 'b c': [3, 2, 1]})\nlimit = 1\n"
            "return len(df.query('a > @limit and `b c` < 2'))",
            1,
        ),
        ("df = pd.DataFrame({'a': [1, 2]})\nreturn list(df.eval('c = a * 2')['c'])", [2, 4]),
        ("df = pd.DataFrame({'a': [1, 2]})\nreturn float(pd.eval('df.a.sum() + 1'))", 4.0),
        (
            "import typing\nclass P:\n    x: 'int'\n    y: 'list[str]'\n"
            "return sorted(typing.get_type_hints(P))",
            ["x", "y"],
        ),
    ],
)
def test_analysis_code_that_evaluates_text_still_runs(
    isolated: Sandbox, code: str, value: object
) -> None:
    result = isolated.run(code)
    assert result.ok, result.for_model()
    assert result.value == value


def test_a_refused_query_says_to_use_boolean_indexing_and_is_logged(isolated: Sandbox) -> None:
    audit.reset()
    result = isolated.run(
        "df = pd.DataFrame({'a': [1, 2]})\nt = ()\n"
        "try:\n    df.query('@t.__class__ == 1')\nexcept Exception:\n    pass\n"
        "return 'carried on'"
    )
    assert not result.ok and result.error is not None
    assert result.error.type == "GateRefused"
    assert result.error.line == 4
    assert "`.__class__` reaches interpreter internals" in result.error.message
    assert "boolean indexing, as in `df[df['a'] > 1]`" in result.error.message
    assert audit.counts()["gate1_refused"] == 1


def test_a_string_annotation_is_checked_when_typing_evaluates_it(isolated: Sandbox) -> None:
    result = isolated.run(
        "import typing\ndef f(x: \"__import__('os')\"):\n    pass\n"
        "return str(typing.get_type_hints(f, {}))"
    )
    assert result.error is not None and result.error.type == "GateRefused"
    assert "annotate with a plain type such as `int`" in result.error.message
