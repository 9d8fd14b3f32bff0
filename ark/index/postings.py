"""The compressed, memory-mapped postings of a BM25 index (format 2) and the BM25 weight they give.

Term ``t``'s postings are its documents in ascending id order with a term frequency each:

- document ids as deltas (``doc - previous doc``; the first is 0 and ``term_first[t]`` holds the first id), each
  term's deltas in the narrowest of 1, 2 or 4 little-endian bytes that fits its largest gap (``term_widths``),
  starting at byte ``term_bytes[t]`` of ``doc_deltas.bin``. A frequent term's gaps are small, so
  most postings take one or two bytes; numpy decodes a term with one ``cumsum``.
- term frequencies in ``tfs.bin``, postings ``term_ptr[t]:term_ptr[t + 1]``: the raw count (the narrowest unsigned
  integer type holding the largest) for plain BM25, the length-normalised BM25F pseudo frequency (float32) for a
  fielded index. The BM25 weight is computed when a query reads them (:func:`bm25_weights`) from the idf, the
  frequency and the document's length, in float64 and rounded to float32 exactly as the weights of format 1 were
  precomputed, so scores are unchanged.
- blocks of :data:`BLOCK` postings (the last one shorter): the last document id of each (a skip list), its largest
  term frequency and its shortest document. The weight grows with the frequency and falls with the length, so
  ``weight(idf, max tf, min length)`` bounds every weight in the block; the bounds hold neither the idf nor the
  average length, so they stay valid when those change (a later delta segment).
- a finer skip list: the last document id of every :data:`SKIP` postings (``skip_last.bin``), so that looking a
  candidate up (subset scoring, a non-essential term in pruned search) decodes at most ``SKIP`` deltas instead of a
  whole block's. 4 bytes per 16 postings; an index written without it reads the block skip list instead.

Arrays are raw little-endian files (dtypes in ``meta.json``) read through ``np.memmap``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
from numpy.typing import DTypeLike

from ark.errors import ArkError
from ark.index.optional_kernel import optional_kernel
from ark.storage.cache_folder import rebuild_hint
from ark.storage.checksums import DamagedFileError
from ark.storage.full_disk import naming_full_disk

BLOCK = 128
SKIP = 16
BLOB_FILES = {"doc_deltas": "doc_deltas.bin", "tfs": "tfs.bin", "block_last": "block_last.bin",
              "block_max_tf": "block_max_tf.bin", "block_min_dl": "block_min_dl.bin", "skip_last": "skip_last.bin"}
OPTIONAL_BLOBS = ("skip_last",)  # indexes of format 2 written before the fine skip list open without it
TERM_ARRAYS = ("term_first", "term_bytes", "term_widths", "term_ptr", "doc_lengths")
BLOCK_DTYPES = {"block_last": np.int32, "block_max_tf": np.float32, "block_min_dl": np.int32, "skip_last": np.int32}
_WIDTH_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}


class IndexFormatError(ValueError, ArkError):
    """A saved index was written in another format version (a graph's cached index is then rebuilt)."""


def bm25_weights(idf: float, tf: np.ndarray, doc_lengths: np.ndarray, k1: float, b: float,
                 avgdl: float) -> np.ndarray:
    """float32 ``idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` (bm25s's "lucene" form), evaluated in float64 in
    this operation order (the pruning kernel repeats it, so both give the same bits). BM25F passes ``b = 0``."""
    tf = tf.astype(np.float64)
    norm = k1 * (1.0 - b + b * doc_lengths / avgdl)
    return (idf * tf / (tf + norm)).astype(np.float32)


def tf_dtype(max_tf: float, fielded: bool) -> np.dtype:
    """Narrowest storage for term frequencies: float32 pseudo frequencies, else the smallest unsigned integer."""
    if fielded:
        return np.dtype(np.float32)
    for dtype in (np.uint8, np.uint16, np.uint32):
        if max_tf <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    raise ValueError(f"term frequency {max_tf} does not fit 32 bits")


def _memmap(path: Path, dtype: np.dtype, mmap: bool) -> np.ndarray:
    if not mmap or path.stat().st_size == 0:  # an empty file cannot be memory-mapped
        return np.fromfile(path, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r")


@dataclass
class Postings:
    """A term-major postings store (see the module doc); ``doc_lengths`` are the documents' lengths in tokens."""

    doc_deltas: np.ndarray
    tfs: np.ndarray
    block_last: np.ndarray
    block_max_tf: np.ndarray
    block_min_dl: np.ndarray
    term_first: np.ndarray
    term_bytes: np.ndarray
    term_widths: np.ndarray
    term_ptr: np.ndarray
    doc_lengths: np.ndarray
    skip_last: np.ndarray | None = None

    def __post_init__(self) -> None:
        for name in (*BLOB_FILES, *TERM_ARRAYS):  # plain views of the maps: slicing a np.memmap costs ~15 us
            value = getattr(self, name)
            if isinstance(value, np.memmap):
                setattr(self, name, np.asarray(value))
        df = np.diff(np.asarray(self.term_ptr))
        self.block_ptr = _group_ptr(df, BLOCK)
        self.skip_ptr = _group_ptr(df, SKIP) if self.skip_last is not None else None

    def skips(self) -> tuple[np.ndarray, np.ndarray, int]:
        """The finest skip list there is: (last document of each group, each term's first group, group size)."""
        if self.skip_last is None or self.skip_ptr is None:
            return self.block_last, self.block_ptr, BLOCK
        return self.skip_last, self.skip_ptr, SKIP

    @property
    def num_terms(self) -> int:
        return len(self.term_first)

    def df(self, term: int) -> int:
        return int(self.term_ptr[term + 1] - self.term_ptr[term])

    def docs(self, term: int) -> np.ndarray:
        """Term ``term``'s document ids, ascending (int32)."""
        n = self.df(term)
        start, width = int(self.term_bytes[term]), int(self.term_widths[term])
        deltas = np.asarray(self.doc_deltas[start: start + n * width]).view(_WIDTH_DTYPES[width])
        docs = np.cumsum(deltas, dtype=np.int32)
        docs += self.term_first[term]
        return docs

    def tf(self, term: int) -> np.ndarray:
        return self.tfs[int(self.term_ptr[term]): int(self.term_ptr[term + 1])]

    def blocks(self, term: int) -> slice:
        return slice(int(self.block_ptr[term]), int(self.block_ptr[term + 1]))

    # ------------------------------------------------------------------ files
    def save(self, directory: Path) -> dict:
        """Write every array into ``directory``; returns the dtypes to record in the index's meta.json."""
        for name, file in BLOB_FILES.items():
            if getattr(self, name) is not None:
                np.ascontiguousarray(getattr(self, name)).tofile(directory / file)
        for name in TERM_ARRAYS:
            np.save(directory / f"{name}.npy", np.ascontiguousarray(getattr(self, name)))
        return {"tf_dtype": np.dtype(self.tfs.dtype).str, "block": BLOCK}

    @classmethod
    def load(cls, directory: Path, meta: dict, mmap: bool = True) -> Postings:
        """The postings saved in ``directory``; :class:`~ark.storage.checksums.DamagedFileError` naming the file
        when one is missing or truncated (indexes written before checksums are checked this far)."""
        dtypes: dict[str, DTypeLike] = {"doc_deltas": np.uint8, "tfs": np.dtype(meta["tf_dtype"]), **BLOCK_DTYPES}
        blobs, arrays, path = {}, {}, directory
        try:
            for name, file in BLOB_FILES.items():
                path = directory / file
                if name in OPTIONAL_BLOBS and not path.exists():
                    continue
                blobs[name] = _memmap(path, np.dtype(dtypes[name]), mmap)
            for name in TERM_ARRAYS:
                path = directory / f"{name}.npy"
                arrays[name] = _load_array(path, mmap)
        except (OSError, ValueError, EOFError) as exc:  # missing or truncated ("mmap length is greater than file size")
            raise DamagedFileError(path, f"unreadable: {exc}", rebuild_hint(directory)) from exc
        return cls(**blobs, **arrays)


@dataclass
class EncodedPostings:
    """A batch of terms' postings ready to append (:meth:`PostingsWriter.encode`): per term its postings count,
    first document, delta width and byte offset within the batch's ``doc_deltas``; each file's bytes."""

    df: np.ndarray
    first: np.ndarray
    offsets: np.ndarray
    widths: np.ndarray
    blobs: dict[str, np.ndarray]  # contiguous arrays, written as they are in memory (little-endian here)


class PostingsWriter:
    """Appends term-major batches of postings (consecutive term ids) to the files of a :class:`Postings`."""

    def __init__(self, directory: Path, tf_type: np.dtype, doc_lengths: np.ndarray) -> None:
        self.directory = directory
        self.tf_type = tf_type
        self.doc_lengths = doc_lengths
        self.files = {name: open(directory / file, "wb") for name, file in BLOB_FILES.items()}  # noqa: SIM115
        self.term_parts: dict[str, list[np.ndarray]] = {name: [] for name in TERM_ARRAYS[:3]}
        self.df_parts: list[np.ndarray] = []
        self.bytes_written = 0

    def add(self, df: np.ndarray, docs: np.ndarray, tf: np.ndarray) -> None:
        """Postings of the next ``len(df)`` terms: ``df[i]`` of them each, ``docs`` ascending within a term."""
        self.write(self.encode(df, docs, tf))

    def encode(self, df: np.ndarray, docs: np.ndarray, tf: np.ndarray) -> EncodedPostings:
        """A batch of terms' postings (as :meth:`add` takes them) encoded, not yet written: touches no state, so
        worker threads encode batches side by side and :meth:`write` writes them in order. Compiled when numba is
        installed (:mod:`ark.index._encode_kernel`), else numpy: the same bytes."""
        df = df.astype(np.int64)
        kernel = _encode_kernel()
        if kernel is not None:
            tf = np.ascontiguousarray(tf, dtype=self.tf_type)
            docs = np.ascontiguousarray(docs, dtype=np.int32)
            first, widths, offsets, blob = kernel.encode_deltas(df, docs)
            bounds = kernel.group_bounds(df, docs, tf, self.doc_lengths, BLOCK, SKIP)
            blobs = {"doc_deltas": blob, "tfs": tf, **dict(zip(BLOCK_DTYPES, bounds, strict=True))}
            return EncodedPostings(df, first, offsets, widths, blobs)
        return self._encode_numpy(df, docs, tf)

    def _encode_numpy(self, df: np.ndarray, docs: np.ndarray, tf: np.ndarray) -> EncodedPostings:
        starts = np.zeros(len(df), dtype=np.int64)
        np.cumsum(df[:-1], out=starts[1:])
        has = df > 0
        first = np.zeros(len(df), dtype=np.int32)
        first[has] = docs[starts[has]]
        deltas = np.empty(len(docs), dtype=np.int64)
        if len(docs):
            deltas[0] = 0
            np.subtract(docs[1:], docs[:-1], out=deltas[1:])
            deltas[starts[has]] = 0
        largest = np.zeros(len(df), dtype=np.int64)
        largest[has] = np.maximum.reduceat(deltas, starts[has]) if len(docs) else 0
        widths = np.where(largest < 2**8, 1, np.where(largest < 2**16, 2, 4)).astype(np.uint8)
        sizes = df * widths  # unpadded: numpy reads unaligned views, the kernel reads bytes
        offsets = np.zeros(len(df), dtype=np.int64)
        np.cumsum(sizes[:-1], out=offsets[1:])
        blob = np.zeros(int(sizes.sum()), dtype=np.uint8)
        term_of = np.repeat(np.arange(len(df)), df)
        position = offsets[term_of] + (np.arange(len(docs)) - starts[term_of]) * widths[term_of]
        term_width = widths[term_of]
        for byte in range(4):
            sel = term_width > byte
            blob[position[sel] + byte] = (deltas[sel] >> (8 * byte)) & 0xFF
        blobs = {"doc_deltas": blob, "tfs": np.ascontiguousarray(tf, dtype=self.tf_type),
                 **self._blocks(df, starts, docs, tf)}
        return EncodedPostings(df, first, offsets, widths, blobs)

    def encode_piece(self, docs: np.ndarray, previous: int | None, tf: np.ndarray, width: int,
                     df: int | None) -> EncodedPostings:
        """Consecutive postings of one term too large for a batch, encoded as :meth:`encode` encodes the whole term:
        ``previous`` is the document before ``docs`` (None for the term's first piece, which gives its ``df``),
        ``width`` the term's delta width, and every piece but the last holds whole blocks."""
        deltas = np.diff(docs.astype(np.int64), prepend=docs[0] if previous is None else previous)
        blob = np.ascontiguousarray(deltas.astype(_WIDTH_DTYPES[width]).astype(f"<u{width}")).view(np.uint8)
        blobs = {"doc_deltas": blob, "tfs": np.ascontiguousarray(tf, dtype=self.tf_type),
                 **self._blocks(np.array([len(docs)], np.int64), np.zeros(1, np.int64), docs, tf)}
        if df is None:  # a later piece: its term's entries came with the first
            return EncodedPostings(np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64),
                                   np.zeros(0, np.uint8), blobs)
        return EncodedPostings(np.array([df], np.int64), np.array([docs[0]], np.int32), np.zeros(1, np.int64),
                               np.array([width], np.uint8), blobs)

    def write(self, batch: EncodedPostings) -> None:
        """Append an encoded batch (batches in term order)."""
        for name, data in batch.blobs.items():
            with naming_full_disk(self.directory / BLOB_FILES[name]):
                self.files[name].write(data.data.cast("B"))
        self.term_parts["term_first"].append(batch.first)
        self.term_parts["term_bytes"].append(batch.offsets + self.bytes_written)
        self.term_parts["term_widths"].append(batch.widths)
        self.df_parts.append(batch.df)
        self.bytes_written += len(batch.blobs["doc_deltas"])

    def _blocks(self, df: np.ndarray, starts: np.ndarray, docs: np.ndarray, tf: np.ndarray) -> dict[str, np.ndarray]:
        block_start, block_end = _groups(df, starts, BLOCK)
        if not len(block_start):
            return {}
        lengths = self.doc_lengths[docs]
        return {"block_last": docs[block_end - 1].astype(np.int32),
                "skip_last": docs[_groups(df, starts, SKIP)[1] - 1].astype(np.int32),
                "block_max_tf": np.maximum.reduceat(tf, block_start).astype(np.float32),
                "block_min_dl": np.minimum.reduceat(lengths, block_start).astype(np.int32)}

    def close(self) -> Postings:
        """Finish the files and open them (memory-mapped)."""
        for name, file in self.files.items():
            with naming_full_disk(self.directory / BLOB_FILES[name]):
                file.close()  # flushes the last buffered bytes
        parts = {name: np.concatenate(p) if p else np.zeros(0, dtype) for (name, p), dtype in
                 zip(self.term_parts.items(), (np.int32, np.int64, np.uint8), strict=True)}
        df = np.concatenate(self.df_parts) if self.df_parts else np.zeros(0, np.int64)
        term_ptr = np.zeros(len(df) + 1, dtype=np.int64)
        np.cumsum(df, out=term_ptr[1:])
        dtypes: dict[str, DTypeLike] = {"doc_deltas": np.uint8, "tfs": self.tf_type, **BLOCK_DTYPES}
        blobs = {name: _memmap(self.directory / file, np.dtype(dtypes[name]), True)
                 for name, file in BLOB_FILES.items()}
        return Postings(**blobs, **parts, term_ptr=term_ptr, doc_lengths=self.doc_lengths)


def _encode_kernel() -> ModuleType | None:
    """The compiled encoder, or None without numba (imported on the first build, never when an index is opened)."""
    return optional_kernel("_encode_kernel")


def _group_ptr(df: np.ndarray, size: int) -> np.ndarray:
    """Each term's first group of ``size`` postings (and the total at the end), groups numbered across terms."""
    ptr = np.zeros(len(df) + 1, dtype=np.int64)
    np.cumsum((df + size - 1) // size, out=ptr[1:])
    return ptr


def _groups(df: np.ndarray, starts: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) postings of each term's groups of ``size`` (the last one shorter), terms in order."""
    per_term = (df + size - 1) // size
    term = np.repeat(np.arange(len(df)), per_term)
    first = np.repeat(np.cumsum(per_term) - per_term, per_term)
    start = starts[term] + (np.arange(len(term)) - first) * size
    return start, np.minimum(start + size, starts[term] + df[term])


def _load_array(path: Path, mmap: bool) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r" if mmap else None)
    except ValueError:  # an empty array cannot be memory-mapped
        return np.load(path)
