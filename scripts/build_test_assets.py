"""Vendor the browser tests' own packages into ``tests/e2e/vendor/`` (today: axe-core).

Run by hand when the pin changes, never at test time::

    .venv/bin/python scripts/build_test_assets.py

The files are committed, so the tests need neither npm nor the internet. The tarball is
checked against the pinned integrity hash; ``tests/e2e/vendor/VENDOR.json`` records the
version, the integrity and each file's sha256 (a test checks them).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
import tempfile
from pathlib import Path

from _npm import npm_pack

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "tests" / "e2e" / "vendor"

#: name, version, integrity, licence, files taken (the licence file last).
PACKAGES = (
    (
        "axe-core",
        "4.14.1",
        "sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==",
        "MPL-2.0",
        ("axe.min.js", "LICENSE"),
    ),
)


def main() -> None:
    shutil.rmtree(VENDOR, ignore_errors=True)
    records = []
    with tempfile.TemporaryDirectory(prefix="geomint-test-npm-") as work:
        for name, version, integrity, licence, files in PACKAGES:
            tarball = npm_pack(name, version, integrity, Path(work))
            target = VENDOR / name
            target.mkdir(parents=True)
            with tarfile.open(tarball) as tar:
                for file in files:
                    member = tar.extractfile(f"package/{file}")
                    assert member is not None, file
                    (target / file).write_bytes(member.read())
            records.append(
                {
                    "name": name,
                    "version": version,
                    "integrity": integrity,
                    "licence": licence,
                    "licence_file": f"{name}/{files[-1]}",
                    "files": {
                        f"{name}/{file}": hashlib.sha256((target / file).read_bytes()).hexdigest()
                        for file in files
                    },
                }
            )
    manifest = {"written_by": "scripts/build_test_assets.py", "packages": records}
    (VENDOR / "VENDOR.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {VENDOR.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
