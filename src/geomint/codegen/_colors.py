"""Enough of CSS colour syntax to refuse garbage: hex, rgb()/rgba()/hsl()/hsla(), names."""

from __future__ import annotations

import re

_NAMES = """
    aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue
    blueviolet brown burlywood cadetblue chartreuse chocolate coral cornflowerblue cornsilk
    crimson cyan darkblue darkcyan darkgoldenrod darkgray darkgreen darkgrey darkkhaki
    darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen
    darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue
    dimgray dimgrey dodgerblue firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite
    gold goldenrod gray green greenyellow grey honeydew hotpink indianred indigo ivory khaki
    lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan
    lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen
    lightskyblue lightslategray lightslategrey lightsteelblue lightyellow lime limegreen linen
    magenta maroon mediumaquamarine mediumblue mediumorchid mediumpurple mediumseagreen
    mediumslateblue mediumspringgreen mediumturquoise mediumvioletred midnightblue mintcream
    mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid
    palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum
    powderblue purple rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown
    seagreen seashell sienna silver skyblue slateblue slategray slategrey snow springgreen
    steelblue tan teal thistle tomato turquoise violet wheat white whitesmoke yellow
    yellowgreen transparent
"""
#: The CSS named colours (CSS Color Module Level 4) and ``transparent``.
NAMED_COLORS = frozenset(_NAMES.split())

_HEX = re.compile(r"#(?:[0-9a-fA-F]{3,4}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})")
_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_PERCENT = rf"{_NUMBER}%"
_ANGLE = rf"{_NUMBER}(?:deg|rad|grad|turn)?"
_ALPHA = rf"(?:{_NUMBER}%?)"
_CHANNEL = rf"(?:{_NUMBER}%?)"
# Both the comma form, rgb(1, 2, 3[, a]), and the space form, rgb(1 2 3[ / a]).
_RGB = re.compile(
    rf"rgba?\(\s*(?:{_CHANNEL}\s*,\s*{_CHANNEL}\s*,\s*{_CHANNEL}(?:\s*,\s*{_ALPHA})?"
    rf"|{_CHANNEL}\s+{_CHANNEL}\s+{_CHANNEL}(?:\s*/\s*{_ALPHA})?)\s*\)"
)
_HSL = re.compile(
    rf"hsla?\(\s*(?:{_ANGLE}\s*,\s*{_PERCENT}\s*,\s*{_PERCENT}(?:\s*,\s*{_ALPHA})?"
    rf"|{_ANGLE}\s+{_PERCENT}\s+{_PERCENT}(?:\s*/\s*{_ALPHA})?)\s*\)"
)

#: Longer than any colour anyone writes; longer strings are refused before any regex runs.
MAX_COLOR_CHARS = 100


def is_color(text: str) -> bool:
    """Whether ``text`` is a CSS colour MapLibre can parse.

    >>> [is_color(c) for c in ("#0af", "rgba(0, 0, 255, 0.5)", "hsl(120 50% 50%)", "bleu")]
    [True, True, True, False]
    """
    if len(text) > MAX_COLOR_CHARS:
        return False
    colour = text.strip().lower()
    return bool(
        colour in NAMED_COLORS
        or _HEX.fullmatch(colour)
        or _RGB.fullmatch(colour)
        or _HSL.fullmatch(colour)
    )
