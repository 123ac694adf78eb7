"""Typed UI parts as rich renderables: what ``geomint chat`` prints, without a terminal.

Pure functions from a part to something :meth:`rich.console.Console.print`
accepts, so each one can be tested by recording a console. Every function cuts long text
and none prints a GeoJSON body: a map layer becomes a line with its id, size and licence.

Example:
    >>> from rich.console import Console
    >>> console = Console(width=60)
    >>> console.print(render_tool_result("present_figure", True, {"presented": ["v1", "v2"]}))
      ✓ present_figure  presented v1 v2
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from rich.color import Color, ColorParseError
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from geomint.provenance.citations import format_number
from geomint.sandbox.prepare import hides_code
from geomint.ui import (
    ChartPart,
    ClassifiedPart,
    DiscoveryPart,
    DisplayPart,
    EntryPart,
    FigureCard,
    FigurePart,
    MapChangePart,
    MapUndonePart,
    MissPart,
    MonitorRanPart,
    ObservationPart,
    Part,
    RunEndedPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ViewPart,
)

__all__ = [
    "CitedStream",
    "format_value",
    "render_chart",
    "render_check",
    "render_discovery",
    "render_entry",
    "render_event",
    "render_figures",
    "render_tool_call",
    "render_tool_result",
]

MAX_ROWS: Final = 20
"""Rows of a chart drawn before the rest is summarised as "and N more"."""

_LABEL_WIDTH: Final = 24
_ARG_CHARS: Final = 48
_ERROR_CHARS: Final = 400
_BLOCKS: Final = " ▏▎▍▌▋▊▉█"
_PALETTE: Final = ("cyan", "magenta", "green", "yellow", "blue", "red")


def format_value(value: Any) -> str:
    """A number as a person reads it: thousands separated, about six significant digits.

    Example:
        >>> [format_value(v) for v in (1326, 205801.4567, 0.000123456, None)]
        ['1,326', '205,801', '0.000123456', '–']
    """
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return format_number(value)  # as a cited figure reads in the answer's prose
    return _cut(str(value), 60)


class CitedStream:
    """Answer text as it streams, each figure cited by id (``{v3}``) shown as its value and
    unit once its closing brace has arrived; a reference split across deltas is held
    until it is whole.

    Example:
        >>> stream = CitedStream({"v3": "1,326 places"})
        >>> stream.feed("There are {v"), stream.feed("3} here; {v9} is gone.")
        ('There are ', '1,326 places here; [v9] is gone.')
    """

    _PARTIAL: Final = re.compile(r"\{v?\d*$")
    _WHOLE: Final = re.compile(r"\{(v\d{1,9})\}")

    def __init__(self, shown: Mapping[str, str]) -> None:
        self.shown = dict(shown)
        self._held = ""

    def feed(self, delta: str) -> str:
        """The text to print now for ``delta``."""
        text, self._held = self._held + delta, ""
        partial = self._PARTIAL.search(text)
        if partial is not None:
            text, self._held = text[: partial.start()], text[partial.start() :]
        return self._WHOLE.sub(lambda m: self.shown.get(m[1], f"[{m[1]}]"), text)

    def flush(self) -> str:
        """Whatever was held back when the block ended (a brace that opened nothing)."""
        held, self._held = self._held, ""
        return held


def render_check(part: TextPart) -> RenderableType | None:
    """A line under an answer block naming the numbers it typed that match no minted
    figure, and the figures it cited that do not exist; None when there are none."""
    flagged = [s for s in part.segments if s.state in ("unminted", "unknown", "withdrawn")]
    if not flagged:
        return None
    typed = [s.text for s in flagged if s.state == "unminted"]
    missing = [f"{s.ref} ({s.state})" for s in flagged if s.state != "unminted"]
    line = Text("  ⚠ ", style="yellow")
    if typed:
        line.append(f"typed, matching no minted figure: {', '.join(typed)}", style="yellow")
    if missing:
        line.append(("; " if typed else "") + f"cited but not a figure: {', '.join(missing)}",
                    style="yellow")  # fmt: skip
    return line


def _cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _number(value: Any) -> float | None:
    """A chart point as a number: plain numbers, and ``{x, y}`` points by their ``y``."""
    if isinstance(value, Mapping):
        value = value.get("y", value.get("r"))
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


# -- charts --------------------------------------------------------------------------------


class _Bars:
    """One dataset as horizontal bars, scaled to the width it is given when printed."""

    def __init__(
        self,
        labels: Sequence[str],
        values: Sequence[Any],
        *,
        colour: str,
        shares: bool,
        max_rows: int,
    ) -> None:
        self.labels = [_cut(label, _LABEL_WIDTH) for label in labels]
        self.values = list(values)
        self.colour = colour
        self.shares = shares
        self.max_rows = max_rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        numbers = [_number(v) for v in self.values]
        total = sum(abs(n) for n in numbers if n is not None)
        shown = min(len(self.values), self.max_rows)
        texts = []
        for number, raw in zip(numbers[:shown], self.values[:shown], strict=True):
            text = format_value(number if number is not None else raw)
            if self.shares and number is not None and total:
                text += f" ({abs(number) / total:.0%})"
            texts.append(text)
        label_width = max((len(label) for label in self.labels[:shown]), default=0)
        value_width = max((len(t) for t in texts), default=0)
        bar_width = max(8, options.max_width - label_width - value_width - 6)
        largest = max((abs(n) for n in numbers[:shown] if n is not None), default=0.0)
        for label, number, text in zip(self.labels, numbers, texts, strict=False):
            line = Text(f"    {label:<{label_width}} ", no_wrap=True, overflow="ellipsis")
            if number is not None and largest > 0:
                style = "red" if number < 0 else self.colour
                line.append(_bar(abs(number) / largest * bar_width), style=style)
                line.append(" ")
            line.append(text, style="bold")
            yield line
        hidden = len(self.values) - shown
        if hidden > 0:
            yield Text(f"    … and {hidden} more", style="dim")


class _Line:
    """A one-line text cut to the width with an ellipsis (a bare ``Text`` would wrap:
    ``Console.print`` joins texts into a new one and drops their ``no_wrap``)."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        line = self.text.copy()
        line.truncate(options.max_width, overflow="ellipsis")
        yield line

    def __str__(self) -> str:
        return self.text.plain


