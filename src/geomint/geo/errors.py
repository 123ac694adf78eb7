"""The one error geo raises for bad input, and the warning for degrees passed as metres."""

from __future__ import annotations

import warnings

from geomint.errors import ModelFacingError

__all__ = ["GeoInputError", "warn_if_degrees"]

# A real distance in metres is rarely below this; a value in degrees (0.005 is ~550 m) is.
_DEGREE_LIKE_BELOW_M = 1.0
_METRES_PER_DEGREE = 111_320.0


class GeoInputError(ModelFacingError, ValueError):
    """Raise when an input is not the geometry a geo helper expects.

    The message names what was passed and what to pass instead. Its usual reader is the
    model: ``geo`` is in every sandboxed body, and the tools that call it pass on what the
    model asked for, so a tool that lets one escape reports it as the model's to fix. Code
    that catches ``ValueError`` still catches it.
    """


def warn_if_degrees(function: str, argument: str, value: float) -> None:
    """Warn when a distance in metres is so small that it is probably in degrees.

    Args:
        function: The public function that received the value, for the message.
        argument: The argument's name.
        value: The distance the caller passed, meant to be metres.
    """
    if 0 < abs(value) < _DEGREE_LIKE_BELOW_M:
        as_metres = round(abs(value) * _METRES_PER_DEGREE)
        warnings.warn(
            f"{function}() got {argument}={value!r}, which looks like degrees, not metres "
            f"({abs(value)!r}° is about {as_metres} m at the equator); pass metres, "
            f"e.g. {function}(..., {as_metres})",
            UserWarning,
            stacklevel=3,
        )
