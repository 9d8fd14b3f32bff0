"""Graph directories: ``graph.json`` (metadata, type tables, schema), ``nodes.parquet`` and ``.npy`` arrays.

A save goes to a temporary sibling directory that is renamed into place (:func:`ark.atomic.atomic_directory`),
so a reader never sees half a graph.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from ..atomic import atomic_directory
from .errors import GraphValidationError
from .store import KnowledgeGraph, SchemaTriple

FORMAT_VERSION = 1
ARRAYS = ("node_type_codes", "indptr", "neighbors", "codes")


def save_graph(graph: KnowledgeGraph, path: str | Path) -> Path:
    """Write ``graph`` to directory ``path`` atomically (replacing an existing graph there)."""
    path = Path(path)
    with atomic_directory(path) as tmp:
        meta = {
            "format_version": FORMAT_VERSION,
            "num_nodes": graph.num_nodes,
            "num_edges": graph.num_edges,
            "node_types": graph.node_types,
            "relation_types": graph.relation_types,
            "schema": [asdict(t) for t in graph.schema],
            "metadata": graph.metadata,
        }
        (tmp / "graph.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False))
        pq.write_table(graph.nodes, tmp / "nodes.parquet")
        arrays = {
            "node_type_codes": graph.node_type_codes,
            "indptr": graph.indptr,
            "neighbors": graph.neighbor_array,
            "codes": graph.code_array,
        }
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", np.asarray(array))
    graph.path = path
    return path


def load_graph(path: str | Path, mmap: bool = True) -> KnowledgeGraph:
    """Load a graph directory; arrays are memory-mapped unless ``mmap=False``."""
    path = Path(path)
    meta_file = path / "graph.json"
    if not meta_file.is_file():
        raise FileNotFoundError(f"{path} is not an ARK graph directory (no graph.json)")
    meta = json.loads(meta_file.read_text())
    if meta.get("format_version") != FORMAT_VERSION:
        raise GraphValidationError(
            f"{meta_file}: format version {meta.get('format_version')!r} is not supported (expected {FORMAT_VERSION})"
        )
    # np.asarray keeps the memory map but drops np.memmap's per-slice overhead (~8 us a lookup).
    arrays = {name: np.asarray(np.load(path / f"{name}.npy", mmap_mode="r" if mmap else None)) for name in ARRAYS}
    nodes = pq.read_table(path / "nodes.parquet", memory_map=mmap)
    return KnowledgeGraph(
        nodes,
        arrays["node_type_codes"],
        meta["node_types"],
        meta["relation_types"],
        arrays["indptr"],
        arrays["neighbors"],
        arrays["codes"],
        [SchemaTriple(**t) for t in meta["schema"]],
        meta["metadata"],
        path=path,
    )