def _bar(cells: float) -> str:
    """A bar ``cells`` character cells long, to an eighth of a cell; at least a sliver."""
    eighths = max(1, round(cells * 8))
    whole, part = divmod(eighths, 8)
    return "█" * whole + (_BLOCKS[part] if part else "")


def render_chart(
    config: Mapping[str, Any], title: str | None = None, *, max_rows: int = MAX_ROWS
) -> RenderableType:
    """A Chart.js config drawn as horizontal bars, one block per dataset.

    Bar, line and pie charts (and any other type with labels and numbers) draw the same
    way: a label, a bar scaled to the widest value, and the value; a pie also gives each
    slice's share. Past ``max_rows`` rows a dataset ends with "… and N more".

    Args:
        config: ``{type, data: {labels, datasets: [{label, data}]}, options?}``.
        title: What the chart is called (its analysis name), when the config has no title.
        max_rows: Rows per dataset.
    """
    kind = str(config.get("type") or "chart")
    data = config.get("data")
    data = data if isinstance(data, Mapping) else {}
    datasets = [d for d in data.get("datasets") or [] if isinstance(d, Mapping)]
    raw_labels = data.get("labels")
    labels = [str(label) for label in raw_labels] if isinstance(raw_labels, list) else []
    heading = Text("  ▤ ", style="bold")
    heading.append(_cut(_chart_title(config) or title or f"{kind} chart", 70), style="bold")
    heading.append(f"  ({kind} chart)", style="dim")
    blocks: list[RenderableType] = [heading]
    if not datasets:
        blocks.append(Text("    (no data in this chart)", style="dim"))
    for index, dataset in enumerate(datasets):
        values = dataset.get("data")
        values = list(values) if isinstance(values, list) else []
        names = labels + [str(i + 1) for i in range(len(labels), len(values))]
        if len(datasets) > 1 or dataset.get("label"):
            name = _cut(str(dataset.get("label") or f"dataset {index + 1}"), 60)
            blocks.append(Text(f"    {name}", style="italic"))
        blocks.append(
            _Bars(
                names[: len(values)],
                values,
                colour=_PALETTE[index % len(_PALETTE)],
                shares=kind in ("pie", "doughnut", "polarArea"),
                max_rows=max_rows,
            )
        )
    return Group(*blocks)


