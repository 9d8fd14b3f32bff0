"""Embedding in device-sized batches, resumable after an interruption (a stand-in encoder: no model needed)."""

from __future__ import annotations

import numpy as np
import pytest

from ark.index import dense
from ark.index.dense import BATCH, embed_texts


class CountingEncoder:
    """Deterministic 8-d 'embeddings' of texts; records the batch sizes; fails after ``fail_after`` calls."""

    def __init__(self, device: str = "cpu", fail_after: int | None = None) -> None:
        self.device = device
        self.fail_after = fail_after
        self.calls: list[tuple[int, int]] = []  # (texts in the call, batch_size asked for)

    def get_embedding_dimension(self) -> int:
        return 8

    def encode(self, texts, batch_size, normalize_embeddings, convert_to_numpy):
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise KeyboardInterrupt("interrupted")
        self.calls.append((len(texts), batch_size))
        rows = np.array([[len(t), sum(map(ord, t)) % 97, *range(6)] for t in texts], dtype=np.float32) + 1
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


TEXTS = [f"document number {i} " * (i % 5 + 1) for i in range(20_000)]


def test_gpu_encoder_gets_large_batches_and_blocks():
    gpu = CountingEncoder("cuda:0")
    vectors = embed_texts(TEXTS, progress=False, encoder=gpu)
    batch, block = BATCH["cuda"]
    assert {size for _, size in gpu.calls} == {batch} and gpu.calls[0][0] == block
    assert len(gpu.calls) == -(-len(TEXTS) // block)
    cpu = CountingEncoder("cpu")
    np.testing.assert_array_equal(embed_texts(TEXTS[:2000], progress=False, encoder=cpu), vectors[:2000])
    assert {size for _, size in cpu.calls} == {BATCH["cpu"][0]} and cpu.calls[0][0] == BATCH["cpu"][1]


def test_interrupted_gpu_embedding_resumes_from_the_last_block(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        embed_texts(TEXTS, cache_dir=tmp_path, progress=False, encoder=CountingEncoder("cuda", fail_after=2))
    resumed = CountingEncoder("cuda")
    vectors = embed_texts(TEXTS, cache_dir=tmp_path, progress=False, encoder=resumed)
    block = BATCH["cuda"][1]
    assert sum(n for n, _ in resumed.calls) == len(TEXTS) - 2 * block  # the first two blocks were on disk
    np.testing.assert_array_equal(vectors, embed_texts(TEXTS, progress=False, encoder=CountingEncoder("cuda")))


def test_default_device_follows_torch_cuda(monkeypatch):
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert dense.default_device() == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert dense.default_device() == "cpu"
