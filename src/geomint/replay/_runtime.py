"""The runtime an exported notebook imports: check the saved inputs, re-run each analysis
in geomint's sandbox, and compare what it mints with what the chat recorded.

Nothing of the chat runs in the notebook's kernel. Each analysis's code goes to a
:class:`~geomint.sandbox.Sandbox` (isolated, or restricted where the machine cannot
isolate; never in-process) with the names the original run had: one per entry kind and
its ``<kind>_by_entry`` view, ``now``/``previous``/``log`` where the tool gave them, and
``mint``. The inputs are the exact blobs the chat's store held, each checked against its
sha256 when the replay is opened and again before the code that reads it runs.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import json
import math
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal

from geomint.errors import GeomintError, UsageError
from geomint.provenance import hash_code
from geomint.replay._bundle import MANIFEST_FORMAT, MANIFEST_VERSION
from geomint.replay._write import plain
from geomint.sandbox import (
    RASTER_MEDIA_TYPE,
    Entry,
    Sandbox,
    SandboxResult,
    bytes_raster,
    raster_bytes,
)
from geomint.state import ENTRY_KINDS

__all__ = [
    "INPUT_NAMES",
    "CellReport",
    "FigureCheck",
    "InputChangedError",
    "LayerCheck",
    "Replay",
    "ReplayError",
    "open_replay",
]

#: The names every analysis is given for its entries (as ``geomint.tools`` gives them).
#: The largest saved input a replay reads (the store's own cap on an entry is below it).
MAX_BLOB_BYTES: Final = 1 << 30
INPUT_NAMES: Final = (*ENTRY_KINDS, *(f"{k}_by_entry" for k in ENTRY_KINDS))
_MAGIC: Final = "replay"
_SHA256: Final = re.compile(r"[0-9a-f]{64}")
ReplayMode = Literal["auto", "isolated", "restricted"]


class ReplayError(GeomintError):
    """A replay cannot go on: its folder is not an export, or an analysis id is unknown."""


class InputChangedError(ReplayError):
    """A saved input is missing or is not the bytes the chat read; nothing ran.

    Attributes:
        problems: One line per file: which, and what its hash is against the chat's.
    """

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = tuple(problems)
        listed = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"{len(problems)} saved input{'s' if len(problems) != 1 else ''} of this notebook "
            f"{'are' if len(problems) != 1 else 'is'} not what the chat read, so nothing was "
            f"run:\n{listed}\nExport the chat again to get its inputs back."
        )


@dataclass(frozen=True, kw_only=True)
class FigureCheck:
    """One figure the chat recorded, against what the replay minted.

    Attributes:
        id: The value's id in the chat (``v3``).
        label: Its label.
        unit: Its unit, if any.
        recorded: The value in the chat's ledger.
        replayed: The value the replay minted (None when it minted no figure so labelled).
        status: ``equal``, ``differs`` or ``missing``.
    """

    id: str
    label: str
    unit: str | None
    recorded: Any
    replayed: Any
    status: Literal["equal", "differs", "missing"]

    def line(self) -> str:
        """The check in one line, both values shown when they differ."""
        unit = f" {self.unit}" if self.unit else ""
        head = f"{self.id} {self.label!r}"
        if self.status == "equal":
            return f"  {head} = {self.recorded!r}{unit}: equal to the chat's"
        if self.status == "missing":
            return f"  {head}: the chat has {self.recorded!r}{unit}; the replay minted none"
        return (
            f"  {head}: DIFFERS: the chat has {self.recorded!r}{unit}, "
            f"the replay {self.replayed!r}{unit}"
        )


@dataclass(frozen=True, kw_only=True)
class LayerCheck:
    """One layer the chat recorded, against the one the replay minted with its label.

    Attributes:
        id: The layer's id in the chat (``l2``).
        label: Its label.
        equal: Whether the replayed layer is the chat's: a raster cell for cell (its grid,
            CRS and values), features by their count.
        detail: What was compared, or how they differ.
    """

    id: str
    label: str
    equal: bool
    detail: str

    def line(self) -> str:
        """The check in one line."""
        verdict = "equal to the chat's" if self.equal else "DIFFERS"
        return f"  layer {self.id} {self.label!r}: {verdict}: {self.detail}"


@dataclass(frozen=True, kw_only=True)
class CellReport:
    """What re-running one analysis found.

    Attributes:
        analysis_id: The analysis.
        mode: The sandbox mode it ran in.
        code_as_recorded: Whether the code that ran is the recorded code (by its hash).
        ran: Whether the code completed.
        error: Why it failed, when it did.
        recorded_error: Why it failed in the chat, when it did.
        figures: Each recorded figure against the replayed one.
        layers: Each layer the run minted in the chat against the replayed one.
        extra_figures: Labels of figures the replay minted that the chat did not keep.
        result_equal: Whether the result equals the recorded one (None: none recorded).
        value: What the code returned.
    """

    analysis_id: str
    mode: str
    code_as_recorded: bool
    ran: bool
    error: str | None
    recorded_error: str | None
    figures: tuple[FigureCheck, ...]
    layers: tuple[LayerCheck, ...] = ()
    extra_figures: tuple[str, ...] = ()
    result_equal: bool | None = None
    value: Any = field(default=None, repr=False)

    @property
    def reproduced(self) -> bool:
        """Every recorded figure equal, the result (when recorded) equal, and the run ended
        as it did in the chat."""
        if self.recorded_error is not None:
            return not self.ran
        return (
            self.ran
            and all(f.status == "equal" for f in self.figures)
            and all(layer.equal for layer in self.layers)
            and self.result_equal is not False
        )

    def text(self) -> str:
        """The report as the notebook prints it under the cell."""
        verdict = "reproduced" if self.reproduced else "NOT reproduced"
        lines = [f"{self.analysis_id}: {verdict} (ran in geomint's sandbox, {self.mode})"]
        if not self.code_as_recorded:
            lines.append("  the code was edited: it is not the code the chat ran")
        if self.recorded_error is not None:
            lines.append(f"  it failed in the chat too: {self.recorded_error}")
        if self.error is not None:
            lines.append(f"  it failed: {self.error}")
        lines.extend(f.line() for f in self.figures)
        lines.extend(layer.line() for layer in self.layers)
        if self.extra_figures:
            lines.append(f"  minted too, not in the chat's ledger: {', '.join(self.extra_figures)}")
        if self.result_equal is not None:
            lines.append(
                "  its result equals the chat's"
                if self.result_equal
                else "  its result DIFFERS from the chat's"
            )
        return plain("\n".join(lines))  # labels and errors are the chat's own text


class Replay:
    """An exported chat's analyses, ready to re-run; see :func:`open_replay`.

    Attributes:
        folder: The export's folder (``chat.json`` and ``blobs/``).
        manifest: ``chat.json`` as read.
        reports: What each analysis re-run found, by analysis id (the latest run).
    """

    def __init__(
        self, folder: Path, manifest: dict[str, Any], *, mode: ReplayMode, timeout_s: float
    ) -> None:
        self.folder = folder
        self.manifest = manifest
        self.reports: dict[str, CellReport] = {}
        self._mode = mode
        self._timeout_s = timeout_s
        self._sandbox: Sandbox | None = None

    # -- checking ---------------------------------------------------------------------------

    def check_inputs(self, shas: Sequence[str] | None = None) -> None:
        """Check saved inputs against the hashes the chat recorded (all by default).

        Raises:
            InputChangedError: A file is missing or its bytes changed.
        """
        self._read_checked(list(self.manifest["blobs"]) if shas is None else shas)

    def _read_checked(self, shas: Sequence[str]) -> dict[str, bytes]:
        """The saved bytes by sha256, each read once and checked: what is checked is what
        the code is given, however the file changes afterwards."""
        problems = []
        read = {}
        for sha in dict.fromkeys(shas):
            path = self._blob_path(sha)
            try:
                data = read_blob(path)
            except OSError as exc:
                problems.append(f"{path.name}: {exc.strerror or 'missing'} (the chat read {sha})")
                continue
            found = hashlib.sha256(data).hexdigest()
            if found != sha:
                problems.append(f"{path.name}: its sha256 is {found}, the chat read {sha}")
            read[sha] = data
        if problems:
            raise InputChangedError(problems)
        return read

    def _blob_path(self, sha: str) -> Path:
        # Named by its hash inside blobs/, whatever the manifest says: a manifest cannot
        # point the replay at a file elsewhere on this machine.
        if not _SHA256.fullmatch(sha):
            raise ReplayError(f"{sha!r} in chat.json is not a sha256")
        return self.folder / "blobs" / sha

    # -- running ----------------------------------------------------------------------------

    def analysis(self, analysis_id: str) -> dict[str, Any]:
        """The manifest's record of one analysis.

        Raises:
            ReplayError: No analysis has this id.
        """
        found = self.manifest["analyses"].get(analysis_id)
        if found is None:
            known = ", ".join(self.manifest["analyses"]) or "none"
            raise ReplayError(f"no analysis {analysis_id!r} in this export; it has {known}")
        return dict(found)

    def run(self, analysis_id: str, code: str | None = None) -> CellReport:
        """Re-run one analysis in the sandbox and check its figures against the chat's.

        Args:
            analysis_id: The analysis (``a1``).
            code: The code to run; by default the recorded code. Edited code runs the
                same way, and the report says it was edited.

        Raises:
            InputChangedError: An input it reads changed since the export; nothing ran.
            ReplayError: No analysis has this id.
        """
        record = self.analysis(analysis_id)
        code = record["code"] if code is None else code
        saved = self._read_checked([str(i["sha256"]) for i in record["inputs"]])
        inputs = self._inputs(record, saved)
        sandbox = self._started()
        result = sandbox.run(code, inputs)
        report = _compare(record, result, code, sandbox.mode)
        if record.get("error") is None and record.get("layers"):
            layers = _compare_layers(record["layers"], result, self._blob_path)
            report = replace(report, layers=layers)
        self.reports[analysis_id] = report
        return report

    def _started(self) -> Sandbox:
        if self._sandbox is None:
            self._sandbox = Sandbox(mode=self._mode, timeout_s=self._timeout_s)
        return self._sandbox

    def _inputs(self, record: Mapping[str, Any], saved: Mapping[str, bytes]) -> dict[str, Any]:
        """The names the original run had: entries by kind (merged when several of one
        kind were read, as ``geomint.tools`` merges them), then the tool's extras."""
        inputs: dict[str, Any] = dict.fromkeys(INPUT_NAMES)
        by_kind: dict[str, dict[str, Entry]] = {}
        for read in record["inputs"]:
            by_kind.setdefault(read["kind"], {})[read["entry_id"]] = self._entry(read, saved)
        for kind, by_entry in by_kind.items():
            single = len(by_entry) == 1 or kind == "rasters"
            if single:
                inputs[kind] = next(iter(by_entry.values()))
            else:
                shas = [str(r["sha256"]) for r in record["inputs"] if r["kind"] == kind]
                inputs[kind] = _merged(by_entry, [saved[sha] for sha in shas])
            inputs[f"{kind}_by_entry"] = by_entry
        inputs.update(record["extra"])
        return inputs

    def _entry(self, read: Mapping[str, Any], saved: Mapping[str, bytes]) -> Entry:
        sha = str(read["sha256"])
        handle = f"{read['entry_id']}@{sha[:20]}"
        if self.manifest["blobs"][sha]["media_type"] == RASTER_MEDIA_TYPE:
            return Entry(handle, int(read["version"]), bytes_raster(saved[sha]))
        return Entry(handle, int(read["version"]), json.loads(saved[sha]))

    def __enter__(self) -> Replay:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- the notebook's side ------------------------------------------------------------------

    def cell(self, line: str, cell: str) -> None:
        """The ``%%replay a1`` cell magic: run the cell's code as analysis ``a1``, print the
        report. The code goes to the sandbox as text; the kernel never runs it."""
        analysis_id = line.strip()
        recorded = self.analysis(analysis_id)["code"]
        code = recorded if _unedited(analysis_id, recorded, cell) else cell
        report = self.run(analysis_id, code)
        print(report.text())

    def register_magic(self) -> bool:
        """Register the ``%%replay`` cell magic in the running IPython; False outside one."""
        try:
            from IPython import get_ipython  # noqa: PLC0415 - only inside a notebook
        except ImportError:
            return False
        shell = get_ipython()
        if shell is None:
            return False
        shell.register_magic_function(self.cell, magic_kind="cell", magic_name=_MAGIC)
        return True

    def summary(self) -> str:
        """Every analysis of the chat: reproduced, not reproduced, or not run yet."""
        lines = []
        for analysis_id in self.manifest["analyses"]:
            report = self.reports.get(analysis_id)
            if report is None:
                lines.append(f"{analysis_id}: not run")
            else:
                lines.append(
                    f"{analysis_id}: {'reproduced' if report.reproduced else 'NOT reproduced'}"
                    f" ({sum(f.status == 'equal' for f in report.figures)} of "
                    f"{len(report.figures)} figures equal)"
                )
        others = self.manifest.get("not_by_code") or []
        if others:
            ids = ", ".join(
                f"{v['id']} (by {v['minted_by']})" if v.get("minted_by") else str(v["id"])
                for v in others
            )
            lines.append(f"minted by tools, not by code here, so not recomputed: {ids}")
        done = list(self.reports.values())
        good = sum(r.reproduced for r in done)
        lines.append(
            f"{good} of {len(self.manifest['analyses'])} analyses reproduced"
            + ("" if len(done) == len(self.manifest["analyses"]) else "; some were not run")
        )
        return plain("\n".join(lines))

    @property
    def all_reproduced(self) -> bool:
        """Whether every analysis ran and reproduced what the chat recorded."""
        return len(self.reports) == len(self.manifest["analyses"]) and all(
            r.reproduced for r in self.reports.values()
        )

    def close(self) -> None:
        """Stop the sandbox."""
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None


