"""Approximate global search over normalised embeddings: a faiss inverted-file index (IVF-Flat, inner product).

The ``faiss`` extra (``pip install ark-kg[faiss]``, faiss-cpu). :class:`~ark.index.dense.DenseIndex` uses it for
global search once a corpus has :data:`ANN_MIN_DOCS` documents (exact search reads every embedding: ~1.5 GB per
query at 1M x 384); the exact numpy path stays the reference and serves subsets, small corpora and tests.

Why IVF-Flat rather than HNSW: it stores the vectors uncompressed, so a probed list is scored exactly and recall
depends only on how many lists are probed (``nprobe``), which is calibrated at build time against exact search
until recall@k reaches the target; k-means on a sample plus one assignment pass build a 1M x 384 index in about a
minute on 2 cores, several times faster than inserting 1M vectors into an HNSW graph; the build is deterministic
(seeded k-means); and a type filter is a bitmap over the probed lists, whose recall does not collapse when the
filter is selective the way a filtered graph walk does. ``benchmarks/bench_dense_ann.py`` measures both.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np

from ark.arrays import F32, I64, Bools, Floats
from ark.index.topk import EMPTY_IDS, EMPTY_SCORES, top_k
from ark.storage.atomic import atomic_write_text

ANN_MIN_DOCS = 100_000  # below this exact search over all embeddings costs a few milliseconds anyway
TARGET_RECALL = 0.99  # calibration target for recall@CALIBRATION_K against exact search
CALIBRATION_K = 20
CALIBRATION_QUERIES = 256
EXACT_SUBSET = 50_000  # a type filter keeping at most this many documents is searched exactly
_INSTALL_HINT = "approximate dense search needs the 'faiss' extra: pip install ark-kg[faiss] (faiss-cpu)"
INDEX_FILE, META_FILE = "ann-ivf.faiss", "ann-ivf.json"


def _faiss():
    # faiss's OpenMP threads spin while they wait; on a shared machine with more runnable processes than cores
    # that made a k-means training 6-7x slower (2.5 s vs 0.4 s for 20k x 64). Passive waiting costs nothing when
    # the cores are free. Read by the OpenMP runtime when faiss loads it, so it is set before the import.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import faiss
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return faiss


def faiss_available() -> bool:
    try:
        _faiss()
    except ImportError:
        return False
    return True


def default_nlist(num_docs: int) -> int:
    """Inverted lists: a power of two near sqrt(n) (1M documents -> 1024 lists of about 1,000), at least 1."""
    return max(1, 2 ** round(math.log2(max(math.sqrt(num_docs), 1))))


def exact_top_k(embeddings: Floats, queries: F32, k: int, block: int = 65_536) -> I64:
    """Ids of the exact top-``k`` inner products per query, best first, scanning the embeddings in blocks (ties at
    the k-th score may be broken either way: this is the recall reference, not a ranking)."""
    best_ids = np.zeros((len(queries), 0), dtype=np.int64)
    best_scores = np.zeros((len(queries), 0), dtype=np.float32)
    for start in range(0, len(embeddings), block):
        scores = (queries @ np.asarray(embeddings[start:start + block]).T).astype(np.float32)  # (queries, block)
        ids = np.broadcast_to(np.arange(start, start + scores.shape[1]), scores.shape)
        if scores.shape[1] > k:
            part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
            scores, ids = np.take_along_axis(scores, part, 1), np.take_along_axis(ids, part, 1)
        scores = np.concatenate([best_scores, scores], axis=1)
        ids = np.concatenate([best_ids, ids], axis=1)
        order = np.lexsort((ids, -scores), axis=1)[:, :k]
        best_ids, best_scores = np.take_along_axis(ids, order, 1), np.take_along_axis(scores, order, 1)
    return best_ids


def recall_at_k(found: I64, truth: I64) -> float:
    """Mean over queries of |found ∩ truth| / |truth| (rows of ids; -1 in ``found`` is a missing result)."""
    hits = [len(np.intersect1d(f[f >= 0], t)) / max(len(t), 1) for f, t in zip(found, truth, strict=True)]
    return float(np.mean(hits)) if hits else 1.0


def calibration_queries(embeddings: Floats, count: int, seed: int) -> F32:
    """Queries between documents: the normalised sum of two random documents (harder than a document itself,
    whose nearest neighbour is trivially found)."""
    rng = np.random.default_rng(seed)
    pairs = rng.integers(0, len(embeddings), (count, 2))
    queries = np.asarray(embeddings[pairs[:, 0]]) + np.asarray(embeddings[pairs[:, 1]])
    return (queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)).astype(np.float32)


class IVFIndex:
    """An IVF-Flat inner-product index with a calibrated ``nprobe``; returns exact scores of the ids it finds."""

    def __init__(self, index, nprobe: int, meta: dict | None = None) -> None:
        self.index = index
        self.nprobe = int(nprobe)
        self.meta = dict(meta or {})

    @property
    def nlist(self) -> int:
        return int(self.index.nlist)

    @classmethod
    def build(cls, embeddings: Floats, nlist: int | None = None, target_recall: float = TARGET_RECALL,
              k: int = CALIBRATION_K, queries: int = CALIBRATION_QUERIES, seed: int = 0) -> IVFIndex:
        """Train k-means (``nlist`` centroids, seeded), add every embedding, then double ``nprobe`` from 1 until
        recall@``k`` of :func:`calibration_queries` against exact search reaches ``target_recall``."""
        faiss = _faiss()
        vectors = np.ascontiguousarray(embeddings, dtype=np.float32)
        n, dim = vectors.shape
        nlist = min(nlist or default_nlist(n), n)
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
        index.cp.seed = seed
        index.cp.niter = 20
        index.cp.max_points_per_centroid = 64  # k-means on a sample of 64 documents per list
        index.train(vectors)
        index.add(vectors)
        probe = calibration_queries(vectors, min(queries, n), seed + 1)
        truth = exact_top_k(vectors, probe, k)
        nprobe, recall = 1, 0.0
        while True:
            index.nprobe = nprobe
            found = index.search(probe, k)[1]
            recall = recall_at_k(found, truth)
            if recall >= target_recall or nprobe >= nlist:
                break
            nprobe = min(2 * nprobe, nlist)
        meta = {"kind": "ivf-flat", "num_docs": n, "dim": dim, "nlist": nlist, "nprobe": nprobe, "seed": seed,
                "calibration": {"queries": len(probe), "k": k, "target": target_recall, "recall": round(recall, 4)}}
        return cls(index, nprobe, meta)

    def search(self, embeddings: Floats, query: F32, k: int,
               mask: Bools | None = None) -> tuple[I64, F32]:
        """Top-``k`` ids by inner product with ``query`` and their exact scores (descending, ties by lower id).

        ``mask`` restricts the result: a filter keeping at most :data:`EXACT_SUBSET` documents is searched
        exactly; a wider one is a bitmap over the probed lists, with ``nprobe`` raised in proportion to what it
        removes."""
        n = self.index.ntotal
        if k <= 0 or n == 0:
            return EMPTY_IDS, EMPTY_SCORES
        query = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        nprobe, params = self.nprobe, None
        if mask is not None:
            kept = np.flatnonzero(mask)
            if len(kept) <= EXACT_SUBSET:
                return top_k(kept, np.asarray(embeddings[kept]) @ query[0], k)
            faiss = _faiss()
            nprobe = min(self.nlist, math.ceil(self.nprobe * n / len(kept)))
            bits = np.packbits(np.asarray(mask, dtype=bool), bitorder="little")
            params = faiss.SearchParametersIVF(sel=faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits)), nprobe=nprobe)
            ids = self.index.search(query, k, params=params)[1][0]
        else:
            self.index.nprobe = nprobe
            ids = self.index.search(query, k)[1][0]
        ids = ids[ids >= 0].astype(np.int64)
        # Exact scores from the stored embeddings (the same numbers the exact path gives), ties by lower id.
        return top_k(ids, np.asarray(embeddings[ids]) @ query[0], k)

    def save(self, directory: str | Path) -> None:
        """Write ``ann-ivf.faiss`` then ``ann-ivf.json`` into ``directory`` (the JSON, written last and atomically,
        marks the index complete)."""
        faiss = _faiss()
        directory = Path(directory)
        partial = directory / f".{INDEX_FILE}.partial"
        faiss.write_index(self.index, str(partial))
        partial.replace(directory / INDEX_FILE)
        atomic_write_text(directory / META_FILE, json.dumps(self.meta, indent=1))

    @classmethod
    def load(cls, directory: str | Path, num_docs: int) -> IVFIndex | None:
        """The index saved in ``directory`` if it is complete and covers ``num_docs`` documents, else None."""
        directory = Path(directory)
        try:
            meta = json.loads((directory / META_FILE).read_text())
        except (OSError, ValueError):
            return None
        if meta.get("num_docs") != num_docs or not (directory / INDEX_FILE).is_file():
            return None
        index = _faiss().read_index(str(directory / INDEX_FILE))
        return cls(index, meta["nprobe"], meta)

    def __repr__(self) -> str:
        return f"IVFIndex(docs={self.index.ntotal}, nlist={self.nlist}, nprobe={self.nprobe})"