def _chart_title(config: Mapping[str, Any]) -> str | None:
    options = config.get("options")
    plugins = options.get("plugins") if isinstance(options, Mapping) else None
    title = plugins.get("title") if isinstance(plugins, Mapping) else None
    text = title.get("text") if isinstance(title, Mapping) else None
    if isinstance(text, list):
        text = " ".join(map(str, text))
    return str(text) if text else None


# -- figures -------------------------------------------------------------------------------


def render_figures(cards: Iterable[FigureCard], title: str | None = None) -> RenderableType:
    """Figure cards as a panel: each value with its unit, label, id and sources.

    A card's period follows its label (``period 2020``, ``period not stated``); a source
    reads ``publisher · licence · date retrieved``; repeated ones are shown once.

    Args:
        cards: The figure cards.
        title: The panel's title (``present_figure``'s title).
    """
    table = Table(box=None, show_header=False, padding=(0, 1), expand=False)
    table.add_column("id", style="cyan", no_wrap=True)
    table.add_column("value", justify="right", style="bold", no_wrap=True)
    table.add_column("about")
    for card in cards:
        value = format_value(card.value) + (f" {card.unit}" if card.unit else "")
        about = Text(_cut(card.label, 160))
        if card.period is not None:
            about.append(f"\nperiod {_cut(card.period, 100)}", style="italic")
        for source in _sources(card):
            about.append(f"\n{source}", style="dim")
        table.add_row(card.id, value, about)
    panel = Panel(
        table,
        title=Text(_cut(title, 70), style="bold") if title else None,
        title_align="left",
        border_style="green",
        expand=False,
    )
    return Padding(panel, (0, 0, 0, 2), expand=False)


def _sources(card: FigureCard) -> list[str]:
    lines: list[str] = []
    for source in card.sources:
        parts = [
            source.publisher or source.title or source.source_id,
            source.licence or "licence unknown",
            source.retrieved_at.isoformat()[:10],
        ]
        line = " · ".join(_cut(p, 60) for p in parts)
        if line not in lines:
            lines.append(line)
    if not lines and card.licences:
        lines.append(", ".join(card.licences))
    return lines or ["no source recorded"]


# -- tool calls ----------------------------------------------------------------------------


def render_tool_call(
    name: str, args: Mapping[str, Any] | None, *, verbose: bool = False
) -> RenderableType:
    """A tool call as one line, ``→ name(arg=value, ...)``; with ``verbose`` the code too.

    A ``code`` argument shows as ``code=<N lines>``; ``verbose`` adds it below the line,
    syntax-highlighted.
    """
    args = args or {}
    line = Text("  → ", style="dim")
    line.append(name, style="bold")
    shown = []
    for key, value in args.items():
        if key == "code" and isinstance(value, str):
            count = value.count("\n") + 1
            shown.append(f"code=<{count} line{'s' if count != 1 else ''}>")
        else:
            text = repr(_cut(value, _ARG_CHARS - 2)) if isinstance(value, str) else _repr(value)
            shown.append(f"{key}={_cut(text, _ARG_CHARS)}")
    line.append(f"({', '.join(shown)})", style="dim")
    code = args.get("code")
    if verbose and isinstance(code, str) and code.strip():
        syntax = Syntax(
            visible_code(code), "python", line_numbers=True, word_wrap=True, theme="ansi_dark"
        )
        panel = Panel(syntax, border_style="dim", expand=False, padding=(0, 1))
        return Group(_Line(line), Padding(panel, (0, 0, 0, 4), expand=False))
    return _Line(line)


