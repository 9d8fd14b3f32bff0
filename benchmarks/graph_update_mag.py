"""Graphs that change (issue 34) at STaRK-MAG size: 100,000 changes to the synthetic MAG graph as one update.

    python benchmarks/graph_update.py --graph mag [--scale 1.0] [--changes 100000] [--work DIR] [--seed 0]

The graph is ``benchmarks/synthetic_mag.py``'s (1.87M nodes, ~20M edges at scale 1), generated and imported once
into ``--work`` (``mag-<scale>-seed<seed>/graph``) with its BM25 index and base segment, and reused by later runs;
each run works on a hard-linked copy (a graph's files are never rewritten in place: an update writes a delta
folder and swaps the manifest). ``--changes`` is split into a realistic mix: 40% nodes whose text changed, 10% new
papers (a title, an abstract, authors, fields and citations among the new edges), 40% new edges, 5% deleted nodes
(their edges go with them) and 5% deleted edges. Printed side by side, wall and CPU seconds: the update of the
graph (by a process that opens the current version first, and by one holding it open) and of the BM25 (its delta
segment), against the target of 30 s; opening versions; search latency with 0, 1 and 10 deltas; compaction.
``--update-only --cypher``: the update, then the versioned Cypher database's cost (``graph_update_cypher.py``):
version 0 exported whole, version 1's made from it by copying and applying the update, and version 1 exported whole.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ark.graph import KnowledgeGraph, load_graph
from ark.graph.versioning import compact_graph, update_graph
from ark.graph.versioning.delta import EDGE_SCHEMA, GraphDelta, node_rows
from ark.index import open_index

TARGET_S = 30.0
# Shares of the changes: changed texts, new papers, new edges, deleted nodes, deleted edges.
MIX = {"changed": 0.40, "new": 0.10, "edges": 0.40, "deleted": 0.05, "unlinked": 0.05}


def mag_graph(work: Path, scale: float, seed: int) -> Path:
    """The synthetic MAG graph at ``scale`` under ``work``: generated and imported on the first run, then reused."""
    folder = work / f"mag-{scale:g}-seed{seed}"
    graph = folder / "graph"
    if not (graph / "graph.json").exists():
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from synthetic_mag import generate

        from ark.loaders.tabular import import_tabular

        if not (folder / "src" / "graph.json").exists():
            generate(folder / "src", scale, seed, log=print)
        started = time.perf_counter()
        import_tabular(folder / "src", graph)
        print(f"imported in {time.perf_counter() - started:.1f} s", flush=True)
    return graph


def linked_copy(source: Path, target: Path) -> None:
    """``source`` copied as hard links (its files are immutable; updates add files and swap the manifest)."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(source, target, copy_function=os.link)


def _typed(graph: KnowledgeGraph) -> dict[str, np.ndarray]:
    codes = np.asarray(graph.node_type_codes)
    return {name: np.flatnonzero(codes == code) for code, name in enumerate(graph.node_types)}


def make_mag_delta(graph: KnowledgeGraph, rng: random.Random, changes: int, tag: str) -> GraphDelta:
    """``changes`` changes in the mix of :data:`MIX` (node ids of new papers carry ``tag`` to stay unique)."""
    counts = {key: int(changes * share) for key, share in MIX.items()}
    counts["edges"] += changes - sum(counts.values())
    n, typed = graph.num_nodes, _typed(graph)
    picked = rng.sample(range(n), counts["changed"] + counts["deleted"])
    changed, deleted = sorted(picked[:counts["changed"]]), picked[counts["changed"]:]
    gone = set(deleted)
    rows = node_rows(graph)
    upserts = rows.take(pa.array(changed)).to_pylist()
    for row in upserts:
        row["text"] = row["text"] + "\nUpdate: " + graph.name(rng.randrange(n))
    papers, authors, fields = (typed[t].tolist() for t in ("paper", "author", "field_of_study"))
    templates = rows.take(pa.array(rng.sample(papers, counts["new"]))).to_pylist()
    new_ids = [f"P{tag}-{k}" for k in range(counts["new"])]
    for node_id, row in zip(new_ids, templates, strict=True):
        words = row["name"].split()
        rng.shuffle(words)
        row.update(id=node_id, name=" ".join(words), text=" ".join(words) + "\n" + row["text"].partition("\n")[2])
    upserts += templates

    def alive(pool: list[int]) -> int:
        while (i := rng.choice(pool)) in gone:
            pass
        return i

    edges: set[tuple[str, str, str]] = set()
    for node_id in new_ids:  # each new paper: an author and a field
        edges.add((graph.node_id(alive(authors)), node_id, "writes"))
        edges.add((node_id, graph.node_id(alive(fields)), "has_topic"))
    kinds = (("writes", authors, papers), ("cites", papers, papers), ("has_topic", papers, fields))
    while len(edges) < counts["edges"]:
        relation, sources, targets = rng.choice(kinds)
        source = rng.choice(new_ids) if new_ids and rng.random() < 0.2 else graph.node_id(alive(sources))
        edges.add((source, graph.node_id(alive(targets)), relation))
    src, dst, rel = graph.edges()
    removed: set[tuple[str, str, str]] = set()
    while len(removed) < counts["unlinked"]:
        e = rng.randrange(len(src))
        if int(src[e]) not in gone and int(dst[e]) not in gone:
            removed.add((graph.node_id(int(src[e])), graph.node_id(int(dst[e])), graph.relation_types[int(rel[e])]))
    return GraphDelta(pa.Table.from_pylist(upserts, schema=rows.schema), _edge_table(edges - removed),
                      _edge_table(removed), pa.array([graph.node_id(i) for i in deleted], pa.string()))


