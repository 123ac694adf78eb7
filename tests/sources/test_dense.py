"""The dense arm: unit vectors that put paraphrases close, the same every time, and a
plain reason when it is not there."""

from __future__ import annotations

import hashlib
import json
import logging
import sys
from pathlib import Path

import numpy as np
import pytest
from benchmarks.bench_find_sources_recall import arms, load_queries, load_registry, measure

from geomint.sources import dense
from geomint.sources.dense import (
    MAX_TOKENS,
    MODEL_DIR_ENV,
    MODEL_FILE,
    RECORD_FILE,
    TOKENIZER_FILE,
    DenseUnavailable,
    MiniLMArm,
    default_model_dir,
    dense_unavailable,
    load_minilm,
    quantise,
)


@pytest.fixture(scope="module")
def arm() -> MiniLMArm:
    loaded = load_minilm()
    if loaded is None:
        why = dense_unavailable()
        pytest.skip(f"no dense model: {why.reason if why else 'it did not load'}")
    return loaded


def test_vectors_are_unit_rows_of_float32(arm: MiniLMArm) -> None:
    vectors = arm.embed(["population of Finland by year", "GDP per capita", ""])
    assert vectors.shape == (3, 384)
    # float64 here would mean a NumPy scalar crept into the forward pass (10x slower).
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert arm.embed([]).shape == (0, 384)


@pytest.mark.parametrize(
    ("text", "paraphrase", "unrelated"),
    [
        (
            "population of Finland by year",
            "number of inhabitants in Finland over time",
            "bus stops of the Helsinki tram network",
        ),
        ("unemployment rate", "jobless rate", "passenger cars per 1000 people"),
        ("GDP per capita", "economic output per person", "life expectancy at birth"),
    ],
)
def test_paraphrases_are_closer_than_unrelated_texts(
    arm: MiniLMArm, text: str, paraphrase: str, unrelated: str
) -> None:
    a, b, c = arm.embed([text, paraphrase, unrelated])
    assert float(a @ b) > float(a @ c) + 0.1


def test_the_same_text_gets_the_same_vector_whatever_it_is_batched_with(arm: MiniLMArm) -> None:
    text = "Eurostat population on 1 January by age and sex"
    alone = arm.embed([text])[0]
    assert np.array_equal(alone, arm.embed([text])[0])
    batched = arm.embed(["a", text, "a much longer text " * 20])[1]
    np.testing.assert_allclose(batched, alone, atol=1e-5)


def test_text_past_the_token_cap_is_cut(arm: MiniLMArm) -> None:
    long = " ".join(f"word{i}" for i in range(MAX_TOKENS * 2))
    a, b = arm.embed([long, long + " and then population of Finland"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_the_built_model_is_the_one_its_record_names(arm: MiniLMArm) -> None:
    directory = default_model_dir()
    record = json.loads((directory / RECORD_FILE).read_text("utf-8"))
    for name, sha in record["outputs_sha256"].items():
        assert hashlib.sha256((directory / name).read_bytes()).hexdigest() == sha
    assert record["licence"] == "Apache-2.0"
    assert record["check"]["min_cosine"] >= 0.999


def test_a_directory_without_the_model_says_which_file_and_how_to_build_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pytest.importorskip("tokenizers")
    with caplog.at_level(logging.INFO, logger="geomint.sources.dense"):
        assert load_minilm(tmp_path) is None
    found = dense_unavailable(tmp_path)
    assert isinstance(found, DenseUnavailable)
    assert caplog.messages == [f"no dense ranking arm: {found.reason}"]
    assert found.reason == (
        f"there is no {MODEL_FILE} in {tmp_path}; build it with "
        f"`python scripts/build_dense_model.py --dest {tmp_path}`"
    )


def test_without_the_extra_it_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tokenizers", None)  # makes the import fail
    assert load_minilm() is None
    found = dense_unavailable()
    assert isinstance(found, DenseUnavailable)
    assert "pip install 'geomint[dense]'" in found.reason


def test_the_environment_variable_names_the_model_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("tokenizers")
    monkeypatch.setenv(MODEL_DIR_ENV, str(tmp_path))
    assert default_model_dir() == tmp_path
    assert load_minilm() is None
    found = dense_unavailable()
    assert isinstance(found, DenseUnavailable)
    assert str(tmp_path) in found.reason


def test_a_model_of_another_layout_is_refused_not_misread(tmp_path: Path) -> None:
    pytest.importorskip("tokenizers")
    np.savez(tmp_path / MODEL_FILE, format=np.array(dense.FORMAT + 1))
    (tmp_path / TOKENIZER_FILE).write_text("{}", encoding="utf-8")
    with pytest.raises(ValueError, match=r"has layout 2, and this geomint reads layout 1; rebuild"):
        load_minilm(tmp_path)


def test_quantise_keeps_rows_within_half_a_step_and_small_tensors_exact() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(8, 16)).astype(np.float32)
    matrix[3] = 0.0  # an all-zero row must not divide by zero
    bias = rng.normal(size=8).astype(np.float32)
    tensors = quantise(
        {
            "encoder.layer.0.intermediate.dense.weight": matrix,
            "encoder.layer.0.intermediate.dense.bias": bias,
            "embeddings.position_embeddings.weight": np.ones((512, 4), np.float32),
            "pooler.dense.weight": matrix,
        }
    )
    q = tensors["encoder.layer.0.intermediate.dense.weight.q"]
    scale = tensors["encoder.layer.0.intermediate.dense.weight.scale"]
    assert q.dtype == np.int8
    assert np.abs(q.astype(np.float32) * scale[:, None] - matrix).max() <= scale.max() / 2
    assert np.array_equal(tensors["encoder.layer.0.intermediate.dense.bias"], bias)
    assert tensors["embeddings.position_embeddings.weight"].shape == (MAX_TOKENS, 4)
    assert not any(key.startswith("pooler.") for key in tensors)


def test_fusing_the_dense_arm_finds_at_least_what_bm25_finds(arm: MiniLMArm) -> None:
    """On the labelled queries over the shipped catalogue, ranked by the shipped Ranker
    (measured: BM25 0.784, dense alone 0.902, fused 0.866 recall@5;
    benchmarks/bench_find_sources_recall.py)."""
    _, rankers = arms(load_registry(), arm)
    queries = load_queries()
    bm25, semantic, fused = (measure(rankers[name], queries) for name in ("BM25", "dense", "fused"))
    assert fused.recall >= bm25.recall
    assert bm25.recall == pytest.approx(0.784, abs=0.01)
    assert semantic.recall == pytest.approx(0.902, abs=0.03)
    assert fused.recall == pytest.approx(0.866, abs=0.03)
    assert fused.mrr > bm25.mrr
