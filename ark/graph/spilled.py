"""Pack edges spilled to disk into a graph directory's CSR arrays, in memory bounded by a bucket size.

:func:`ark.graph.build.build_graph_from_arrays` sorts every CSR entry in one int64 array: ~40 bytes an edge at its
peak, ~12 GB for GRBench Amazon's 313M edges. A streaming import instead appends its integer edges to an
:class:`EdgeSpill` (12 bytes an edge on disk, with each node's entry count in memory), and :func:`write_spilled_csr`
packs them as an external bucket sort:

1. the rows are cut into contiguous ranges of about ``bucket_entries`` CSR entries each (from the counts);
2. the spill is read a chunk at a time and each edge's two entries, as int64 keys ``(row, code, neighbor)``, are
   appended to their range's bucket file;
3. each bucket in row order is read, sorted and deduplicated on its own, and appended to ``neighbors.npy`` and
   ``codes.npy``, its row counts to ``indptr``, its edges to the schema counts and the fingerprint.

The keys and their order are those of the in-memory build, so the arrays, schema and fingerprint are byte-identical
to it (the tests keep the in-memory build as the oracle). Resident memory: the per-node arrays (~30 bytes a node)
plus one chunk or one bucket at a time.
"""

from __future__ import annotations

import hashlib
import io
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from ..arrays import Ints, sorted_unique

SPILL_CHUNK = 1 << 19  # edges read back from the spill at a time (6 MB of int32 triples, ~40 MB of keys)
BUCKET_ENTRIES = 1 << 20  # CSR entries a bucket aims at (8 MB of keys, ~40 MB to sort; a bigger hub gets its own)
MAX_BUCKETS = 512  # open bucket files at once; past this, buckets grow instead


class EdgeSpill:
    """Integer edges (source row, target row, relation code) appended to a scratch file, with the number of CSR
    entries each node will get (an upper bound: duplicates are counted until the pack drops them)."""

    def __init__(self, path: Path, num_nodes: int) -> None:
        self.path = path
        self.num_nodes = num_nodes
        self.entries = np.zeros(num_nodes, dtype=np.int64)
        self.count = 0
        self._handle: BinaryIO | None = path.open("wb")

    def append(self, src: Ints, dst: Ints, rel: Ints) -> None:
        if not len(src):
            return
        assert self._handle is not None, "append after close"
        np.column_stack((src, dst, rel)).astype(np.int32).tofile(self._handle)
        # counted by sorting the chunk, not np.bincount: that would zero an array of every node's count per chunk
        rows = np.sort(np.concatenate((src, dst)))
        firsts = np.flatnonzero(np.diff(rows, prepend=-1))
        self.entries[rows[firsts]] += np.diff(firsts, append=len(rows))
        self.count += len(src)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def chunks(self, size: int | None = None) -> Iterator[npt.NDArray[np.int32]]:
        """The spilled edges again, ``size`` (default :data:`SPILL_CHUNK`) at a time, as an ``(k, 3)`` int32 array
        each."""
        self.close()
        size = SPILL_CHUNK if size is None else size
        with self.path.open("rb") as handle:
            while True:
                block = np.fromfile(handle, dtype=np.int32, count=3 * size)
                if not len(block):
                    return
                yield block.reshape(-1, 3)


