"""Fetch a pinned npm package's tarball for the build scripts: ``npm pack`` of an exact
version, checked against the registry's integrity string pinned in the script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path


def npm_pack(name: str, version: str, integrity: str, into: Path) -> Path:
    """Download ``name@version`` into ``into`` and return the tarball's path; exit when
    npm is missing or the tarball is not the pinned one."""
    npm = shutil.which("npm")
    if npm is None:
        sys.exit("npm is needed: install Node.js 20 or newer")
    spec = f"{name}@{version}"
    out = subprocess.run(  # noqa: S603 - npm with a pinned spec
        [npm, "pack", "--json", "--pack-destination", str(into), spec],
        check=True,
        capture_output=True,
        text=True,
    )
    (meta,) = json.loads(out.stdout)
    if meta["integrity"] != integrity:
        sys.exit(f"{spec}: tarball integrity {meta['integrity']} is not the pinned one")
    return into / meta["filename"]
