"""How many texts and tokens each embedder has embedded in this process, for run configs (the embedding twin of the
chat models' token usage).

Every place that runs an embedding model adds to one process-wide, thread-safe :data:`EMBEDDING_USAGE`, keyed by the
embedder's spec (``all-MiniLM-L6-v2``, a model folder, ``openai:MODEL``): sentence-transformers models count the
tokens their own tokenizer gives each text (special tokens included, cut at the model's maximum length: what the
model ran on); ``openai:MODEL`` embedders add the ``usage`` the endpoint reports. Texts served from a cache were not
embedded and count nothing. A run takes a :meth:`~EmbeddingUsage.snapshot` before it starts and records
:meth:`~EmbeddingUsage.since` it when it ends.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import NotRequired, TypedDict


class EmbedderCounts(TypedDict):
    """What one embedder embedded: texts, their tokens, who counted them (:data:`TOKENIZER` or :data:`ENDPOINT`) and,
    from an endpoint, the texts it reported no tokens for."""

    texts: int
    tokens: int
    counted_by: str
    texts_without_usage: NotRequired[int]


Counts = dict[str, EmbedderCounts]  # embedder spec -> its counts

TOKENIZER = "tokenizer"  # counted locally by the model's own tokenizer
ENDPOINT = "endpoint"  # the usage an embeddings endpoint reported


class EmbeddingUsage:
    """Texts and tokens embedded so far, per embedder spec."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: Counts = {}

    def add(self, spec: str, texts: int, tokens: int, counted_by: str, texts_without_usage: int = 0) -> None:
        """Count ``texts`` embedded by ``spec`` with ``tokens`` tokens (``texts_without_usage``: texts an endpoint
        embedded without reporting their tokens, so ``tokens`` leaves them out)."""
        with self._lock:
            entry = self._counts.setdefault(spec, {"texts": 0, "tokens": 0, "counted_by": counted_by})
            entry["texts"] += int(texts)
            entry["tokens"] += int(tokens)
            if texts_without_usage:
                entry["texts_without_usage"] = entry.get("texts_without_usage", 0) + int(texts_without_usage)

    def snapshot(self) -> Counts:
        """The counts now (a copy)."""
        with self._lock:
            return {spec: entry.copy() for spec, entry in self._counts.items()}

    def since(self, before: Counts) -> Counts:
        """What was embedded after ``before`` (a :meth:`snapshot`); embedders with nothing new are left out."""
        return subtract(self.snapshot(), before)


def subtract(after: Counts, before: Counts) -> Counts:
    """``after`` minus ``before``, per spec and count; specs with no new text left out."""
    out: Counts = {}
    for spec, entry in after.items():
        earlier = before.get(spec, EmbedderCounts(texts=0, tokens=0, counted_by=entry["counted_by"]))
        texts = entry["texts"] - earlier.get("texts", 0)
        if texts <= 0:
            continue
        out[spec] = {**entry, "texts": texts, "tokens": entry["tokens"] - earlier.get("tokens", 0)}
        missing = entry.get("texts_without_usage", 0) - earlier.get("texts_without_usage", 0)
        if missing:
            out[spec]["texts_without_usage"] = missing
        else:
            out[spec].pop("texts_without_usage", None)
    return out


def add_counts(first: Counts, second: Counts) -> Counts:
    """The sum of two counts (a resumed run's earlier attempts and this one)."""
    out: Counts = {spec: entry.copy() for spec, entry in first.items()}
    for spec, entry in second.items():
        total = out.setdefault(spec, {"texts": 0, "tokens": 0, "counted_by": entry.get("counted_by", "")})
        total["texts"] = total.get("texts", 0) + int(entry.get("texts", 0))
        total["tokens"] = total.get("tokens", 0) + int(entry.get("tokens", 0))
        if "texts_without_usage" in entry:
            total["texts_without_usage"] = total.get("texts_without_usage", 0) + int(entry["texts_without_usage"])
    return out


EMBEDDING_USAGE = EmbeddingUsage()


def count_local(spec: str, encoder: object, texts: Sequence[str]) -> None:
    """Add ``texts``, as embedded by the sentence-transformers model ``encoder`` (known as ``spec``), with the
    tokens its tokenizer gives them. Encoders without a tokenizer (ARK's adapters around an embedder) count
    nothing here: the embedder they wrap counts."""
    tokenize = getattr(encoder, "tokenize", None)
    if tokenize is None or not texts:
        return
    features = tokenize(list(texts))
    mask = features.get("attention_mask")
    tokens = int(mask.sum()) if mask is not None else sum(len(ids) for ids in features["input_ids"])
    EMBEDDING_USAGE.add(spec, len(texts), tokens, TOKENIZER)