def visible_code(code: str) -> str:
    """Code as it may be shown: every invisible format character (a bidirectional control
    such as U+2067, a zero-width joiner) written out as ``⟨U+2067⟩``, so code cannot read
    as something other than what runs (Trojan Source)."""
    shown = code.replace("\r\n", "\n")  # a Windows line ending is a line ending
    return "".join(f"⟨U+{ord(c):04X}⟩" if hides_code(c) else c for c in shown)


def _repr(value: Any) -> str:
    if isinstance(value, str):
        return repr(value)
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except ValueError:
        return repr(value)


def render_tool_result(name: str, ok: bool, result: Any) -> RenderableType:
    """A tool result as one line: ✓ or ✗, then what it made or why it failed.

    Made things are entry ids (with versions), analysis ids and figure ids with their
    values; a failure gives the error and its hint, cut to a few hundred characters.
    """
    line = Text("  ")
    line.append("✓ " if ok else "✗ ", style="bold green" if ok else "bold red")
    line.append(name, style="bold")
    data = result if isinstance(result, Mapping) else {}
    if not ok:
        error = data.get("error") if data else result
        line.append("  " + _cut(str(error or "failed"), _ERROR_CHARS), style="red")
        hint = data.get("hint")
        if hint:
            line.append("  hint: ", style="bold yellow")
            line.append(_cut(str(hint), _ERROR_CHARS), style="yellow")
        return line
    parts = _made(data) if data else ([_cut(str(result), 80)] if result else [])
    if parts:
        line.append("  " + " · ".join(parts), style="dim")
    return _Line(line)


def _made(data: Mapping[str, Any]) -> list[str]:
    parts: list[str] = []
    if data.get("analysis_id"):
        parts.append(str(data["analysis_id"]))
    if data.get("entry_id"):
        version = f" v{data['version']}" if data.get("version") else ""
        parts.append(f"{data['entry_id']}{version}")
    digest = data.get("digest")
    if isinstance(digest, Mapping) and "feature_count" in digest:
        count = digest["feature_count"]
        parts.append(f"{format_value(count)} feature{'' if count == 1 else 's'}")
    if isinstance(data.get("changed"), list):
        parts.append(" ".join(map(str, data["changed"])) or "nothing changed")
    if isinstance(data.get("visible"), bool):
        parts.append("shown" if data["visible"] else "hidden")
    figures = data.get("figures")
    if isinstance(data.get("presented"), list):
        parts.append(f"presented {' '.join(map(str, data['presented']))}")
    elif isinstance(figures, list):
        for figure in figures:
            if isinstance(figure, Mapping):
                unit = f" {figure['unit']}" if figure.get("unit") else ""
                parts.append(f"{figure.get('id')} = {format_value(figure.get('value'))}{unit}")
    if "result" in data and not data.get("figures"):
        parts.append(f"result {_brief(data['result'])}")
    tools = data.get("tools")
    if isinstance(tools, Mapping):
        tools = tools.get("items")  # a list cut to the model's budget
    if isinstance(tools, list):
        names = [str(t.get("name")) for t in tools if isinstance(t, Mapping)]
        parts.append(f"{len(names)} tools: {', '.join(names)}")
    if data.get("monitor"):
        parts.append(_cut(str(data["monitor"]), 60))
    return parts


def _brief(value: Any) -> str:
    if isinstance(value, list):
        return f"list of {len(value)}"
    if isinstance(value, Mapping) and value.get("type") and value.get("data"):
        return f"{value['type']} chart"
    return _cut(_repr(value), 60)


# -- map entries and the rest --------------------------------------------------------------


def render_entry(part: EntryPart, *, hidden: bool = False) -> RenderableType:
    """A map entry as one line: id, version, label, feature count, licence; never its GeoJSON."""
    line = Text("  ▣ ", style=_colour(part.style.color if part.style else None))
    line.append(part.entry_id, style="bold cyan")
    line.append(f" v{part.version}", style="cyan")
    line.append(f"  {_cut(part.label, 60)}")
    details = []
    if part.features is not None:
        details.append(f"{format_value(part.features)} feature{'s' if part.features != 1 else ''}")
    licences = list(dict.fromkeys(s.licence for s in part.sources))
    details.append(", ".join(licences) if licences else "no licence recorded")
    if hidden:
        details.append("hidden")
    line.append("  " + " · ".join(details), style="dim")
    return _Line(line)


