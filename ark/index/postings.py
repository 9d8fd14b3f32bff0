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
from typing import TypeAlias, TypeVar

import numpy as np
import numpy.typing as npt

from ark.arrays import F32, I32, I64, U8, Ints
from ark.errors import ArkError
from ark.index.optional_kernel import build_kernel
from ark.storage.cache_folder import rebuild_hint
from ark.storage.checksums import DamagedFileError
from ark.storage.full_disk import naming_full_disk

BLOCK = 128
SKIP = 16
BLOB_FILES = {"doc_deltas": "doc_deltas.bin", "tfs": "tfs.bin", "block_last": "block_last.bin",
              "block_max_tf": "block_max_tf.bin", "block_min_dl": "block_min_dl.bin", "skip_last": "skip_last.bin"}
TERM_ARRAYS = ("term_first", "term_bytes", "term_widths", "term_ptr", "doc_lengths")
BLOCK_DTYPES = {"block_last": np.int32, "block_max_tf": np.float32, "block_min_dl": np.int32, "skip_last": np.int32}
_WIDTH_DTYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32}
TfScalar: TypeAlias = np.uint8 | np.uint16 | np.uint32 | np.float32  # raw counts (BM25) or pseudo frequencies (BM25F)
Tfs: TypeAlias = npt.NDArray[TfScalar]
_S = TypeVar("_S", bound=np.uint8 | np.uint16 | np.uint32 | np.int32 | np.int64 | np.float32)  # the dtypes saved


class IndexFormatError(ValueError, ArkError):
    """A saved index was written in another format version (a graph's cached index is then rebuilt)."""


def bm25_weights(idf: float, tf: Tfs, doc_lengths: npt.NDArray[np.int32 | np.uint8 | np.uint16], k1: float,
                 b: float, avgdl: float) -> F32:
    """float32 ``idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` (bm25s's "lucene" form), evaluated in float64 in
    this operation order (the pruning kernel repeats it, so both give the same bits). BM25F passes ``b = 0``."""
    tf = tf.astype(np.float64)
    norm = k1 * (1.0 - b + b * doc_lengths / avgdl)
    return (idf * tf / (tf + norm)).astype(np.float32)


def tf_dtype(max_tf: float, fielded: bool) -> np.dtype[TfScalar]:
    """Narrowest storage for term frequencies: float32 pseudo frequencies, else the smallest unsigned integer."""
    if fielded:
        return np.dtype(np.float32)
    for dtype in (np.uint8, np.uint16, np.uint32):
        if max_tf <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    raise ValueError(f"term frequency {max_tf} does not fit 32 bits")


def _memmap(path: Path, dtype: np.dtype[_S], mmap: bool) -> npt.NDArray[_S]:
    if not mmap or path.stat().st_size == 0:  # an empty file cannot be memory-mapped
        return np.fromfile(path, dtype=dtype)
    return np.memmap(path, dtype=dtype, mode="r")