def write_spilled_csr(spill: EdgeSpill, directory: Path, node_type_codes: Ints, num_types: int,
                      num_relations: int, digest: hashlib.blake2b, spill_chunk: int | None = None,
                      bucket_entries: int | None = None) -> tuple[int, npt.NDArray[np.int64]]:
    """Write ``indptr.npy``, ``neighbors.npy`` and ``codes.npy`` into ``directory`` from ``spill`` (then deleted);
    feed the fingerprint ``digest`` the neighbors and codes. Returns (number of distinct edges, schema counts by
    ``(source type * relations + relation) * types + target type``). ``spill_chunk`` edges are read back and
    ``bucket_entries`` entries sorted at a time (default :data:`SPILL_CHUNK`, :data:`BUCKET_ENTRIES`); the files do
    not depend on them."""
    n = spill.num_nodes
    num_codes = 2 * max(num_relations, 1)
    if n * num_codes * n >= 2**63:
        raise ValueError(f"{n:,} nodes and {num_relations:,} relations do not fit the int64 keys of the CSR pack")
    starts = _bucket_starts(spill.entries, BUCKET_ENTRIES if bucket_entries is None else bucket_entries)
    scratch = directory / ".buckets"
    scratch.mkdir()
    try:
        _scatter(spill, scratch, starts, num_codes, SPILL_CHUNK if spill_chunk is None else spill_chunk)
        spill.path.unlink()
        row_counts = np.zeros(n, dtype=np.int64)
        types, relations = num_types, max(num_relations, 1)
        schema = np.zeros(types * relations * types, dtype=np.int64)
        upper = 2 * spill.count
        with _NpyWriter(directory / "neighbors.npy", np.int32, upper) as neighbors, \
                _NpyWriter(directory / "codes.npy", np.int16, upper) as codes:
            for b in range(len(starts) - 1):
                bucket = scratch / f"{b}.bin"
                keys = sorted_unique(np.fromfile(bucket, dtype=np.int64)) if bucket.exists() else np.empty(0, np.int64)
                bucket.unlink(missing_ok=True)
                nbr = (keys % n).astype(np.int32)
                keys //= n
                code = (keys % num_codes).astype(np.int16)
                rows = keys // num_codes
                del keys
                first, end = int(starts[b]), int(starts[b + 1])
                row_counts[first:end] = np.bincount(rows - first, minlength=end - first)
                out = (code % 2) == 0  # each edge once: its outgoing entry
                combined = (node_type_codes[rows[out]].astype(np.int64) * relations + code[out] // 2) * types
                schema += np.bincount(combined + node_type_codes[nbr[out]], minlength=len(schema))
                neighbors.write(nbr)
                codes.write(code)
                digest.update(nbr.data)
        indptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(row_counts, out=indptr[1:])
        np.save(directory / "indptr.npy", indptr)
        _digest_file(directory / "codes.npy", digest)
        return neighbors.count // 2, schema
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _bucket_starts(entries: npt.NDArray[np.int64], bucket_entries: int) -> npt.NDArray[np.int64]:
    """First row of each bucket and one past the last row: contiguous row ranges of ~``bucket_entries`` entries."""
    total = int(entries.sum())
    target = max(bucket_entries, -(-total // MAX_BUCKETS), 1)
    cuts = np.searchsorted(np.cumsum(entries), np.arange(target, total, target), side="right")
    return np.unique(np.concatenate(([0], cuts, [len(entries)]))).astype(np.int64)


def _scatter(spill: EdgeSpill, scratch: Path, starts: npt.NDArray[np.int64], num_codes: int, chunk: int) -> None:
    """Append each spilled edge's two CSR keys (outgoing in the source's row, incoming in the target's) to the
    bucket file of its row."""
    n = spill.num_nodes
    handles: dict[int, BinaryIO] = {}
    try:
        for block in spill.chunks(chunk):
            src, dst, rel = (block[:, k].astype(np.int64) for k in range(3))
            rows = np.concatenate((src, dst))
            keys = np.concatenate(((src * num_codes + 2 * rel) * n + dst, (dst * num_codes + 2 * rel + 1) * n + src))
            del src, dst, rel, block
            bucket = np.searchsorted(starts, rows, side="right") - 1
            order = np.argsort(bucket, kind="stable")
            keys, bucket = keys[order], bucket[order]
            firsts = np.flatnonzero(np.diff(bucket, prepend=-1))
            for first, end in zip(firsts.tolist(), [*firsts[1:].tolist(), len(keys)], strict=True):
                b = int(bucket[first])
                if b not in handles:
                    handles[b] = (scratch / f"{b}.bin").open("ab")
                keys[first:end].tofile(handles[b])
    finally:
        for handle in handles.values():
            handle.close()


def _digest_file(path: Path, digest: hashlib.blake2b, block: int = 1 << 24) -> None:
    """Feed ``digest`` the data of a 1-d ``.npy`` file (not its header), a block at a time."""
    with path.open("rb") as handle:
        np.lib.format.read_magic(handle)
        np.lib.format.read_array_header_1_0(handle)
        while chunk := handle.read(block):
            digest.update(chunk)


class _NpyWriter:
    """A 1-d ``.npy`` file written a slice at a time: the header is written for ``upper`` items and rewritten with
    the final count (numpy pads the header so that its length does not depend on the count)."""

    def __init__(self, path: Path, dtype: npt.DTypeLike, upper: int) -> None:
        self.path, self.dtype, self.count = path, np.dtype(dtype), 0
        self._handle = path.open("wb")
        self._reserved = len(self._header(upper))
        self._handle.write(self._header(upper))

    def _header(self, count: int) -> bytes:
        buffer = io.BytesIO()
        np.lib.format.write_array_header_1_0(
            buffer, {"descr": np.lib.format.dtype_to_descr(self.dtype), "fortran_order": False, "shape": (count,)})
        return buffer.getvalue()

    def write(self, values: Ints) -> None:
        self._handle.write(np.ascontiguousarray(values, dtype=self.dtype).data)
        self.count += len(values)

    def __enter__(self) -> _NpyWriter:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        if kind is not None:
            self._handle.close()
            return
        header = self._header(self.count)
        if len(header) != self._reserved:  # cannot happen with numpy's padding; never write a wrong header
            self._handle.close()
            raise RuntimeError(f"{self.path}: .npy header length changed from {self._reserved} to {len(header)}")
        self._handle.seek(0)
        self._handle.write(header)
        self._handle.close()