def _colour(color: str | None) -> str:
    """A style's colour as the terminal can show it (blue where it cannot)."""
    if color:
        try:
            Color.parse(color)
        except ColorParseError:
            return "blue"
        return color
    return "blue"


def _display(part: DisplayPart) -> RenderableType:
    said = []
    if part.removed:
        said.append("removed from the map")
    elif part.visible is not None:
        said.append("shown" if part.visible else "hidden")
    if part.style and part.style.color_by:
        by = part.style.color_by
        said.append(f"coloured by {by.property} in {len(by.classes)} classes")
    elif part.style:
        said.append("restyled")
    line = Text("  ◐ ", style=_colour(part.style.color if part.style else None))
    where = "" if part.removed else " on the map"
    line.append(f"{part.entry_id} {' and '.join(said)}{where}", style="blue")
    return line


def render_event(part: Part, *, verbose: bool = False) -> RenderableType | None:
    """Any part but text and progress as a renderable, or None when it has none.

    Quiet by default: the parts a person needs (charts, figures, entries, monitors,
    conflicts, misses, errors); ``verbose`` adds the classifier's pick, display changes
    and map views.
    """
    match part:
        case ToolCallPart():
            return render_tool_call(part.tool, part.args, verbose=verbose)
        case ToolResultPart():
            result = part.result if part.result is not None or part.ok else {"error": part.error}
            return render_tool_result(part.tool, part.ok, result)
        case ChartPart():
            return render_chart(part.config, part.name)
        case FigurePart():
            return render_figures(part.figures, part.title)
        case EntryPart():
            return render_entry(part)
        case DisplayPart() if verbose and (
            part.visible is not None or part.style or part.removed is not None
        ):
            return _display(part)
        case MonitorRanPart():
            return _monitor(part)
        case ObservationPart():
            return _observation(part)
        case MissPart():
            code = f" ({part.code})" if part.code else ""
            return Text(f"  ∅ {part.tool} via {part.provider}{code}: {_cut(part.reason, 300)}",
                        style="yellow")  # fmt: skip
        case RunEndedPart() if part.error:
            return Text(f"✗ {_cut(part.error, 1_000)}", style="bold red")
        case ClassifiedPart() if verbose:
            active = ", ".join(part.active) or "none"
            failed = f"  (classifier failed: {part.failed})" if part.failed else ""
            return Text(f"  tools for this turn: {active}{failed}", style="dim")
        case ViewPart() if verbose:
            where = f"fit {list(part.bbox)}" if part.bbox else f"{part.center} zoom {part.zoom}"
            return Text(f"  ⌖ map view {where}", style="dim")
        case MapChangePart():
            return render_map_change(part.model_dump(mode="json"))
        case MapUndonePart():
            return Text(f"  ↶ map change {part.change_id} undone", style="magenta")
        case DiscoveryPart():
            return render_discovery(part)
    return None


def render_discovery(part: DiscoveryPart) -> RenderableType:
    """A live catalogue search as one line, with its steps under it: each catalogue
    searched, then each dataset the shortlist kept and why."""
    usage: dict[str, Any] = dict(part.usage)
    tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
    head = Text("  ⌕ ", style="cyan")
    head.append(part.summary, style="bold cyan")
    head.append(f"  for {_cut(part.query, 80)!r}" + (f", {tokens:,} tokens" if tokens else ""),
                style="dim")  # fmt: skip
    lines: list[RenderableType] = [head]
    for search in part.searches:
        if search.ok:
            matched = f"{search.matched} match, " if search.matched is not None else ""
            said = f"      searched {search.catalogue}: {matched}read {search.read}"
            lines.append(Text(said, style="dim"))
        else:
            failed = f"      searched {search.catalogue}: failed ({search.code or 'error'})"
            lines.append(Text(f"{failed}: {_cut(search.error or '', 160)}", style="yellow"))
    if part.problem:
        lines.append(Text(f"      not shortlisted: {_cut(part.problem, 200)}", style="yellow"))
    for kept in part.shortlist:
        line = Text(f"      → {kept.id}", style="green")
        line.append(f"  {_cut(kept.title, 80)}")
        if kept.why:
            line.append(f"  ({_cut(kept.why, 160)})", style="dim")
        lines.append(line)
    if part.dropped:
        lines.append(Text(f"      dropped, not in any search: {', '.join(part.dropped)}",
                          style="yellow"))  # fmt: skip
    return Group(*lines)


