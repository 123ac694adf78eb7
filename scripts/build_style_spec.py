"""Vendor the MapLibre style specification that ``geomint.codegen.stylespec`` validates against.

Run by hand when the pin changes, never at test or run time::

    .venv/bin/python scripts/build_style_spec.py

It needs ``npm`` with access to the npm registry. It writes ``src/geomint/codegen/spec/``: the
spec's reference JSON (``dist/latest.json`` of the package, minified, keys in their order),
the package's licence and ``VENDOR.json`` (name, version, integrity, sha256), replacing what was
there. The tarball is checked against the pinned integrity hash, so a rebuild either gives the
same files or stops.

Pick the version the vendored MapLibre GL JS depends on (``npm view maplibre-gl@<version>
dependencies``, see ``src/geomint/server/static/vendor/VENDOR.json``), so the validator and the
page read the same specification. A sibling of ``build_web_assets.py`` rather than a part of it,
because that script also builds the basemap with tippecanoe, which this needs none of.
"""

from __future__ import annotations

import hashlib
import json
import tarfile
import tempfile
from pathlib import Path

from _npm import npm_pack

ROOT = Path(__file__).resolve().parent.parent
SPEC_DIR = ROOT / "src" / "geomint" / "codegen" / "spec"

NAME = "@maplibre/maplibre-gl-style-spec"
# maplibre-gl 6.20.0 depends on ^26.11.0; 26.11.0 was the newest 26.x when it was published.
VERSION = "26.11.0"
INTEGRITY = "sha512-MQMBqOkmVm7fLLun2l/bwOv9bURkvyEVISo/OYleb9/nsnfjQ6gs29isysARt5FK/k9RFM4SmH4eMTUQGlv0Pw=="  # noqa: E501
# package.json declares ISC; its LICENSE.txt holds the BSD-3-Clause notices of MapLibre and
# Mapbox and the MIT/BSD ones of code it bundles. Both are recorded; the file is shipped as is.
LICENCE = "ISC"
SPEC_IN_TARBALL = "dist/latest.json"
LICENCE_IN_TARBALL = "LICENSE.txt"

SPEC_FILE = "maplibre-style-spec.json"
LICENCE_FILE = "LICENSE.txt"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def vendor_spec() -> dict[str, object]:
    """Replace ``codegen/spec/`` with the pinned spec, its licence and ``VENDOR.json``."""
    with tempfile.TemporaryDirectory(prefix="geomint-npm-") as tmp:
        work = Path(tmp)
        tarball = npm_pack(NAME, VERSION, INTEGRITY, work)
        with tarfile.open(tarball) as tar:
            tar.extractall(work / "unpacked", filter="data")
        package = work / "unpacked" / "package"
        original = (package / SPEC_IN_TARBALL).read_bytes()
        licence = (package / LICENCE_IN_TARBALL).read_bytes()

    spec = json.loads(original)
    if spec.get("$version") != 8:
        raise SystemExit(f"{NAME}@{VERSION}: expected a v8 reference, got {spec.get('$version')}")
    minified = json.dumps(spec, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    SPEC_DIR.mkdir(parents=True, exist_ok=True)
    for stale in SPEC_DIR.iterdir():
        stale.unlink()
    (SPEC_DIR / SPEC_FILE).write_bytes(minified)
    (SPEC_DIR / LICENCE_FILE).write_bytes(licence)
    manifest: dict[str, object] = {
        "comment": "Written by scripts/build_style_spec.py; do not edit by hand.",
        "name": NAME,
        "version": VERSION,
        "integrity": INTEGRITY,
        "licence": LICENCE,
        "licence_file": LICENCE_FILE,
        "source": SPEC_IN_TARBALL,
        "source_sha256": _sha256(original),
        "path": SPEC_FILE,
        "bytes": len(minified),
        "sha256": _sha256(minified),
    }
    text = json.dumps(manifest, indent=2) + "\n"
    (SPEC_DIR / "VENDOR.json").write_text(text, encoding="utf-8")
    return manifest


def main() -> None:
    """Vendor the spec and print what was written."""
    manifest = vendor_spec()
    print(f"{manifest['name']}@{manifest['version']}: {manifest['bytes']:,} bytes")


if __name__ == "__main__":
    main()
