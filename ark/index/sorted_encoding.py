"""Bulk encoding with a sentence-transformers model near the hardware's limit.

One sort of *all* texts by token count (after the model's truncation), batches by a token budget rather than a fixed
count (so padding stays small and every batch is about as large a matrix product as the last), fp32, and torch's
threads set to the CPUs this process may use.

Measured on HPO node texts (AMD EPYC with avx512_bf16, 2 threads, CPU time; docs/results/hot-paths.md): the whole
graph in fp32 in about 1.5x its fp32 FLOP floor, equal to sentence-transformers' own ``encode`` (cosine 1.000000,
the same top-10 neighbours). bf16 autocast (``precision="bf16"`` or ``ARK_EMBED_PRECISION=bf16``) is 1.6-2.4x faster
on a CPU with native bf16, but not the default: its embeddings keep cosine >= 0.99997 with fp32, yet 7.2% of a
400-text sample got another top-10 neighbour set (near-ties swapped), so indexes would rank differently.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ark.arrays import F32, I64

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

PRECISIONS = ("auto", "fp32", "bf16")
PRECISION_ENV = "ARK_EMBED_PRECISION"
# Tokens (padded) per forward pass: large enough to keep the matrix products efficient, small enough for the cache.
TOKEN_BUDGET = {"cpu": 16_384, "cuda": 131_072}
_LENGTH_CHUNK = 2_048  # texts tokenized at a time to count their tokens


@lru_cache(maxsize=1)
def cpu_has_native_bf16() -> bool:
    """Whether the CPU computes bf16 dot products natively (``avx512_bf16`` or ``amx_bf16`` in /proc/cpuinfo)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool(flags & {"avx512_bf16", "amx_bf16"})
    except OSError:
        return False
    return False


def resolve_precision(precision: str | None, device: str) -> str:
    """``fp32`` or ``bf16`` (``precision``, else :data:`PRECISION_ENV`, else ``auto``): ``auto`` is fp32, the exact
    path (bf16 failed the same-neighbours check: see the module doc); bf16 only when asked for."""
    chosen = precision or os.environ.get(PRECISION_ENV) or "auto"
    if chosen not in PRECISIONS:
        raise ValueError(f"unknown embedding precision {chosen!r}; choose one of {PRECISIONS}")
    return "fp32" if chosen == "auto" else chosen


def supports_sorted_encoding(encoder: object) -> bool:
    """Whether ``encoder`` is a sentence-transformers model this module can drive (tokenizer + torch forward)."""
    try:
        import torch
    except ImportError:
        return False
    return isinstance(encoder, torch.nn.Module) and callable(getattr(encoder, "preprocess", None))


def token_lengths(encoder: SentenceTransformer, texts: Sequence[str]) -> I64:
    """Each text's token count as the model runs it (special tokens included, cut at its maximum length)."""
    lengths = np.zeros(len(texts), dtype=np.int64)
    for start in range(0, len(texts), _LENGTH_CHUNK):
        chunk = [t or "" for t in texts[start:start + _LENGTH_CHUNK]]
        mask = encoder.preprocess(chunk)["attention_mask"]
        lengths[start:start + len(chunk)] = mask.sum(dim=1).numpy()
    return lengths


@dataclass(frozen=True)
class EncodePlan:
    """The texts in encoding order (longest first; ties in input order) and the batches over that order."""

    order: I64  # sorted position -> text index
    lengths: I64  # token count per text, input order
    bounds: tuple[tuple[int, int], ...]  # [start, end) over sorted positions

    @property
    def padded_tokens(self) -> int:
        return int(sum((end - start) * self.lengths[self.order[start]] for start, end in self.bounds))


def plan_batches(lengths: I64, budget: int) -> EncodePlan:
    """One sort of all texts by length, cut into batches whose padded size (count x longest) fits ``budget``."""
    if budget < 1:
        raise ValueError(f"token budget must be positive, got {budget}")
    order = np.argsort(-lengths, kind="stable")
    bounds = []
    start = 0
    while start < len(order):
        longest = max(int(lengths[order[start]]), 1)
        end = min(start + max(budget // longest, 1), len(order))
        bounds.append((start, end))
        start = end
    return EncodePlan(order, lengths, tuple(bounds))


def usable_cpus() -> int:
    """CPUs this process may run on: its affinity, capped by a cgroup v2 CPU quota when one is set."""
    count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="utf-8") as handle:
            quota, period = handle.read().split()
        if quota != "max":
            count = min(count, max(int(int(quota) / int(period)), 1))
    except (OSError, ValueError):
        pass
    return max(count, 1)


@contextmanager
def encoding_threads() -> Iterator[None]:
    """torch's intra-op threads set to :func:`usable_cpus` for a bulk encode (unless ``OMP_NUM_THREADS`` says
    otherwise), restored afterwards."""
    import torch

    before = torch.get_num_threads()
    wanted = before if os.environ.get("OMP_NUM_THREADS") else usable_cpus()
    if wanted != before:
        torch.set_num_threads(wanted)
    try:
        yield
    finally:
        if wanted != before:
            torch.set_num_threads(before)


def encode_batch(encoder: SentenceTransformer, texts: list[str], precision: str) -> F32:
    """L2-normalised float32 sentence embeddings of one batch (padded to its longest text)."""
    import torch
    from sentence_transformers.util import batch_to_device

    features = batch_to_device(encoder.preprocess(texts), encoder.device)
    with torch.inference_mode():
        if precision == "bf16":
            with torch.autocast(device_type=encoder.device.type, dtype=torch.bfloat16):
                vectors = encoder(features)["sentence_embedding"]
        else:
            vectors = encoder(features)["sentence_embedding"]
        vectors = torch.nn.functional.normalize(vectors.float(), p=2, dim=1)
    return vectors.cpu().numpy()
