"""The ``geomint`` command line. Thin: each command parses, calls the library, prints."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from geomint._commands import chat as chat_commands
from geomint._commands import chats as chats_commands
from geomint._commands import demo as demo_command
from geomint._commands import mcp as mcp_command
from geomint._commands import serve as serve_command
from geomint.errors import SandboxUnavailableError, UsageError

__all__ = ["app"]

app = typer.Typer(
    name="geomint",
    help="geomint: a toolkit for map and GIS agents. The model chooses; code mints.",
    no_args_is_help=True,
    add_completion=False,
)


app.add_typer(chats_commands.app, name="chats")
app.add_typer(chat_commands.app, name="chat")
app.command("demo")(demo_command.demo)
app.command("serve")(serve_command.serve)
app.command("mcp")(mcp_command.mcp)


@app.callback()
def _root() -> None:
    """geomint: a toolkit for map and GIS agents."""


@app.command("run-code")
def run_code(
    file: Annotated[
        Path,
        typer.Argument(
            help="A Python function body to run.", exists=True, dir_okay=False, readable=True
        ),
    ],
    inputs: Annotated[
        Path | None,
        typer.Option(
            "--inputs",
            help="A JSON object; each key becomes an identifier in the code.",
            exists=True,
            dir_okay=False,
            readable=True,
        ),
    ] = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Wall-clock seconds.")] = 10.0,
    memory_mb: Annotated[int, typer.Option("--memory-mb", help="Memory budget in MB.")] = 1024,
    mode: Annotated[
        str, typer.Option("--mode", help="auto, isolated, restricted or in-process.")
    ] = "auto",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object with the result's fields.")
    ] = False,
) -> None:
    """Run a body in the sandbox and print its result.

    Exits 0 whenever the code ran or was refused (the result says which); 2 for a usage
    error; 3 when the sandbox could not start.
    """
    from geomint.sandbox import Sandbox  # noqa: PLC0415 - keep `geomint --help` fast

    code = file.read_text(encoding="utf-8")
    data = _read_inputs(inputs)
    try:
        with Sandbox(timeout_s=timeout, memory_mb=memory_mb, mode=mode) as sandbox:  # type: ignore[arg-type]
            result = sandbox.run(code, data)
    except UsageError as exc:
        _fail(str(exc), 2)
    except SandboxUnavailableError as exc:
        _fail(f"the sandbox could not start: {exc}", 3)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False))
        return
    typer.echo(f"mode: {result.mode}   {result.duration_ms:.1f} ms")
    if result.stdout:
        typer.echo("--- printed ---")
        typer.echo(result.stdout.rstrip("\n"))
    for figure in result.figures:
        unit = f" {figure.unit}" if figure.unit else ""
        typer.echo(f"figure: {figure.label} = {figure.value}{unit}")
    for layer in result.layers:
        if layer.raster is not None:
            rows, cols = layer.raster.shape[-2:]
            typer.echo(f"layer: {layer.label} (raster {rows} x {cols})")
            continue
        features = (layer.data or {}).get("features")
        count = len(features) if isinstance(features, list) else 0
        typer.echo(f"layer: {layer.label} ({count} features)")
    typer.echo(
        "--- result ---"
        if result.ok
        else "--- refused ---"
        if result.violations
        else "--- error ---"
    )
    typer.echo(result.for_model())


@app.command("ingest")
def ingest(
    source: Annotated[
        str,
        typer.Argument(
            help="A file (GeoJSON, GeoJSON lines, GeoParquet, GeoPackage, zipped Shapefile, "
            "FlatGeobuf, KML/KMZ, CSV) or an http(s) URL."
        ),
    ],
    max_bytes: Annotated[
        int, typer.Option("--max-bytes", help="Refuse a source larger than this.")
    ] = 25_000_000,
    timeout_s: Annotated[
        float, typer.Option("--timeout", help="Seconds for a download or a binary read.")
    ] = 15.0,
    layer: Annotated[
        str | None, typer.Option("--layer", help="Which layer of a multi-layer file.")
    ] = None,
    allow_network: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-network",
            help="A private CIDR range a URL may reach (e.g. 10.0.0.0/8); repeatable.",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object: the report or the error.")
    ] = False,
) -> None:
    """Judge a source as geomint would take it in: accepted with a report, or refused.

    Exits 0 whenever the source was judged (accepted or refused); 2 for a usage error
    such as a missing file.
    """
    from geomint import intake  # noqa: PLC0415 - keeps other commands' start-up light

    is_url = "://" in source
    if not is_url and not Path(source).is_file():
        _fail(f"{source}: no such file", 2)
    try:
        layer_ = intake.load(
            source if is_url else Path(source),
            max_bytes=max_bytes,
            timeout_s=timeout_s,
            layer=layer,
            allowed_networks=tuple(allow_network or ()),
        )
    except intake.IntakeError as exc:
        if as_json:
            refused = {"accepted": False, "error": str(exc), "problems": list(exc.problems)}
            typer.echo(json.dumps(refused, ensure_ascii=False))
        else:
            typer.echo(f"refused: {exc}")
        return
    except ValueError as exc:  # a malformed --allow-network range
        _fail(str(exc), 2)
    judged = {"accepted": True, "report": layer_.report.as_dict(), "profile": layer_.profile()}
    if as_json:
        typer.echo(json.dumps(judged, ensure_ascii=False, default=str))
        return
    report = layer_.report
    typer.echo(
        f"accepted: {report.feature_count:,} features from {report.source} "
        f"({report.format}, {report.source_crs or 'no CRS named'})"
    )
    typer.echo(json.dumps(judged["profile"], ensure_ascii=False, indent=2, default=str))
    for warning in report.warnings:
        typer.echo(f"warning: {warning}")


def _read_inputs(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        _fail(f"--inputs {path}: not readable JSON ({exc})", 2)
    if not isinstance(data, dict):
        _fail(
            f"--inputs {path}: must be a JSON object whose keys become names in the code, "
            f"got {type(data).__name__}",
            2,
        )
    return dict(data)


def _fail(message: str, code: int) -> typer.Exit:
    typer.echo(f"geomint: {message}", err=True)
    raise typer.Exit(code)


def main() -> None:  # pragma: no cover - the console script entry point
    """Run the command line."""
    sys.exit(app())