@dataclass
class Postings:
    """A term-major postings store (see the module doc); ``doc_lengths`` are the documents' lengths in tokens."""

    doc_deltas: U8
    tfs: Tfs
    block_last: I32
    block_max_tf: F32
    block_min_dl: I32
    term_first: I32
    term_bytes: I64
    term_widths: U8
    term_ptr: I64
    doc_lengths: I32
    skip_last: I32 | None = None

    def __post_init__(self) -> None:
        for name in (*BLOB_FILES, *TERM_ARRAYS):  # plain views of the maps: slicing a np.memmap costs ~15 us
            value = getattr(self, name)
            if isinstance(value, np.memmap):
                setattr(self, name, np.asarray(value))
        df = np.diff(np.asarray(self.term_ptr)).astype(np.int64, copy=False)
        self.block_ptr = _group_ptr(df, BLOCK)
        self.skip_ptr = _group_ptr(df, SKIP) if self.skip_last is not None else None

    def skips(self) -> tuple[I32, I64, int]:
        """The finest skip list there is: (last document of each group, each term's first group, group size)."""
        if self.skip_last is None or self.skip_ptr is None:
            return self.block_last, self.block_ptr, BLOCK
        return self.skip_last, self.skip_ptr, SKIP

    @property
    def num_terms(self) -> int:
        return len(self.term_first)

    def df(self, term: int) -> int:
        return int(self.term_ptr[term + 1] - self.term_ptr[term])

    def docs(self, term: int) -> I32:
        """Term ``term``'s document ids, ascending (int32)."""
        n = self.df(term)
        start, width = int(self.term_bytes[term]), int(self.term_widths[term])
        deltas = np.asarray(self.doc_deltas[start: start + n * width]).view(_WIDTH_DTYPES[width])
        docs = np.cumsum(deltas, dtype=np.int32)
        docs += self.term_first[term]
        return docs

    def tf(self, term: int) -> Tfs:
        return self.tfs[int(self.term_ptr[term]): int(self.term_ptr[term + 1])]

    def blocks(self, term: int) -> slice[int, int, int | None]:
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
        path = directory

        def blob(name: str, dtype: np.dtype[_S]) -> npt.NDArray[_S]:
            nonlocal path
            path = directory / BLOB_FILES[name]
            return _memmap(path, dtype, mmap)

        def array(name: str, dtype: type[_S]) -> npt.NDArray[_S]:
            nonlocal path
            path = directory / f"{name}.npy"
            return _load_array(path, mmap, dtype)

        try:  # read in the order of BLOB_FILES, then TERM_ARRAYS
            blobs = (blob("doc_deltas", np.dtype(np.uint8)), blob("tfs", np.dtype(meta["tf_dtype"])),
                     blob("block_last", np.dtype(np.int32)), blob("block_max_tf", np.dtype(np.float32)),
                     blob("block_min_dl", np.dtype(np.int32)))
            # indexes of format 2 written before the fine skip list open without it
            skip_last = None if not (directory / BLOB_FILES["skip_last"]).exists() else \
                blob("skip_last", np.dtype(np.int32))
            terms = (array("term_first", np.int32), array("term_bytes", np.int64), array("term_widths", np.uint8),
                     array("term_ptr", np.int64), array("doc_lengths", np.int32))
        except (OSError, ValueError, EOFError) as exc:  # missing or truncated ("mmap length is greater than file size")
            raise DamagedFileError(path, f"unreadable: {exc}", rebuild_hint(directory)) from exc
        return cls(*blobs, *terms, skip_last)


@dataclass
class EncodedPostings:
    """A batch of terms' postings ready to append (:meth:`PostingsWriter.encode`): per term its postings count,
    first document, delta width and byte offset within the batch's ``doc_deltas``; each file's bytes."""

    df: I64
    first: I32
    offsets: I64
    widths: U8
    blobs: dict[str, npt.NDArray[TfScalar | np.int32]]  # contiguous arrays, written as in memory (little-endian)