def _edge_table(edges: set[tuple[str, str, str]]) -> pa.Table:
    ordered = sorted(edges)
    return pa.table({c: [e[k] for e in ordered] for k, c in enumerate(("source", "target", "relation"))},
                    schema=EDGE_SCHEMA)


def clocked(function, *args, **kwargs):
    """(value, "W s (CPU C s)", wall seconds, CPU seconds) of one call (the load inflates wall, not CPU, time)."""
    started, cpu = time.perf_counter(), time.process_time()
    value = function(*args, **kwargs)
    took, cpu = time.perf_counter() - started, time.process_time() - cpu
    return value, f"{took:.2f} s (CPU {cpu:.2f} s)", took, cpu


def _latency(search_latency, graph: KnowledgeGraph, queries: list[str], centre_ids: list[str]):
    """``search_latency`` over the queries whose centre node still exists in ``graph``."""
    pairs = [(q, graph.index_of(x)) for q, x in zip(queries, centre_ids, strict=True) if graph.has_node(x)]
    return search_latency(graph, [q for q, _ in pairs], [c for _, c in pairs])


def delta_segment_only(graph: KnowledgeGraph, delta: GraphDelta) -> None:
    """Build the ``bm25`` (fielded) delta segment of ``delta``'s changed documents over the updated ``graph``, as
    :func:`ark.index.versioned.open_segmented` builds it, without opening the base's segment (``--update-only``)."""
    import ark.index.kinds  # noqa: F401 - registers the built-in kinds
    from ark.index.graph_index import INDEX_KINDS
    from ark.index.segments import build_segment
    from ark.index.tokenizer import Tokenizer
    from ark.index.versioned import _subset_documents

    spec = INDEX_KINDS["bm25"]
    params = spec.graph_defaults(graph, {}) if spec.graph_defaults is not None else {}
    settings = spec.settings(params, None)
    ids = delta.nodes.column("id").to_pylist()
    docs = _subset_documents(graph, np.asarray([graph.index_of(x) for x in ids]), "bm25", spec, settings, None)
    build_segment(ids, docs, Tokenizer.from_config(settings["tokenizer"]), settings.get("scoring") == "fielded",
                  bool(settings.get("exact")))


def _draw_and_update(args, work: Path, folder: Path, base: KnowledgeGraph, rng: random.Random,
                     rows: list[tuple[str, str]]) -> tuple[Any, KnowledgeGraph, float, float]:
    """Draw the update of ``--changes`` and apply it twice: to a copy opened first (as ``ark graph update`` does)
    and to ``folder`` with ``base`` held open (as a server does); rows for both; the delta, the updated graph and
    the held-open update's wall and CPU seconds."""
    delta, _, took, _ = clocked(make_mag_delta, base, rng, args.changes, "u1")
    counts = ", ".join(f"{k} {v:,}" for k, v in delta.counts().items())
    rows.append((f"the update: {sum(delta.counts().values()):,} changes", f"{counts} (drawn in {took:.1f} s)"))
    cold = work / "cold"
    linked_copy(folder, cold)
    _, note, _, _ = clocked(update_graph, cold, delta)
    rows.append(("update: graph (opened first, as `ark graph update` does)", note))
    shutil.rmtree(cold)
    updated, note, graph_s, graph_cpu = clocked(update_graph, folder, delta, current=base)
    rows.append(("update: graph (held open, as a server does)", note))
    return delta, updated, graph_s, graph_cpu