def open_replay(
    folder: str | Path,
    *,
    mode: ReplayMode = "auto",
    timeout_s: float = 60.0,
    magic: bool = True,
) -> Replay:
    """Open an exported chat's folder and check every saved input against its sha256.

    Nothing runs until an analysis is asked for. Inside IPython the ``%%replay`` cell
    magic is registered, so a cell ``%%replay a1`` runs its code as analysis ``a1``.

    Args:
        folder: The folder beside the notebook (``chat.json`` and ``blobs/``).
        mode: The sandbox's mode: ``auto``, ``isolated`` or ``restricted``. There is no
            in-process replay: a chat's code never runs unconfined.
        timeout_s: Wall-clock budget of each analysis.
        magic: Register the cell magic when running in IPython.

    Raises:
        ReplayError: The folder holds no replay manifest this geomint reads.
        InputChangedError: A saved input is missing or changed; nothing ran.
        UsageError: ``mode`` is ``in-process`` or unknown.
    """
    if mode not in ("auto", "isolated", "restricted"):
        raise UsageError(
            f"a replay runs in the sandbox's auto, isolated or restricted mode, not {mode!r}: "
            "a chat's code never runs unconfined"
        )
    path = Path(folder)
    try:
        manifest = json.loads((path / "chat.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReplayError(f"{path} holds no readable chat.json: {exc}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise ReplayError(f"{path / 'chat.json'} is not a geomint replay manifest")
    if manifest.get("version") != MANIFEST_VERSION:
        raise ReplayError(
            f"{path / 'chat.json'} is version {manifest.get('version')!r}; this geomint reads "
            f"version {MANIFEST_VERSION}"
        )
    replay = Replay(path, manifest, mode=mode, timeout_s=timeout_s)
    replay.check_inputs()
    if magic:
        replay.register_magic()
    return replay


def _compare(record: Mapping[str, Any], result: SandboxResult, code: str, mode: str) -> CellReport:
    minted = list(result.figures)
    checks = []
    for value in record["values"]:
        at = next((i for i, f in enumerate(minted) if f.label == value["label"]), None)
        if at is None:
            checks.append(_check(value, None, "missing"))
            continue
        figure = minted.pop(at)
        status: Literal["equal", "differs"] = (
            "equal" if _same(value["value"], figure.value) else "differs"
        )
        checks.append(_check(value, figure.value, status))
    recorded_result = record.get("result")
    error = None if result.ok else str(result.error)
    result_equal = None
    if result.ok and record.get("error") is None and recorded_result is not None:
        result_equal = _same(recorded_result, result.value)
    kept = {str(v["label"]) for v in record["values"]}
    return CellReport(
        analysis_id=str(record["analysis_id"]),
        mode=mode,
        code_as_recorded=hash_code(code) == record["code_hash"],
        ran=result.ok,
        error=error,
        recorded_error=record.get("error"),
        figures=tuple(checks),
        extra_figures=tuple(f.label for f in minted if f.label not in kept)
        if record.get("error") is None
        else (),
        result_equal=result_equal,
        value=result.value,
    )


def _check(value: Mapping[str, Any], replayed: Any, status: Any) -> FigureCheck:
    return FigureCheck(
        id=str(value["id"]),
        label=str(value["label"]),
        unit=value.get("unit"),
        recorded=value["value"],
        replayed=replayed,
        status=status,
    )


def _same(recorded: Any, replayed: Any) -> bool:
    """Equal as JSON: numbers by value (``3 == 3.0``), a bool only to a bool."""
    if isinstance(recorded, bool) or isinstance(replayed, bool):
        return type(recorded) is type(replayed) and recorded == replayed
    if isinstance(recorded, int | float) and isinstance(replayed, int | float):
        if isinstance(recorded, float) and isinstance(replayed, float):
            return recorded == replayed or (math.isnan(recorded) and math.isnan(replayed))
        return recorded == replayed
    if isinstance(recorded, list) and isinstance(replayed, list):
        return len(recorded) == len(replayed) and all(
            _same(a, b) for a, b in zip(recorded, replayed, strict=True)
        )
    if isinstance(recorded, dict) and isinstance(replayed, dict):
        return recorded.keys() == replayed.keys() and all(
            _same(recorded[k], replayed[k]) for k in recorded
        )
    return bool(recorded == replayed)


def _merged(by_entry: Mapping[str, Entry], blobs: Sequence[bytes]) -> Entry:
    """Several entries of one kind as one collection, their features in order."""
    features: list[Any] = []
    for data in blobs:
        features.extend(json.loads(data)["features"])
    key = "+".join(f"{e.id}@{e.version}" for e in by_entry.values())
    name = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Entry(f"merged:{name}", 1, {"type": "FeatureCollection", "features": features})


def _unedited(analysis_id: str, recorded: str, body: str) -> bool:
    """Whether a ``%%replay`` cell's body is the recorded code as IPython hands it over.

    IPython ends the body with a line break, and strips what look like prompts (a
    doctest's, or ``In [1]: ``) from every line when one begins the cell: the recorded
    code, put through the same transformation, must give the body received, and then the
    recorded code runs.
    """
    if body.removesuffix("\n") == recorded:
        return True
    try:
        from IPython import get_ipython  # noqa: PLC0415 - only inside a notebook

        shell = get_ipython()
        if shell is None:
            return False
        source = shell.input_transformer_manager.transform_cell(
            f"%%{_MAGIC} {analysis_id}\n{recorded}"
        )
        call = ast.parse(source).body[0]
        if not (isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)):
            return False
        return bool(ast.literal_eval(call.value.args[2]) == body)
    except (ImportError, SyntaxError, ValueError, IndexError):
        return False


def _compare_layers(
    recorded: Sequence[Mapping[str, Any]], result: SandboxResult, blob: Callable[[str], Path]
) -> tuple[LayerCheck, ...]:
    minted = list(result.layers)
    checks = []
    for layer in recorded:
        at = next((i for i, m in enumerate(minted) if m.label == layer["label"]), None)
        if at is None:
            checks.append(_layer(layer, equal=False, detail="the replay minted no such layer"))
            continue
        found = minted.pop(at)
        if layer["raster"]:
            checks.append(_layer(layer, **_stored_raster(blob, str(layer["sha256"]), found)))
        else:
            count = len((found.data or {}).get("features") or [])  # type: ignore[arg-type]
            want = int(layer["feature_count"])
            detail = (
                f"{count} features"
                if count == want
                else f"the chat has {want} features, the replay {count}"
            )
            checks.append(_layer(layer, equal=count == want, detail=detail))
    return tuple(checks)


def _layer(layer: Mapping[str, Any], *, equal: bool, detail: str) -> LayerCheck:
    return LayerCheck(id=str(layer["id"]), label=str(layer["label"]), equal=equal, detail=detail)


def read_blob(path: Path) -> bytes:
    """A saved input's bytes: a regular file of at most :data:`MAX_BLOB_BYTES`, opened
    without following a link (an archive someone sent may carry links to ``/dev/zero``,
    to a FIFO, or to files of the recipient's).

    Raises:
        OSError: It is missing, a link, not a regular file, or too large (``strerror``
            says which).
    """
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        handle = os.open(path, flags)
    except OSError as exc:
        reason = "a link, not a file" if exc.errno == errno.ELOOP else "missing"
        raise OSError(exc.errno, reason) from None
    with os.fdopen(handle, "rb") as file:
        found = os.fstat(file.fileno())
        if not stat.S_ISREG(found.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if found.st_size > MAX_BLOB_BYTES:
            raise OSError(errno.EFBIG, f"larger than {MAX_BLOB_BYTES:,} bytes")
        return file.read(MAX_BLOB_BYTES + 1)[:MAX_BLOB_BYTES]


def _stored_raster(blob: Callable[[str], Path], sha: str, found: Any) -> dict[str, Any]:
    """The chat's raster layer against the replay's, without decompressing what the chat
    stored: the replayed raster, checked by the sandbox's protocol, is written as geomint
    stores rasters and its sha256 compared with the layer's (a small stored blob could
    declare a grid of gigabytes; nothing of it is decoded)."""
    minted = found.raster
    if minted is None:
        return {"equal": False, "detail": "the replay minted features, the chat a raster"}
    try:
        replayed = minted.to_raster()
    except ValueError as exc:
        return {"equal": False, "detail": f"the replayed raster cannot be read: {exc}"}
    try:
        read_blob(blob(sha))  # the chat's layer is still there, a plain file
    except OSError as exc:
        return {"equal": False, "detail": f"the chat's layer cannot be read: {exc.strerror}"}
    shape = " x ".join(str(n) for n in replayed.array.shape)
    if hashlib.sha256(raster_bytes(replayed)).hexdigest() == sha:
        return {"equal": True, "detail": f"{shape} cells, every one equal (the same bytes)"}
    return {"equal": False, "detail": f"the replay's {shape} cells are not the chat's"}