def render_map_change(change: Mapping[str, Any]) -> RenderableType:
    """A map change (a ``map_change`` part as data) as the terminal shows it: its id and
    description, then the diff one line per source, layer and property (the page draws
    it; the terminal lists it)."""
    head = Text("  ✎ ", style="magenta")
    head.append(str(change["change_id"]), style="bold magenta")
    head.append(f"  {_cut(str(change['description']), 200)}")
    attempts = int(change.get("attempts") or 1)
    tries = f"{attempts} attempt{'s' * (attempts != 1)}"
    usage: dict[str, Any] = dict(change.get("usage") or {})
    tokens = int(usage.get("input_tokens") or 0) + int(usage.get("output_tokens") or 0)
    cost = f", {tokens:,} tokens" if tokens else ""
    head.append(f"  ({tries}{cost})", style="dim")
    lines: list[RenderableType] = [head]
    diff: dict[str, Any] = dict(change["diff"])
    added: dict[str, Any] = diff.get("added") or {}
    for source_id, source in (added.get("sources") or {}).items():
        lines.append(Text(f"      + source {source_id} ({source.get('type')})", style="green"))
    for layer in added.get("layers") or []:
        under = f" under {layer['before']}" if layer.get("before") else ""
        lines.append(
            Text(f"      + layer {layer.get('id')} ({layer.get('type')}){under}", style="green")
        )
    for layer in (diff.get("updated") or {}).get("layers") or []:
        for group in ("paint", "layout"):
            for name, value in (layer.get(group) or {}).items():
                shown = _cut(json.dumps(value), 80)
                lines.append(Text(f"      ~ {layer['id']} {name} = {shown}", style="yellow"))
    for animation in diff.get("animations") or []:
        names = ", ".join(animation["keyframes"][0]["paint"])
        seconds = animation["duration_ms"] / 1000
        lines.append(Text(f"      ▶ {animation['layer_id']} {names} over {seconds:g} s",
                          style="cyan"))  # fmt: skip
    camera = diff.get("camera")
    if camera:
        lines.append(Text(f"      ⌖ camera {json.dumps(camera)}", style="dim"))
    removed: dict[str, Any] = diff.get("removed") or {}
    for what in ("layers", "sources"):
        for gone in removed.get(what) or []:
            lines.append(Text(f"      - {what[:-1]} {gone}", style="red"))
    return Group(*lines)


def _monitor(part: MonitorRanPart) -> RenderableType:
    line = Text("  ↻ ", style="magenta")
    line.append(f"monitor {part.name}", style="bold magenta")
    line.append(f" re-ran on {part.trigger.entry_id} v{part.trigger.version}")
    if part.ok:
        line.append(f"  ✓ {_brief(part.result)}", style="green")
        return _Line(line)
    line.append(f"  ✗ {_cut(part.error or 'failed', 200)}", style="red")
    return line


def _observation(part: ObservationPart) -> RenderableType:
    conflict = part.conflict
    line = Text("  ⚠ conflict ", style="bold yellow")
    for side, value in (("", conflict.a), (" vs ", conflict.b)):
        unit = f" {value.unit}" if value.unit else ""
        line.append(f"{side}{value.id} ({format_value(value.value)}{unit})")
    if conflict.reason:
        line.append(f": {_cut(conflict.reason, 200)}", style="yellow")
    return line