def run_update_only(args) -> list[tuple[str, str]]:
    """``--update-only``: the one update of ``--changes`` (graph held open, and opened first) and its BM25 delta
    segment, then opening version 1; for a machine without time for the base segment and the rest."""
    work = Path(args.work)
    pristine = mag_graph(work, args.scale, args.seed)
    rows = [("load average (1, 5, 15 min) at the start", " ".join(f"{x:.2f}" for x in os.getloadavg()))]
    folder = work / "run"
    linked_copy(pristine, folder)
    rng = random.Random(args.seed)
    base = load_graph(folder)
    rows.insert(0, ("graph", f"{base!r}, scale {args.scale:g}"))
    base.has_node("")  # a server holding the graph has its id dictionary
    delta, updated, graph_s, graph_cpu = _draw_and_update(args, work, folder, base, rng, rows)
    _, note, bm25_s, bm25_cpu = clocked(delta_segment_only, updated, delta)
    rows.append(("update: BM25 delta segment (bm25) built, the base's segment not opened", note))
    total, cpu = graph_s + bm25_s, graph_cpu + bm25_cpu
    rows.append((f"update: graph + BM25 segment (target <= {TARGET_S:.0f} s)",
                 f"{total:.2f} s (CPU {cpu:.2f} s) {'met' if total <= TARGET_S else 'MISSED'}"))
    _, note, _, _ = clocked(load_graph, folder)
    rows.append(("open version 1 (base + 1 delta merged in memory)", note))
    if getattr(args, "cypher", False):
        from graph_update_cypher import cypher_rows

        rows += cypher_rows(folder, updated, lambda f, *a: clocked(f, *a)[::2], compare="counts")
    rows.append(("load average (1, 5, 15 min) at the end", " ".join(f"{x:.2f}" for x in os.getloadavg())))
    return rows


def run_mag(args, search_latency) -> list[tuple[str, str]]:
    """The figures of one run on the synthetic MAG graph (see the module doc)."""
    if getattr(args, "update_only", False):
        return run_update_only(args)
    work = Path(args.work)
    pristine = mag_graph(work, args.scale, args.seed)
    rows = [("load average (1, 5, 15 min) at the start", " ".join(f"{x:.2f}" for x in os.getloadavg()))]
    _, note, _, _ = clocked(open_index, load_graph(pristine), "bm25", progress=False)
    rows.append(("BM25 of the base (bm25, fielded; cached in --work after the first run)", note))
    folder = work / "run"
    linked_copy(pristine, folder)
    rng = random.Random(args.seed)
    base = load_graph(folder)
    rows.insert(0, ("graph", f"{base!r}, scale {args.scale:g}"))
    queries = [base.name(rng.randrange(base.num_nodes)) for _ in range(args.queries)]
    centre_ids = [base.node_id(rng.randrange(base.num_nodes)) for _ in range(args.queries)]
    zero = _latency(search_latency, base, queries, centre_ids)
    delta, updated, graph_s, graph_cpu = _draw_and_update(args, work, folder, base, rng, rows)
    _, note, _, _ = clocked(open_index, load_graph(folder), "bm25", progress=False)
    rows.append(("base segment of bm25 (once per base, cached in --work; includes the delta's)", note))
    for segment in (folder / "index").glob("segment-*"):
        if not (pristine / "index" / segment.name).exists():
            shutil.copytree(segment, pristine / "index" / segment.name, copy_function=os.link)
    shutil.rmtree(folder / "deltas" / "000001" / "index")
    _, note, bm25_s, bm25_cpu = clocked(open_index, updated, "bm25", progress=False)
    rows.append(("update: BM25 delta segment (bm25)", note))
    total, cpu = graph_s + bm25_s, graph_cpu + bm25_cpu
    rows.append((f"update: graph + BM25 (target <= {TARGET_S:.0f} s)",
                 f"{total:.2f} s (CPU {cpu:.2f} s) {'met' if total <= TARGET_S else 'MISSED'}"))
    rows += _versions_and_compaction(args, search_latency, folder, updated, rng, queries, centre_ids, zero)
    rows.append(("load average (1, 5, 15 min) at the end", " ".join(f"{x:.2f}" for x in os.getloadavg())))
    return rows


def _versions_and_compaction(args, search_latency, folder: Path, updated: KnowledgeGraph, rng: random.Random,
                             queries: list[str], centre_ids: list[str], zero) -> list[tuple[str, str]]:
    rows = []
    _, note, _, _ = clocked(load_graph, folder)
    rows.append(("open version 1 (base + 1 delta merged in memory)", note))
    one = _latency(search_latency, updated, queries, centre_ids)
    current = updated
    started = time.perf_counter()
    for k in range(2, 11):  # nine more updates of a tenth the size
        current = update_graph(folder, make_mag_delta(current, rng, args.changes // 10, f"u{k}"), current=current)
        open_index(current, "bm25", progress=False)  # as ark graph update does
    rows.append((f"9 more updates of {args.changes // 10:,} changes, graph + BM25 each (mean)",
                 f"{(time.perf_counter() - started) / 9:.2f} s (drawing the changes included)"))
    graph10, note, _, _ = clocked(load_graph, folder)
    rows.append(("open version 10 (base + 10 deltas merged in memory)", note))
    _, note, _, _ = clocked(open_index, graph10, "bm25", progress=False)
    rows.append(("open the BM25 of version 10 (11 segments, cached)", note))
    ten = _latency(search_latency, graph10, queries, centre_ids)
    for label, (search, score) in (("0 deltas", zero), ("1 delta", one), ("10 deltas", ten)):
        rows.append((f"search top-10 / score neighbours, {label} (median ms)", f"{search:.2f} / {score:.2f}"))
    _, note, _, _ = clocked(compact_graph, folder)
    rows.append(("compaction of version 10 into a new base", note))
    return rows
