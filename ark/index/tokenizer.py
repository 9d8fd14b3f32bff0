"""Tokenization shared by index building and querying.

The default reproduces bm25s's defaults (and scikit-learn's ``CountVectorizer``): lowercase, tokens are runs of
two or more Unicode word characters (``(?u)\\b\\w\\w+\\b``), English stopwords removed, optionally stemmed.

Splitting a batch of texts (index building) runs vectorised, never per token in Python. ASCII texts -- the
bulk of most corpora -- go through a 256-entry byte table that lowercases ``A-Z`` and turns every byte that is
not ``[A-Za-z0-9_]`` into a space, then Arrow's whitespace split: on ASCII this is exactly Python's
``str.lower`` followed by ``\\w+`` runs, and ~3x faster than a Unicode regex split. Texts with any non-ASCII
character keep the exact general path: Python's ``str.lower`` (context-dependent cases such as a final sigma
or a dotted capital I lowercase as in bm25s) and Arrow's RE2 split on non-word runs (``[^\\p{L}\\p{N}_]+``,
the set Python's ``\\w`` matches). Tokens shorter than two characters are dropped later (:meth:`term_of`),
which makes maximal runs equal to what ``\\b\\w\\w+\\b`` finds. Single short query strings use Python's
``re`` with bm25s's own pattern (an Arrow kernel call has a fixed cost of about a millisecond). bm25s is the
test oracle for all paths.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
import pyarrow as pa

from ark.arrays import I32, U64, Bools
from ark.index.optional_kernel import build_kernel
from ark.text import ENGLISH_STOPWORDS

_NON_WORD = r"[^\p{L}\p{N}_]+"
_WORD_RE = re.compile(r"(?u)\b\w\w+\b")
_STOPWORD_CHOICES = ("english", "en", "none")


@dataclass(frozen=True)
class SplitBatch:
    """Tokens of a batch of texts before vocabulary lookup, as a dictionary encoding.

    Token ``j`` belongs to text ``doc_ids[j]`` (tokens of a text are contiguous but texts are not necessarily in
    order) and is ``dictionary[codes[j]]``: the raw tokens of the batch, lowercased, not yet filtered
    or stemmed (they may include empty or one-character strings, and a token may occur twice when it comes
    from both an ASCII and a non-ASCII text).
    """

    num_texts: int
    doc_ids: I32
    codes: I32
    dictionary: Sequence[str]
    # ``dictionary[:len(packed)]`` packed into one little-endian uint64 each (ASCII tokens of at most 8 bytes): a
    # vocabulary can look them up in numpy instead of hashing strings.
    packed: U64 | None = None


def _ascii_table(lower: bool) -> bytes:
    """Byte translation table: word bytes kept (``A-Z`` lowercased if ``lower``), other ASCII bytes -> space."""
    table = bytearray(range(256))  # bytes >= 128 only occur outside the slice being split: left unchanged
    word = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
    for byte in range(128):
        if byte not in word:
            table[byte] = ord(" ")
    if lower:
        for byte in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            table[byte] = byte + 32
    return bytes(table)


_ASCII_TABLES = {lower: _ascii_table(lower) for lower in (True, False)}
_TABLE_ARRAYS = {lower: np.frombuffer(table, dtype=np.uint8) for lower, table in _ASCII_TABLES.items()}


def _split_ascii(arr: pa.Array, lower: bool) -> pa.ListArray:
    """Token lists of an all-ASCII string array: one table lookup over the bytes, then a whitespace split."""
    import pyarrow.compute as pc  # imported where used (index building), not when a built index is queried

    validity, offsets, data = arr.buffers()
    if data is not None:  # bytes.translate is a C loop at about 1 GB/s
        data = pa.py_buffer(data.to_pybytes().translate(_ASCII_TABLES[lower]))
    clean = pa.Array.from_buffers(arr.type, len(arr), [validity, offsets, data], arr.null_count, arr.offset)
    return pc.ascii_split_whitespace(clean)


class TokenDictionary(Sequence[str]):
    """A batch's distinct raw tokens: the packed short ASCII tokens first (kept as integers and decoded only when
    read: a vocabulary that has seen a token looks it up by its integer, so most are never made strings), then the
    others as strings."""

    def __init__(self, keys: U64, rest: list[str]) -> None:
        self.keys = keys
        self.rest = rest

    def __len__(self) -> int:
        return len(self.keys) + len(self.rest)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice[int | None, int | None, int | None]) -> list[str]: ...
    def __getitem__(self, index: int | slice[int | None, int | None, int | None]) -> str | list[str]:
        n = len(self.keys)
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1 and start >= n:
                return self.rest[start - n: stop - n]
            return [self[i] for i in range(start, stop, step)]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"token {index} out of range ({len(self)} tokens)")
        # ASCII bytes, trailing zeros dropped (as numpy's "S8" reads them)
        return self.keys[index].tobytes().rstrip(b"\0").decode("ascii") if index < n else self.rest[index - n]


_LOW_BYTES = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [2**64 - 1], dtype=np.uint64)


def _encode_tokens(ascii_tokens: pa.Array, other_tokens: pa.Array | None) -> tuple[I32, TokenDictionary, U64]:
    """Dictionary-encode tokens: codes per token (ASCII tokens first, then the others), the distinct tokens and the
    packed integers of the first of them (:attr:`SplitBatch.packed`).

    Hashing millions of short strings is the costliest step of splitting, so ASCII tokens of at most 8 bytes
    (most words) are packed exactly into one little-endian integer each (tokens never contain a zero byte,
    so the zero padding is unambiguous) and encoded as integers; longer or non-ASCII tokens are encoded as
    strings. Arrow's string ``dictionary_encode`` is the oracle in the tests.
    """
    _, offsets_buf, data = ascii_tokens.buffers()
    start = ascii_tokens.offset
    offset_type = np.int64 if pa.types.is_large_string(ascii_tokens.type) else np.int32
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[start : start + len(ascii_tokens) + 1]
    lengths = np.diff(offsets)
    short = lengths <= 8
    if data is not None and len(data) and short.any():
        padded = np.zeros(len(data) + 8, dtype=np.uint8)
        padded[: len(data)] = np.frombuffer(data, dtype=np.uint8)
        # A little-endian uint64 starting at every byte (unaligned strides are fine for a gather).
        words = np.ndarray((len(data) + 1,), dtype="<u8", buffer=padded, strides=(1,))
        packed = words[offsets[:-1][short]] & _LOW_BYTES[lengths[short]]
    else:
        short, packed = np.zeros(len(ascii_tokens), dtype=bool), np.zeros(0, dtype="<u8")
    rest = ascii_tokens.filter(pa.array(~short)) if not short.all() else ascii_tokens.slice(0, 0)
    return _dictionary(short, packed, rest, other_tokens)


def _dictionary(short: Bools, packed: U64, rest: pa.Array,
                other_tokens: pa.Array | None) -> tuple[I32, TokenDictionary, U64]:
    """:func:`_encode_tokens` from the ASCII tokens split into short ones (``short``: their packed integers, in
    token order) and the others (``rest``, strings in token order)."""
    import pyarrow.compute as pc

    if len(packed):
        encoded_short = pc.dictionary_encode(pa.array(packed))
        short_codes = encoded_short.indices.to_numpy(zero_copy_only=False)
        keys = encoded_short.dictionary.to_numpy(zero_copy_only=False).astype("<u8", copy=False)
    else:
        short_codes, keys = np.zeros(0, dtype=np.int32), np.zeros(0, dtype="<u8")
    if other_tokens is not None:
        rest = pa.concat_arrays([rest, other_tokens.cast(rest.type)])
    encoded = pc.dictionary_encode(rest)
    n_ascii = len(short)
    codes = np.empty(n_ascii + (0 if other_tokens is None else len(other_tokens)), dtype=np.int32)
    ascii_codes = codes[:n_ascii]
    ascii_codes[short] = short_codes
    rest_codes = encoded.indices.to_numpy(zero_copy_only=False) + len(keys)
    ascii_codes[~short] = rest_codes[: n_ascii - len(packed)]
    codes[n_ascii:] = rest_codes[n_ascii - len(packed):]
    return codes, TokenDictionary(keys, encoded.dictionary.to_pylist()), keys


def _split_compiled(arr: pa.Array, lower: bool) -> tuple[I32, I32, TokenDictionary, U64] | None:
    """(doc ids, codes, dictionary, packed) of an all-ASCII string array split by the compiled loop, or None
    without numba (:mod:`ark.index._split_kernel`)."""
    _split_kernel = build_kernel("_split_kernel")
    if _split_kernel is None:
        return None
    _, offsets_buf, data = arr.buffers()[:3]
    if data is not None and len(data) >= 2**31 - 1:  # the long tokens' bytes are given 32-bit offsets
        return None
    offset_type = np.int64 if pa.types.is_large_string(arr.type) else np.int32
    offsets = np.frombuffer(offsets_buf, dtype=offset_type)[arr.offset: arr.offset + len(arr) + 1]
    raw = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    doc_ids, short, packed, long_offsets, long_data = _split_kernel.split_ascii(raw, offsets, _TABLE_ARRAYS[lower])
    rest = pa.Array.from_buffers(pa.string(), len(long_offsets) - 1,
                                 [None, pa.py_buffer(long_offsets), pa.py_buffer(long_data)])
    codes, dictionary, keys = _dictionary(short, packed.view("<u8"), rest, None)
    return doc_ids, codes, dictionary, keys


def _ascii_joined(texts: Sequence[str]) -> pa.Array | None:
    """All-ASCII ``texts`` (plain strings) as one Arrow string array, each text followed by a newline (the last one
    excepted), which splitting reads as the space it is; None when any text is not ASCII.

    Joining and encoding are C copies: about 10x faster than converting each string to Arrow (``pa.array``). A
    text is ASCII if and only if its UTF-8 bytes number its characters, so the byte count decides for all."""
    n = len(texts)
    if not n:
        return None
    lengths = np.fromiter(map(len, texts), np.int64, n)
    try:
        data = "\n".join(texts).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the general path reports it
        return None
    if len(data) != int(lengths.sum()) + n - 1:
        return None
    large = len(data) >= 2**31 - 1
    offsets = np.zeros(n + 1, dtype=np.int64 if large else np.int32)
    np.cumsum(lengths + 1, out=offsets[1:])
    offsets[-1] = len(data)
    return pa.Array.from_buffers(pa.large_string() if large else pa.string(), n,
                                 [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _token_doc_ids(lists: pa.ListArray, ids: I32) -> I32:
    """For each token of ``lists`` (flattened), the id of its text (``ids[i]`` for list ``i``)."""
    offsets = lists.offsets.to_numpy(zero_copy_only=False)
    return np.repeat(ids, np.diff(offsets))


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

    _last_surface: tuple[str, tuple[str, ...]] | None = None  # the last text surface_tokens split, and its tokens

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

    def split(self, texts: Sequence[str] | pa.Array | pa.ChunkedArray) -> SplitBatch:
        """Split many texts at once into raw tokens (the vectorised path used when building). ``texts`` may be an
        Arrow string array (a slice of a graph's text column), taken as it is, nulls as empty texts."""
        import pyarrow.compute as pc

        all_ascii = False
        if isinstance(texts, pa.Array | pa.ChunkedArray):
            # Compact copy of just these rows (a slice still points into its parent's buffers).
            arr = texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else pa.concat_arrays([texts])
            arr = pc.fill_null(arr, "") if arr.null_count else arr
            texts = arr
        elif (joined := _ascii_joined(texts)) is not None:
            arr, all_ascii = joined, True
        else:
            # 32-bit string offsets when the batch surely fits (a character is at most 4 UTF-8 bytes): faster.
            small = 4 * sum(map(len, texts)) < 2**31 - 1
            arr = pa.array(texts, type=pa.string() if small else pa.large_string())
        n = len(arr)
        ascii_mask = (np.ones(n, dtype=bool) if all_ascii else
                      pc.fill_null(pc.string_is_ascii(arr), True).to_numpy(zero_copy_only=False))
        if ascii_mask.all() and arr.null_count == 0 and (compiled := _split_compiled(arr, self.lower)) is not None:
            doc_ids, codes, dictionary, packed = compiled
        elif ascii_mask.all():
            lists = _split_ascii(arr, self.lower)
            doc_ids = _token_doc_ids(lists, np.arange(n, dtype=np.int32))
            codes, dictionary, packed = _encode_tokens(lists.flatten(), None)
        else:
            ascii_ids = np.flatnonzero(ascii_mask).astype(np.int32)
            other_ids = np.flatnonzero(~ascii_mask).astype(np.int32)
            ascii_lists = _split_ascii(arr.filter(pa.array(ascii_mask)), self.lower)
            others = (arr.take(pa.array(other_ids)).to_pylist() if isinstance(texts, pa.Array)
                      else [texts[int(i)] for i in other_ids])
            other_arr = pa.array([t.lower() for t in others] if self.lower else others, type=arr.type)
            other_lists = pc.split_pattern_regex(other_arr, _NON_WORD)
            doc_ids = np.concatenate(
                [_token_doc_ids(ascii_lists, ascii_ids), _token_doc_ids(other_lists, other_ids)]
            )
            codes, dictionary, packed = _encode_tokens(ascii_lists.flatten(), other_lists.flatten())
        return SplitBatch(n, doc_ids, codes, dictionary, packed)

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
        last = self._last_surface
        if last is not None and last[0] == text:  # a tool call's search and its highlighting read one query
            return list(last[1])
        # One short text: Python's re is ~100x faster than an Arrow kernel call's fixed cost, and it is the very
        # pattern bm25s uses, so both paths give the same tokens (tests check it).
        lowered = text.lower() if self.lower else text
        tokens = [tok for tok in _WORD_RE.findall(lowered) if self.term_of(tok) is not None]
        self._last_surface = (text, tuple(tokens))
        return tokens

    def tokenize(self, text: str) -> list[str]:
        """Index terms of ``text`` in order, duplicates kept."""
        return [self.term_of(tok) for tok in self.surface_tokens(text)]  # type: ignore[misc]

    def __repr__(self) -> str:
        return (
            f"Tokenizer(stopwords=<{len(self.stopwords)} words>, stemmer={self.stemmer_language!r}, "
            f"lower={self.lower})"
        )
