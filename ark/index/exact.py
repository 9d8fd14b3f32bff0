"""Exact names: which nodes a whole query names (a name, a synonym or an identifier, ignoring case and punctuation).

A field-aware BM25 index keeps one :class:`ExactNames` table beside its postings. A node whose name, synonym or
identifier *equals* the query (after :func:`exact_key`: lower-cased, words joined by single spaces, punctuation
dropped) gets a boost that lifts it above every node that only matches the query's words, so searching "FBN1",
"OMIM:154700" or "marfan syndrome" returns the node so named first.

Keys are stored as 64-bit BLAKE2b hashes, sorted, with the nodes of each key in CSR arrays: memory-mappable and
looked up with one binary search, so the table scales to millions of nodes without a Python dict. A hash collision
can only add a node whose key differs; :meth:`ExactNames.lookup` is used for ranking, where such a node would merely
rank high, and at 64 bits a collision among millions of keys is about a one-in-a-million event.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ark.arrays import I64, U64

_WORDS = re.compile(r"\w+")
_ARRAYS = ("exact_keys", "exact_indptr", "exact_nodes")
KEYS_A_BUCKET = 4  # keys of the exact-name table a bucket of its hashes' top bits, on average


def exact_key(text: str) -> str:
    """The form in which a query and a name are compared: lower-case words joined by single spaces.

    ``"OMIM:154700"`` -> ``"omim 154700"``, ``"Ehlers-Danlos syndrome, type IV"`` -> ``"ehlers danlos syndrome type
    iv"``.
    """
    return " ".join(_WORDS.findall(text.casefold())) if text else ""


def _hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "little")


class ExactNames:
    """Nodes by the exact key of each of their names (see the module doc)."""

    def __init__(self, keys: U64, indptr: I64, nodes: I64) -> None:
        # plain views of memory-mapped arrays (np.memmap's indexing wrapper costs ~4 us of a lookup)
        self.keys = np.asarray(keys)
        self.indptr = np.asarray(indptr)
        self.nodes = np.asarray(nodes)

    @classmethod
    def build(cls, names: Iterable[Sequence[str]]) -> ExactNames:
        """``names[i]`` lists node ``i``'s names (name, synonyms, identifiers); empty keys are skipped."""
        builder = ExactNamesBuilder()
        for node, values in enumerate(names):
            builder.add(node, values)
        return builder.finish()

    def lookup(self, query: str) -> I64:
        """Ids of the nodes one of whose names has the query's exact key (ascending; empty when none)."""
        key = exact_key(query)
        if not key or len(self.keys) == 0:
            return np.zeros(0, dtype=np.int64)
        wanted = _hash(key)
        buckets, shift = self._buckets()
        lo, hi = buckets[wanted >> shift: (wanted >> shift) + 2].tolist()
        found = self.keys[lo:hi].tolist()  # the bucket's keys, ascending: about KEYS_A_BUCKET of them
        if wanted not in found:
            return np.zeros(0, dtype=np.int64)
        pos = lo + found.index(wanted)
        first, stop = self.indptr[pos: pos + 2].tolist()
        return np.asarray(self.nodes[first:stop], dtype=np.int64)

    def _buckets(self) -> tuple[I64, int]:
        """Where each run of keys sharing their top bits starts (about :data:`KEYS_A_BUCKET` keys a bucket; the
        last bound is the number of keys), and the shift that gives a key's bucket: made once per table, 2-4 bytes
        a key. A lookup then reads two neighbouring bounds and one bucket's keys (a cache line or two) where a binary
        search over all the keys read ~17 of them far apart, most cold in a tool call (the exact-name pass was
        ~25 us of a search call on HPO)."""
        made = self.__dict__.get("_bucket_table")
        if made is None:
            bits = max((len(self.keys) // KEYS_A_BUCKET).bit_length(), 1)
            shift = 64 - bits
            starts = np.searchsorted(self.keys, np.arange(2**bits, dtype=np.uint64) << np.uint64(shift))
            bounds: I64 = np.append(starts, len(self.keys)).astype(np.int64)
            made = self.__dict__["_bucket_table"] = (bounds, shift)
        return made

    def __len__(self) -> int:
        return len(self.keys)

    def save(self, directory: Path) -> None:
        """Write the arrays into ``directory`` (the caller makes the directory write atomic)."""
        for name, array in zip(_ARRAYS, (self.keys, self.indptr, self.nodes), strict=True):
            np.save(directory / f"{name}.npy", np.ascontiguousarray(array))

    @classmethod
    def load(cls, directory: Path, mmap: bool = True) -> ExactNames | None:
        """The table saved in ``directory``, or None when the index has none (plain BM25)."""
        if not (directory / f"{_ARRAYS[0]}.npy").is_file():
            return None
        arrays = []
        for name in _ARRAYS:
            try:
                arrays.append(np.load(directory / f"{name}.npy", mmap_mode="r" if mmap else None))
            except ValueError:  # an empty array cannot be memory-mapped
                arrays.append(np.load(directory / f"{name}.npy"))
        return cls(*arrays)


class ExactNamesBuilder:
    """Collects nodes' names as (key hash, node) pairs in numpy chunks, 16 bytes a name and no Python object kept
    per node (a graph's build streams millions of nodes through it), then sorts them into an :class:`ExactNames`."""

    CHUNK = 65_536

    def __init__(self) -> None:
        self._hashes: list[int] = []
        self._nodes: list[int] = []
        self._parts: list[tuple[U64, I64]] = []

    def add(self, node: int, values: Sequence[str]) -> None:
        """Node ``node``'s names (empty keys skipped)."""
        for value in values:
            key = exact_key(value)
            if key:
                self._hashes.append(_hash(key))
                self._nodes.append(node)
        if len(self._hashes) >= self.CHUNK:
            self._flush()

    def _flush(self) -> None:
        self._parts.append((np.array(self._hashes, dtype=np.uint64), np.array(self._nodes, dtype=np.int64)))
        self._hashes, self._nodes = [], []

    def finish(self) -> ExactNames:
        """The table: keys ascending, each key's distinct nodes ascending."""
        self._flush()
        hashes = np.concatenate([h for h, _ in self._parts])
        nodes = np.concatenate([n for _, n in self._parts])
        self._parts = []
        order = np.lexsort((nodes, hashes))
        hashes, nodes = hashes[order], nodes[order]
        distinct = np.ones(len(hashes), dtype=bool)
        distinct[1:] = (hashes[1:] != hashes[:-1]) | (nodes[1:] != nodes[:-1])
        hashes, nodes = hashes[distinct], nodes[distinct]
        starts = np.flatnonzero(np.concatenate([[True], hashes[1:] != hashes[:-1]])) if len(hashes) else \
            np.zeros(0, dtype=np.int64)
        indptr = np.append(starts, len(hashes)).astype(np.int64)
        return ExactNames(hashes[starts], indptr, nodes)
