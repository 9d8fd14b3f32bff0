"""Node id -> row for an import too large for a Python dict of its ids, exact, in ~12 bytes a node.

A ``dict`` of GRBench Freelaw's 84M string ids would take ~8 GB. Here each id's 64-bit hash (Python's string
hash: fixed within a process, which is all an import needs) is kept in a sorted array beside its row, and a batch of
ids is found by one vectorised binary search. Every hit is then checked against the node table's own id column
(memory-mapped), so a neighbor id whose hash merely equals a node's is never taken for it; the few ids that share a
hash with another node id are kept in a small dict, and two equal ids are the duplicate-id error.
"""

from __future__ import annotations

from array import array
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ark.graph import GraphValidationError

id_hash = hash  # a name of its own so that a test can force collisions


class IdIndex:
    """Rows of node ids, from the hashes of the ids in row order and the node table that holds the ids."""

    def __init__(self, hashes: array, nodes_file: Path, where: str) -> None:
        values = np.frombuffer(hashes, dtype=np.int64)
        self.num_nodes = len(values)
        order = np.argsort(values, kind="stable")
        self._hashes = values[order]
        self._rows = order.astype(np.int32 if self.num_nodes < 2**31 else np.int64)
        del order
        self._ids = pa.ipc.open_file(pa.memory_map(str(nodes_file))).read_all().column("id")  # zero-copy
        self.shared = self._shared_hashes(where)

    def _shared_hashes(self, where: str) -> dict[str, int]:
        """Id -> row of every id whose hash another id has too; raises on a duplicate id."""
        same = np.flatnonzero(self._hashes[1:] == self._hashes[:-1])
        if not len(same):
            return {}
        rows = np.unique(np.concatenate((self._rows[same], self._rows[same + 1])))
        shared: dict[str, int] = {}
        for row, node_id in zip(rows.tolist(), self._ids.take(pa.array(rows)).to_pylist(), strict=True):
            if node_id in shared:
                raise GraphValidationError(f"{where}: duplicate node id {node_id!r}")
            shared[node_id] = row
        return shared

    def rows(self, ids: list[str]) -> np.ndarray:
        """The row of each of ``ids``, -1 where it is no node's id."""
        if not ids:
            return np.empty(0, dtype=np.int64)
        wanted = np.fromiter(map(id_hash, ids), dtype=np.int64, count=len(ids))
        position = np.minimum(np.searchsorted(self._hashes, wanted), self.num_nodes - 1)
        rows = np.where(self._hashes[position] == wanted, self._rows[position].astype(np.int64), -1)
        hit = np.flatnonzero(rows >= 0)
        if len(hit):
            given = pa.array(ids, pa.string()).take(pa.array(hit))
            same = pc.equal(self._ids.take(pa.array(rows[hit])), given).to_numpy(zero_copy_only=False)
            for i in hit[~same].tolist():  # another id with the same hash: exact lookup, else not a node
                rows[i] = self.shared.get(ids[i], -1)
        return rows