class PostingsWriter:
    """Appends term-major batches of postings (consecutive term ids) to the files of a :class:`Postings`."""

    def __init__(self, directory: Path, tf_type: np.dtype[TfScalar], doc_lengths: I32) -> None:
        self.directory = directory
        self.tf_type = tf_type
        self.doc_lengths = doc_lengths
        self.files = {name: open(directory / file, "wb") for name, file in BLOB_FILES.items()}  # noqa: SIM115
        self.first_parts: list[I32] = []  # per batch: term_first, term_bytes, term_widths, df
        self.byte_parts: list[I64] = []
        self.width_parts: list[U8] = []
        self.df_parts: list[I64] = []
        self.bytes_written = 0

    def add(self, df: I64, docs: Ints, tf: F32 | Tfs) -> None:
        """Postings of the next ``len(df)`` terms: ``df[i]`` of them each, ``docs`` ascending within a term."""
        self.write(self.encode(df, docs, tf))

    def encode(self, df: I64, docs: Ints, tf: F32 | Tfs) -> EncodedPostings:
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

    def _encode_numpy(self, df: I64, docs: Ints, tf: F32 | Tfs) -> EncodedPostings:
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
        # Each posting's first ``width`` little-endian bytes, postings in order: one masked read of the (n, 4) bytes.
        kept = np.arange(4, dtype=np.uint8) < np.repeat(widths, df)[:, None]
        blob = deltas.astype("<u4").view(np.uint8).reshape(-1, 4)[kept]
        blobs = {"doc_deltas": blob, "tfs": np.ascontiguousarray(tf, dtype=self.tf_type),
                 **self._blocks(df, starts, docs, tf)}
        return EncodedPostings(df, first, offsets, widths, blobs)

    def encode_piece(self, docs: Ints, previous: int | None, tf: F32 | Tfs, width: int,
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
        self.first_parts.append(batch.first)
        self.byte_parts.append(batch.offsets + self.bytes_written)
        self.width_parts.append(batch.widths)
        self.df_parts.append(batch.df)
        self.bytes_written += len(batch.blobs["doc_deltas"])

    def _blocks(self, df: I64, starts: I64, docs: Ints, tf: F32 | Tfs) -> dict[str, npt.NDArray[np.int32 | np.float32]]:
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
        first = np.concatenate(self.first_parts) if self.first_parts else np.zeros(0, np.int32)
        offsets = np.concatenate(self.byte_parts) if self.byte_parts else np.zeros(0, np.int64)
        widths = np.concatenate(self.width_parts) if self.width_parts else np.zeros(0, np.uint8)
        df = np.concatenate(self.df_parts) if self.df_parts else np.zeros(0, np.int64)
        term_ptr = np.zeros(len(df) + 1, dtype=np.int64)
        np.cumsum(df, out=term_ptr[1:])
        def blob(name: str, dtype: np.dtype[_S]) -> npt.NDArray[_S]:
            return _memmap(self.directory / BLOB_FILES[name], dtype, True)

        return Postings(blob("doc_deltas", np.dtype(np.uint8)), blob("tfs", self.tf_type),
                        blob("block_last", np.dtype(np.int32)), blob("block_max_tf", np.dtype(np.float32)),
                        blob("block_min_dl", np.dtype(np.int32)), first, offsets, widths, term_ptr,
                        self.doc_lengths, blob("skip_last", np.dtype(np.int32)))


def _encode_kernel() -> ModuleType | None:
    """The compiled encoder, or None without numba (imported on the first build, never when an index is opened)."""
    return build_kernel("_encode_kernel")


def _group_ptr(df: I64, size: int) -> I64:
    """Each term's first group of ``size`` postings (and the total at the end), groups numbered across terms."""
    ptr = np.zeros(len(df) + 1, dtype=np.int64)
    np.cumsum((df + size - 1) // size, out=ptr[1:])
    return ptr


def _groups(df: I64, starts: I64, size: int) -> tuple[I64, I64]:
    """(start, end) postings of each term's groups of ``size`` (the last one shorter), terms in order."""
    per_term = (df + size - 1) // size
    term = np.repeat(np.arange(len(df)), per_term)
    first = np.repeat(np.cumsum(per_term) - per_term, per_term)
    start = starts[term] + (np.arange(len(term)) - first) * size
    return start, np.minimum(start + size, starts[term] + df[term])


def _load_array(path: Path, mmap: bool, dtype: type[_S]) -> npt.NDArray[_S]:
    """A saved term array, ``dtype`` the one :meth:`PostingsWriter.close` gives it (the file's header holds it)."""
    try:
        return np.load(path, mmap_mode="r" if mmap else None)
    except ValueError:  # an empty array cannot be memory-mapped
        return np.load(path)
