"""Tokenization shared by index building and querying.

The default reproduces bm25s's defaults (and scikit-learn's ``CountVectorizer``): lowercase, tokens are runs of
two or more Unicode word characters (``(?u)\\b\\w\\w+\\b``), English stopwords removed, optionally stemmed.

Splitting runs in Arrow's C++ kernels (RE2) rather than Python's ``re``: ``re.findall`` costs about 0.3 us per
token here, i.e. ~20 s for a 50M-token corpus, while the Arrow kernels release the GIL and are several times
faster (lowercasing stays in Python, see :meth:`Tokenizer.split`). A token is a maximal run of letters,
digits and underscores (``[\\p{L}\\p{N}_]``, the same set Python's ``\\w`` matches) of length >= 2,
which is exactly what the ``\\b\\w\\w+\\b`` pattern finds. Queries go through the same kernels,
so build and query tokens can never disagree. bm25s is the test oracle for this equivalence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ark.index.stopwords import ENGLISH_STOPWORDS

_NON_WORD = r"[^\p{L}\p{N}_]+"
_WORD_RE = re.compile(r"(?u)\b\w\w+\b")
_STOPWORD_CHOICES = ("english", "en", "none")


@dataclass(frozen=True)
class SplitBatch:
    """Tokens of a batch of texts before vocabulary lookup, as a dictionary encoding.

    ``offsets[i]:offsets[i+1]`` are the positions of text ``i``'s tokens in ``codes``; ``codes`` index into
    ``dictionary`` (the distinct raw tokens of the batch, lowercased, not yet filtered or stemmed).
    """

    offsets: np.ndarray
    codes: np.ndarray
    dictionary: list[str]


def _resolve_stopwords(stopwords: str | Iterable[str] | None) -> frozenset[str]:
    if stopwords is None:
        return frozenset()
    if isinstance(stopwords, str):
        name = stopwords.lower()
        if name in ("english", "en"):
            return ENGLISH_STOPWORDS
        if name == "none":
            return frozenset()
        raise ValueError(f"unknown stopwords {stopwords!r}; choose one of {_STOPWORD_CHOICES} or pass a list")
    return frozenset(stopwords)


def _load_stemmer(language: str):
    try:
        import Stemmer  # PyStemmer
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            f"stemming ({language!r}) needs PyStemmer: pip install PyStemmer (or pass stemmer=None)"
        ) from exc
    try:
        return Stemmer.Stemmer(language)
    except KeyError as exc:
        choices = ", ".join(sorted(Stemmer.algorithms()))
        raise ValueError(f"unknown stemmer language {language!r}; choose one of: {choices}") from exc


class Tokenizer:
    """Lowercasing word tokenizer with stopword removal and optional Snowball stemming.

    ``stopwords``: ``"english"`` (our :data:`ENGLISH_STOPWORDS`), ``None``/``"none"``, or an iterable of words
    (matched against lowercased tokens before stemming). ``stemmer``: ``None`` or a PyStemmer language name such
    as ``"english"``.
    """

    def __init__(
        self,
        stopwords: str | Iterable[str] | None = "english",
        stemmer: str | None = None,
        lower: bool = True,
    ) -> None:
        self.stopwords = _resolve_stopwords(stopwords)
        self.stemmer_language = stemmer
        self.lower = lower
        self._stemmer = _load_stemmer(stemmer) if stemmer is not None else None
        self._term_cache: dict[str, str | None] = {}

    def config(self) -> dict:
        """Settings that determine the produced tokens (persisted with an index and hashed for caching)."""
        return {
            "lower": self.lower,
            "stopwords": sorted(self.stopwords),
            "stemmer": self.stemmer_language,
            "pattern": "bm25s-default",
        }

    @classmethod
    def from_config(cls, config: dict) -> Tokenizer:
        """Rebuild a tokenizer from :meth:`config`'s output."""
        return cls(stopwords=config["stopwords"], stemmer=config["stemmer"], lower=config["lower"])

    def split(self, texts: Sequence[str]) -> SplitBatch:
        """Split many texts at once into raw tokens (the fast path used when building)."""
        # Python's str.lower (not Arrow's utf8_lower) so that context-dependent cases such as a final sigma or a
        # dotted capital I lowercase exactly as in bm25s; it costs ~1 us per document.
        arr = pa.array([t.lower() for t in texts] if self.lower else texts, type=pa.large_string())
        lists = pc.split_pattern_regex(arr, _NON_WORD)
        offsets = lists.offsets.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        encoded = pc.dictionary_encode(lists.flatten())
        codes = encoded.indices.to_numpy(zero_copy_only=False)
        return SplitBatch(offsets - offsets[0], codes, encoded.dictionary.to_pylist())

    def term_of(self, raw: str) -> str | None:
        """The index term for one raw (lowercased) token, or None if it is too short or a stopword."""
        if len(raw) < 2 or raw in self.stopwords:
            return None
        if self._stemmer is None:
            return raw
        term = self._term_cache.get(raw)
        if term is None:
            term = self._term_cache[raw] = self._stemmer.stemWord(raw)
        return term

    def surface_tokens(self, text: str) -> list[str]:
        """Lowercased tokens of ``text`` after stopword removal, before stemming (for highlighting)."""
        if not text:
            return []
        # One short text: Python's re is ~100x faster than an Arrow kernel call's fixed cost, and it is the very
        # pattern bm25s uses, so both paths give the same tokens (tests check it).
        lowered = text.lower() if self.lower else text
        return [tok for tok in _WORD_RE.findall(lowered) if self.term_of(tok) is not None]

    def tokenize(self, text: str) -> list[str]:
        """Index terms of ``text`` in order, duplicates kept."""
        return [self.term_of(tok) for tok in self.surface_tokens(text)]  # type: ignore[misc]

    def __repr__(self) -> str:
        return (
            f"Tokenizer(stopwords=<{len(self.stopwords)} words>, stemmer={self.stemmer_language!r}, "
            f"lower={self.lower})"
        )
