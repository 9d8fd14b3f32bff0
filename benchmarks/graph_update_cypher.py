"""Parts of ``benchmarks/graph_update.py`` beyond graph + BM25: the versioned Cypher database (``--cypher``) and the
dense index with the real MiniLM embedder (``--minilm``), each measured on the update that script makes.

- ``--cypher``: the database of version 0 exported whole, version 1's made from it (copied, the update applied:
  :mod:`ark.graphdb.versioned`) against a full export of version 1: time, peak resident set (Linux) and disk, and
  whether the two hold the same nodes (id, name, text, idx) and edges (on the MAG graph, ``--graph mag --cypher``:
  the same counts).
- ``--minilm``: the graph's ``dense`` caches (all-MiniLM-L6-v2, the packaged model) copied beside the copy of the
  graph, then version 1's dense index opened: how many texts were embedded (the changed nodes only) and how long.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any


def folder_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def _dump(db_file: Path) -> tuple[Any, Any]:
    """(nodes, edges) of a ladybug database as sorted Arrow tables."""
    import ladybug

    database = ladybug.Database(str(db_file), read_only=True)
    connection = ladybug.Connection(database)
    try:
        nodes = connection.execute("MATCH (n) RETURN label(n) AS t, n.id AS id, n.name AS name, n.text AS text, "
                                   "n.idx AS idx").get_as_arrow()
        edges = connection.execute("MATCH (a)-[r]->(b) RETURN label(r) AS r, a.id AS a, b.id AS b").get_as_arrow()
    finally:
        connection.close()
        database.close()
    return nodes.sort_by([("id", "ascending")]), edges.sort_by([("a", "ascending"), ("b", "ascending"),
                                                               ("r", "ascending")])


COMPARED = {"dump": "nodes with idx, edges", "counts": "node count, idx sum, edge count"}


def reset_peak_rss() -> float:
    """Reset this process's peak resident set to its current one (Linux ``/proc/self/clear_refs``, 5), so that the
    next step's peak is read alone; the current resident set, MB."""
    Path("/proc/self/clear_refs").write_text("5")
    return _status_mb("VmRSS")


def peak_rss_mb() -> float:
    """This process's peak resident set since the last :func:`reset_peak_rss`, MB (the graph's memory-mapped pages
    it touched included)."""
    return _status_mb("VmHWM")


def _status_mb(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _counts(db_file: Path) -> tuple[Any, ...]:
    """(nodes, sum of their idx, edges) of a ladybug database: the check on a graph too large to dump."""
    import ladybug

    database = ladybug.Database(str(db_file), read_only=True)
    connection = ladybug.Connection(database)
    try:
        nodes = connection.execute("MATCH (n) RETURN count(n), sum(n.idx)").get_next()
        edges = connection.execute("MATCH ()-[r]->() RETURN count(r)").get_next()
    finally:
        connection.close()
        database.close()
    return (*nodes, *edges)


def cypher_rows(folder: Path, updated: Any, timed: Any, compare: str = "dump") -> list[tuple[str, str]]:
    """Version 0's database exported, version 1's made from it, and a full export of version 1 beside it: wall
    time, peak resident set and disk of each; whether the copy + update equals the export (``compare``: "dump",
    every node with its idx and every edge; "counts", nodes, their idx sum and edges, for a large graph)."""
    import json

    from ark.graph.versioning import open_version
    from ark.graphdb.export import ladybug_database, write_database

    def measured(function: Any, *args: Any) -> tuple[Any, str]:
        before, cpu = reset_peak_rss(), time.process_time()  # CPU of every thread (the engine's too)
        value, took = timed(function, *args)
        return value, (f"{took:.2f} s (CPU {time.process_time() - cpu:.2f} s), peak RSS {peak_rss_mb():,.0f} MB "
                       f"({before:,.0f} MB before)")

    first, export_note = measured(ladybug_database, open_version(folder, 0))
    second, follow_note = measured(ladybug_database, updated)
    made = json.loads((second.path.parent / "manifest.json").read_text())["made"]
    full = folder.parent / "full-export"
    shutil.rmtree(full, ignore_errors=True)
    full.mkdir()
    _, full_note = measured(write_database, updated, full / "graph.lbug")
    check = _dump if compare == "dump" else _counts
    same = check(second.path) == check(full / "graph.lbug")
    rows = [("Cypher: version 0 exported whole (time, peak RSS, disk)",
             f"{export_note}, {folder_mb(first.path.parent):,.1f} MB"),
            (f"Cypher: version 1 from version 0's database ({made}: copied, update applied)",
             f"{follow_note}, {folder_mb(second.path.parent):,.1f} MB"),
            ("Cypher: version 1 exported whole instead (for comparison)",
             f"{full_note}, {folder_mb(full):,.1f} MB"),
            (f"Cypher: the copy + update equals the full export ({COMPARED[compare]})", "yes" if same else "NO")]
    shutil.rmtree(full)
    return rows


def copy_dense_caches(source: Path, folder: Path) -> int:
    """Copy the ``dense-*`` caches of the graph at ``source`` beside its copy at ``folder``; how many."""
    caches = sorted(p for p in (source / "index").glob("dense-*") if p.is_dir())
    for cache in caches:
        shutil.copytree(cache, folder / "index" / cache.name)
    return len(caches)


def minilm_rows(base: Any, updated: Any, n_nodes: int) -> list[tuple[str, str]]:
    """Open the base's dense index (cached), then version 1's: the texts embedded and the time."""
    import ark.index.dense as dense
    from ark.index import open_index

    counted = {"texts": 0}
    embed = dense.embed_texts

    def counting(texts: Any, *args: Any, **kwargs: Any) -> Any:
        counted["texts"] += len(texts)
        return embed(texts, *args, **kwargs)

    dense.embed_texts = counting
    try:
        started = time.perf_counter()
        open_index(base, "dense", progress=False)
        base_s, base_texts = time.perf_counter() - started, counted["texts"]
        started, cpu = time.perf_counter(), time.process_time()
        index = open_index(updated, "dense", progress=False)
        took, cpu_s = time.perf_counter() - started, time.process_time() - cpu
    finally:
        dense.embed_texts = embed
    texts = counted["texts"] - base_texts
    return [("dense (all-MiniLM-L6-v2): the base's index opened (cached)", f"{base_s:.2f} s, {base_texts:,} texts "
             "embedded"),
            (f"dense: version 1's index, {n_nodes:,} nodes changed", f"{texts:,} texts embedded "
             f"({'only the changed nodes' if texts == n_nodes else 'NOT only the changed nodes'}), {took:.2f} s "
             f"(CPU {cpu_s:.2f} s), {getattr(index, 'index', index).embeddings.shape[0]:,} rows")]
