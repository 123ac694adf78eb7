"""The dense arm of ``find_sources``: sentences as unit vectors, so a query finds a source
that says the same thing in other words ("inhabitants" for "population").

:class:`~geomint.sources.ranking.DenseArm` is what the ranking needs of an embedding
model. :class:`MiniLMArm` is the one we ship: all-MiniLM-L6-v2 (sentence-transformers,
Apache-2.0), run as a numpy forward pass over int8 weights, with ``tokenizers`` for its
WordPiece vocabulary. It needs the optional extra (``pip install 'geomint[dense]'``) and
a model directory that ``scripts/build_dense_model.py`` writes (``scripts/bootstrap`` builds it into
``.venv/share/geomint/dense``). Without either, :func:`load_minilm` says why and the
ranking runs on BM25 alone (:func:`dense_unavailable` says which is missing).

The file holds every matrix as int8 with one float32 scale per row (symmetric, the row's
largest magnitude maps to 127); the vectors match the float32 model's to a cosine of
0.9994 or better on the build's check sentences (it fails below 0.999 and records the figure).
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "FORMAT",
    "MAX_TOKENS",
    "MODEL_DIR_ENV",
    "MODEL_FILE",
    "RECORD_FILE",
    "TOKENIZER_FILE",
    "DenseUnavailable",
    "MiniLMArm",
    "default_model_dir",
    "dense_unavailable",
    "load_minilm",
    "quantise",
    "shared_minilm",
]

MODEL_FILE: Final = "minilm-l6-v2-int8.npz"
TOKENIZER_FILE: Final = "tokenizer.json"
RECORD_FILE: Final = "minilm-l6-v2-int8.json"
"""What the build wrote it from (the wheel and its sha256), the outputs' sha256, the
licence and the cosine check against float32."""

MODEL_DIR_ENV: Final = "GEOMINT_DENSE_MODEL_DIR"
MAX_TOKENS: Final = 256
"""Longer texts are cut here, as sentence-transformers cuts them for this model."""

FORMAT: Final = 1
"""The layout of the ``.npz``; a file of another layout is refused, not misread."""

_HIDDEN: Final = 384
_HEADS: Final = 12
_LAYERS: Final = 6
_EPS: Final = 1e-12
_BATCH: Final = 32
_QUANTISED: Final = ".q"
_SCALE: Final = ".scale"
_WORDS: Final = "embeddings.word_embeddings.weight"

_log = logging.getLogger(__name__)

Vectors = NDArray[np.float32]


@dataclass(frozen=True, kw_only=True)
class DenseUnavailable:
    """Why there is no dense arm, and what makes one.

    Attributes:
        reason: What is missing and the command that provides it, in one sentence.
    """

    reason: str


@dataclass(frozen=True, kw_only=True)
class _Layer:
    qkv: Vectors  # (hidden, 3 * hidden): query (pre-scaled by 1/sqrt(head size)), key, value
    qkv_bias: Vectors
    out: Vectors
    out_bias: Vectors
    norm1: tuple[Vectors, Vectors]
    up: Vectors
    up_bias: Vectors
    down: Vectors
    down_bias: Vectors
    norm2: tuple[Vectors, Vectors]


class MiniLMArm:
    """all-MiniLM-L6-v2 in numpy: mean-pooled, L2-normalised 384-d sentence vectors.

    Build one with :func:`load_minilm`. The constructor takes the tensors by their
    checkpoint names, each either float32 or int8 with per-row scales (as :func:`quantise`
    writes them), so the build runs the same code on the float32 checkpoint to check the
    int8 one.

    Args:
        tensors: The checkpoint's tensors.
        tokenizer: Its WordPiece tokenizer (``tokenizer.json``).
        batch: Texts per forward pass; texts are sorted by length first, so a batch pads
            little.
    """

    name: Final = "minilm-l6-v2-int8"

    def __init__(
        self,
        tensors: Mapping[str, NDArray[np.generic]],
        tokenizer: Tokenizer,
        *,
        batch: int = _BATCH,
    ) -> None:
        def get(key: str) -> Vectors:
            return _dequantised(tensors, key)

        self._tokenizer = tokenizer
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        self._batch = batch
        if _WORDS + _QUANTISED in tensors:
            # 30,522 rows; only the looked-up ones are scaled, so it stays int8 (11.7 MB).
            self._words: NDArray[np.generic] = tensors[_WORDS + _QUANTISED]
            self._word_scales: Vectors | None = np.asarray(tensors[_WORDS + _SCALE], np.float32)
        else:
            self._words, self._word_scales = get(_WORDS), None
        self._positions = get("embeddings.position_embeddings.weight")[:MAX_TOKENS]
        self._token_type = get("embeddings.token_type_embeddings.weight")[0]
        self._norm = (get("embeddings.LayerNorm.weight"), get("embeddings.LayerNorm.bias"))
        head_scale = 1.0 / float(np.sqrt(_HIDDEN // _HEADS))  # a Python float: see _layer_norm
        self._layers = []
        for i in range(_LAYERS):
            p = f"encoder.layer.{i}."
            attention = p + "attention.self."
            self._layers.append(
                _Layer(
                    qkv=np.ascontiguousarray(
                        np.concatenate(
                            [
                                get(attention + "query.weight") * head_scale,
                                get(attention + "key.weight"),
                                get(attention + "value.weight"),
                            ]
                        ).T
                    ),
                    qkv_bias=np.concatenate(
                        [
                            get(attention + "query.bias") * head_scale,
                            get(attention + "key.bias"),
                            get(attention + "value.bias"),
                        ]
                    ),
                    out=np.ascontiguousarray(get(p + "attention.output.dense.weight").T),
                    out_bias=get(p + "attention.output.dense.bias"),
                    norm1=(
                        get(p + "attention.output.LayerNorm.weight"),
                        get(p + "attention.output.LayerNorm.bias"),
                    ),
                    up=np.ascontiguousarray(get(p + "intermediate.dense.weight").T),
                    up_bias=get(p + "intermediate.dense.bias"),
                    down=np.ascontiguousarray(get(p + "output.dense.weight").T),
                    down_bias=get(p + "output.dense.bias"),
                    norm2=(get(p + "output.LayerNorm.weight"), get(p + "output.LayerNorm.bias")),
                )
            )

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised float32 row per text, in order.

        Texts longer than :data:`MAX_TOKENS` word pieces are cut there.
        """
        out = np.zeros((len(texts), _HIDDEN), np.float32)
        if not texts:
            return out
        encodings = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self._batch):
            rows = order[start : start + self._batch]
            width = len(encodings[rows[-1]].ids)
            ids = np.zeros((len(rows), width), np.int64)
            mask = np.zeros((len(rows), width), np.float32)
            for r, i in enumerate(rows):
                n = len(encodings[i].ids)
                ids[r, :n] = encodings[i].ids
                mask[r, :n] = 1.0
            out[rows] = self._forward(ids, mask)
        return out

    def _forward(self, ids: NDArray[np.int64], mask: Vectors) -> Vectors:
        batch, width = ids.shape
        heads, size = _HEADS, _HIDDEN // _HEADS
        words = self._words[ids].astype(np.float32)
        if self._word_scales is not None:
            words *= self._word_scales[ids][..., None]
        embedded = words + self._positions[:width] + self._token_type
        # One row per token: a 2-D matmul is one BLAS call, where numpy runs a 3-D one
        # slice by slice (15x slower here).
        x = _layer_norm(embedded.reshape(batch * width, _HIDDEN), *self._norm)
        # Padding gets no attention: a large negative score before the softmax.
        padding = ((mask - 1.0) * 1e9)[:, None, None, :]
        for layer in self._layers:
            qkv = (x @ layer.qkv + layer.qkv_bias).reshape(batch, width, 3, heads, size)
            q, k, v = np.ascontiguousarray(qkv.transpose(2, 0, 3, 1, 4))
            scores = q @ k.transpose(0, 1, 3, 2)
            scores += padding
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            attended = (scores @ v).transpose(0, 2, 1, 3).reshape(batch * width, _HIDDEN)
            x = _layer_norm(attended @ layer.out + layer.out_bias + x, *layer.norm1)
            up = x @ layer.up
            up += layer.up_bias
            hidden = _gelu(up)
            x = _layer_norm(hidden @ layer.down + layer.down_bias + x, *layer.norm2)
        tokens = x.reshape(batch, width, _HIDDEN)
        pooled = (tokens * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        normed: Vectors = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return normed


def _layer_norm(x: Vectors, gain: Vectors, bias: Vectors) -> Vectors:
    # Constants stay Python floats: under NumPy 2 a np.float64 scalar would promote the
    # activations to float64, and every later matmul would run mixed and ~10x slower.
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(-1, keepdims=True)
    normed: Vectors = centred / np.sqrt(variance + _EPS) * gain + bias
    return normed


def _gelu(x: Vectors) -> Vectors:
    """GELU in its tanh form, in place (``x`` is a temporary of the caller's).

    BERT's is the erf form; numpy has no erf, and a polynomial one costs three times as
    much here, where GELU is a third of the forward pass. The two differ by under 5e-4 per
    activation and the sentence vectors by a cosine of 0.9999995, a thousandth of what
    int8 weights cost.
    """
    inner = x * x
    inner *= 0.044715
    inner += 1.0
    inner *= x
    inner *= 0.7978845608028654  # sqrt(2 / pi), as a Python float: see _layer_norm
    np.tanh(inner, out=inner)
    inner += 1.0
    inner *= x
    inner *= 0.5
    return inner


def _dequantised(tensors: Mapping[str, NDArray[np.generic]], key: str) -> Vectors:
    if key + _QUANTISED in tensors:
        q = tensors[key + _QUANTISED].astype(np.float32)
        scales = np.asarray(tensors[key + _SCALE], np.float32)
        return q * scales[:, None]
    return np.asarray(tensors[key], np.float32)


def quantise(tensors: Mapping[str, NDArray[np.generic]]) -> dict[str, NDArray[np.generic]]:
    """The int8 file's contents from the float32 checkpoint's tensors.

    Every matrix (the six layers' projections and the word embeddings, 96% of the
    weights) becomes int8 with one float32 scale per row: a row is an output unit or a
    token, so one outlier row cannot coarsen the others. Kept float32, because they are
    small and carry offsets the activations are sensitive to: biases, LayerNorm gains and
    shifts, the token-type embedding and the position embeddings (cut to
    :data:`MAX_TOKENS` rows, the only ones used). Dropped: the pooler (sentence vectors
    are mean-pooled, not read from it) and the position ids.
    """
    out: dict[str, NDArray[np.generic]] = {"format": np.array(FORMAT, np.int32)}
    for key, value in tensors.items():
        if key.startswith("pooler.") or key == "embeddings.position_ids":
            continue
        matrix = np.asarray(value, np.float32)
        if key == "embeddings.position_embeddings.weight":
            out[key] = matrix[:MAX_TOKENS]
        elif key == _WORDS or (key.startswith("encoder.") and matrix.ndim == 2):
            scales = np.abs(matrix).max(axis=1) / 127.0
            scales[scales == 0] = 1.0
            out[key + _QUANTISED] = np.round(matrix / scales[:, None]).astype(np.int8)
            out[key + _SCALE] = scales.astype(np.float32)
        else:
            out[key] = matrix
    return out


def default_model_dir() -> Path:
    """Where :func:`load_minilm` looks: ``$GEOMINT_DENSE_MODEL_DIR`` when set, else
    ``share/geomint/dense`` in the running environment (``.venv``), where
    ``scripts/bootstrap`` builds it."""
    configured = os.environ.get(MODEL_DIR_ENV)
    if configured:
        return Path(configured)
    return Path(sys.prefix) / "share" / "geomint" / "dense"


def dense_unavailable(path: Path | None = None) -> DenseUnavailable | None:
    """Why :func:`load_minilm` would find no arm in ``path`` (default
    :func:`default_model_dir`), or None when it would: the ``dense`` extra is missing, or
    the directory lacks the model. Cheap: it imports and looks, and reads nothing."""
    directory = path if path is not None else default_model_dir()
    try:
        import tokenizers  # noqa: F401, PLC0415 - the optional extra
    except ImportError:
        return DenseUnavailable(
            reason="the dense ranking arm needs the tokenizers package, which is not "
            "installed; install it with `pip install 'geomint[dense]'`"
        )
    for needed in (MODEL_FILE, TOKENIZER_FILE):
        if not (directory / needed).is_file():
            return DenseUnavailable(
                reason=f"there is no {needed} in {directory}; build it with "
                f"`python scripts/build_dense_model.py --dest {directory}`"
            )
    return None


def load_minilm(path: Path | None = None) -> MiniLMArm | None:
    """The MiniLM arm from the model directory ``path`` (default
    :func:`default_model_dir`), or None when there is none.

    Returns:
        The arm, or None when :func:`dense_unavailable` gives a reason (logged at INFO on
        ``geomint.sources.dense``); ranking then runs on BM25 alone. A model file that is
        there but of another layout raises: that is a build to redo, not an absent option.
    """
    directory = path if path is not None else default_model_dir()
    missing = dense_unavailable(directory)
    if missing is not None:
        _log.info("no dense ranking arm: %s", missing.reason)
        return None
    from tokenizers import Tokenizer  # noqa: PLC0415 - the optional extra

    model = directory / MODEL_FILE
    with np.load(model) as npz:
        tensors = {key: npz[key] for key in npz.files}
    found = int(tensors.get("format", np.array(0)))
    if found != FORMAT:
        raise ValueError(
            f"{model} has layout {found}, and this geomint reads layout {FORMAT}; "
            f"rebuild it with `python scripts/build_dense_model.py --dest {directory} --force`"
        )
    return MiniLMArm(tensors, Tokenizer.from_file(str(directory / TOKENIZER_FILE)))


_SHARED: dict[Path, MiniLMArm | None] = {}


def shared_minilm() -> MiniLMArm | None:
    """The arm of the default model directory, loaded once per process and shared (it is
    read-only): what an agent ranks with unless it is given another."""
    directory = default_model_dir()
    if directory not in _SHARED:
        _SHARED[directory] = load_minilm(directory)
    return _SHARED[directory]
