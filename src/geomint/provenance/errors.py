"""The errors of the provenance rules, split by who reads them.

A model citing an id the chat never minted, typing a number where a figure belongs, or
naming one value twice in a conflict gets a :class:`~geomint.errors.ModelFacingError`
it can act on. A ledger fed a reused id is a broken log or a bug in the caller: a
:class:`~geomint.errors.UsageError`.
"""

from __future__ import annotations

from geomint.errors import ModelFacingError, UsageError

__all__ = [
    "ConflictRefusedError",
    "FigureRefusedError",
    "ReusedIdError",
    "UnknownLayerError",
    "UnknownValueError",
]


class UnknownValueError(ModelFacingError, LookupError):
    """An id that names no value of this chat: never minted, withdrawn, or not a value id.

    Attributes:
        value_id: The id as the model gave it.
        known: The value ids the chat can cite, in id order.
    """

    def __init__(self, message: str, *, value_id: str, known: tuple[str, ...]) -> None:
        super().__init__(message)
        self.value_id = value_id
        self.known = known


class UnknownLayerError(ModelFacingError, LookupError):
    """An id that names no layer of this chat.

    Attributes:
        layer_id: The id as the model gave it.
        known: The layer ids the chat can cite, in id order.
    """

    def __init__(self, message: str, *, layer_id: str, known: tuple[str, ...]) -> None:
        super().__init__(message)
        self.layer_id = layer_id
        self.known = known


class FigureRefusedError(ModelFacingError):
    """What the model asked to show as a figure is not a minted value.

    Attributes:
        problems: One line per refused argument, in the order given.
    """

    def __init__(self, problems: list[str] | tuple[str, ...]) -> None:
        self.problems: tuple[str, ...] = tuple(problems)
        if len(self.problems) == 1:
            message = self.problems[0]
        else:
            lines = "\n".join(f"  - {p}" for p in self.problems)
            message = f"{len(self.problems)} figure arguments were refused:\n{lines}"
        super().__init__(message)


class ConflictRefusedError(ModelFacingError):
    """A conflict that cannot be recorded as asked: one value named twice, or no reason."""


class ReusedIdError(UsageError):
    """A record whose id the ledger has already issued (or passed) was applied to it.

    Ids are never reissued, so a stored event carrying one means the log or its writer is
    wrong; the fold must stop rather than let two figures share an id.
    """
