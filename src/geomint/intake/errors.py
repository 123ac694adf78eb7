"""The one error :func:`geomint.intake.load` raises when it refuses a source."""

from __future__ import annotations

from geomint.errors import GeomintError

__all__ = ["IntakeError"]

_SHOWN = 10


class IntakeError(GeomintError, ValueError):
    """The source was refused as a whole; nothing of it was loaded.

    The message names what is wrong, where (a feature index and a coordinate path such
    as ``features[3].geometry.coordinates[0][2]``) and what to do about it. When there
    are several problems the first few are listed and the rest counted.

    Attributes:
        problems: Every problem found, one line each, in document order.
        timed_out: Judging the source was stopped at its time limit (it may be fine, and
            only large or costly to check).
    """

    def __init__(
        self,
        problems: list[str] | tuple[str, ...],
        *,
        source: str = "input",
        timed_out: bool = False,
    ) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        self.source = source
        self.timed_out = timed_out
        super().__init__(self._render())

    def _render(self) -> str:
        count = len(self.problems)
        if count == 1:
            return f"Cannot load {self.source}: {self.problems[0]}"
        lines = [f"Cannot load {self.source}: {count} problems found; nothing was loaded."]
        lines += [f"  - {problem}" for problem in self.problems[:_SHOWN]]
        if count > _SHOWN:
            lines.append(f"  ... and {count - _SHOWN} more of the same kinds.")
        return "\n".join(lines)
