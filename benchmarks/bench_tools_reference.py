"""ARK's tool calls against an emulation of the ARK reference implementation's tools, interleaved, in CPU time.

    python benchmarks/bench_tools_reference.py [--graphs hpo,synthetic] [--nodes 1000000] [--queries 25]
                                               [--repeats 5] [--workdir DIR] [--json OUT]

ARK's side is the real tool handler, ``Toolbox.execute(name, json_arguments)``: argument parsing and validation, the
fielded BM25 search with its exact-name pass, snippets and the observation text. The reference side emulates the
reference implementation's tools (docs: /work/shared/reference/ark-reference-implementation.md):

- ``search_in_graph``: its JSON arguments parsed, the query cleaned (punctuation stripped, AND/OR/NOT quoted), a
  tantivy BM25 search over each node's ``name`` and ``summary`` (the node text) for 20 hits, each hit's stored fields
  read back and a ``Context:`` of 30 characters either side of the first query word in the summary;
- ``search_in_neighborhood``: one hop, both directions, over Python adjacency lists; with a query, neighbours whose
  name holds the whole query first, then those whose summary holds a non-stopword query word, by how many, the rest
  dropped; 20 shown with their matching segments.

Both sides run in this one process, call by call in alternating order, each call timed with
``time.process_time_ns`` (CPU time: the machine is shared, wall time measures the neighbours) and
``time.perf_counter_ns``. ARK asks for 20 results like the reference. The graphs: HPO (``open_graph("hpo")``) and a
synthetic graph of ``--nodes`` nodes (Zipf-distributed words, 2-4 word names, 15-45 word texts, ten hubs), saved
with its ARK and tantivy indexes under ``--workdir`` and reused by later runs. Before the timed calls the script
waits for the background load of ARK's compiled kernels (:mod:`ark.index.kernel_warm_up`), which in a run overlaps
the model's first request; the wait is printed. The first call of each side is in the figures (no warm-up call).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

REFERENCE_SIZE = 20  # hits per global search
CONTEXT_CHARS = 30  # characters either side of the matched word
REFERENCE_NEIGHBORS = 20
HUBS = 10
GC_PAUSES: list[float] = []  # collector pauses (ms) during the timed calls


# ----------------------------------------------------------------------------- the reference emulation
_PUNCTUATION = re.compile(r"[^\w\s]")
_OPERATORS = frozenset({"AND", "OR", "NOT"})
_STOPWORDS = frozenset({"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "in", "is", "it", "of",
                        "on", "or", "that", "the", "to", "was", "with"})


def clean_query(query: str) -> str:
    """The reference's query cleaning: punctuation stripped, the query language's operators quoted."""
    return " ".join(f'"{w}"' if w in _OPERATORS else w for w in _PUNCTUATION.sub(" ", query).split())


class ReferenceTools:
    """The reference implementation's two search tools over a tantivy index and Python lists (its data layout)."""

    def __init__(self, index_dir: Path, names: list[str], types: list[str], texts: list[str],
                 adjacency: dict[int, list[tuple[int, str, bool]]]) -> None:
        import tantivy

        self.index = tantivy.Index.open(str(index_dir))
        self.searcher = self.index.searcher()
        self.names, self.types, self.texts, self.adjacency = names, types, texts, adjacency

    def search_in_graph(self, arguments: str) -> str:
        args = json.loads(arguments)
        query = args["query"]
        cleaned = clean_query(query)
        if not cleaned:
            return f"No nodes found for query: {query!r}"
        hits = self.searcher.search(self.index.parse_query(cleaned, ["name", "summary"]), args.get("size", 5)).hits
        if not hits:
            return f"No nodes found for query: {query!r}"
        words = [w.strip('"').lower() for w in cleaned.split()]
        lines = [f"Found {len(hits)} nodes for query: {query!r}:", ""]
        for score, address in hits:
            doc = self.searcher.doc(address)
            node, summary = doc["node"][0], doc["summary"][0]
            lines.append(f"[{node}] {doc['name'][0]} ({self.types[node]}) - Score: {score:.3f}")
            lowered = summary.lower()
            for word in words:
                at = lowered.find(word)
                if at >= 0:
                    start, end = max(at - CONTEXT_CHARS, 0), min(at + len(word) + CONTEXT_CHARS, len(summary))
                    lines.append(f"    Context: ...{summary[start:at]}**{summary[at:at + len(word)]}**"
                                 f"{summary[at + len(word):end]}...")
                    break
        return "\n".join(lines)

    def search_in_neighborhood(self, arguments: str) -> str:
        args = json.loads(arguments)
        center, query = int(args["node_index"]), (args.get("query") or "").strip()
        relations: dict[int, tuple[list[str], list[str]]] = {}
        for neighbor, relation, outgoing in self.adjacency.get(center, []):
            out, into = relations.setdefault(neighbor, ([], []))
            (out if outgoing else into).append(relation)
        ranked: list[tuple[int, int, list[str]]] = []  # (order key, neighbor, segments)
        if query:
            lowered_query = query.lower()
            words = [w for w in re.findall(r"\w+", lowered_query) if w not in _STOPWORDS]
            for neighbor in relations:
                if lowered_query in self.names[neighbor].lower():
                    ranked.append((-10**9, neighbor, []))
                    continue
                summary = self.texts[neighbor].lower()
                found = [w for w in words if w in summary]
                if found:
                    segments = [summary[max(summary.find(w) - CONTEXT_CHARS, 0): summary.find(w) + len(w)
                                        + CONTEXT_CHARS] for w in found]
                    ranked.append((-len(found), neighbor, segments))
            ranked.sort(key=lambda item: item[0])
        else:
            ranked = [(0, neighbor, []) for neighbor in relations]
        label = f"[{center}] {self.names[center]} ({self.types[center]})"
        if not ranked:
            return f"Search around {label} found no results. Consider widening your search or changing the strategy."
        lines = [f"Search around {label} (query={query!r}) found {len(ranked)} results:", ""]
        for rank, (_, neighbor, segments) in enumerate(ranked[:REFERENCE_NEIGHBORS]):
            out, into = relations[neighbor]
            before = f"-{','.join(out)}-> " if out else ""
            after = f" <-{','.join(into)}-" if into else ""
            lines.append(f"{rank}. {before}[{neighbor}] {self.names[neighbor]} ({self.types[neighbor]}){after}")
            if segments:
                lines.append(f"{len(segments)} matches: " + " ... ".join(f"...{s}..." for s in segments))
        if len(ranked) > REFERENCE_NEIGHBORS:
            lines += ["", f"(Showing {REFERENCE_NEIGHBORS} of {len(ranked)} results. You may want to refine your "
                          "search.)"]
        return "\n".join(lines)


def build_tantivy(index_dir: Path, names: list[str], texts: list[str]) -> None:
    """The reference's index: name and summary, both stored and BM25-searchable, plus the node index."""
    import tantivy

    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("node", stored=True, indexed=True)
    builder.add_text_field("name", stored=True)
    builder.add_text_field("summary", stored=True)
    tmp = index_dir.with_suffix(".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    index = tantivy.Index(builder.build(), path=str(tmp))
    writer = index.writer(heap_size=256 * 2**20, num_threads=1)
    for node, (name, text) in enumerate(zip(names, texts, strict=True)):
        writer.add_document(tantivy.Document(node=node, name=name, summary=text))
    writer.commit()
    writer.wait_merging_threads()
    tmp.rename(index_dir)


def adjacency_lists(graph) -> dict[int, list[tuple[int, str, bool]]]:
    """``node -> [(neighbor, relation, outgoing)]`` for the hubs only (the reference holds every node's list; the
    neighbourhood calls here read the hubs')."""
    degrees = np.diff(graph.indptr)
    lists = {}
    for hub in np.argsort(-degrees)[:HUBS].tolist():
        view = graph.neighbors(hub)
        lists[hub] = [(int(n), graph.relation_types[int(r)], bool(o)) for n, r, o in
                      zip(view.nodes, view.relations, view.outgoing, strict=True)]
    return lists


# ----------------------------------------------------------------------------- graphs and queries
def synthetic_graph(path: Path, nodes: int, seed: int = 0):
    """A saved synthetic graph of ``nodes`` nodes (built once per size and seed), loaded memory-mapped."""
    from ark.graph import load_graph

    if not (path / "graph.json").exists():
        _write_synthetic(path, nodes, seed)
    return load_graph(path)


def _write_synthetic(path: Path, nodes: int, seed: int) -> None:
    import pyarrow as pa

    from ark.graph.build import build_graph_from_arrays
    from ark.graph.storage import save_graph

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_bm25 import _vocabulary

    rng = np.random.default_rng(seed)
    vocab = 60_000
    words = np.array(_vocabulary(vocab, rng), dtype=object)
    rng.shuffle(words)
    cdf = np.cumsum(1.0 / np.arange(1, vocab + 1))
    cdf /= cdf[-1]
    name_len = rng.integers(2, 5, nodes)
    text_len = rng.integers(15, 46, nodes)
    name_words = words[np.minimum(np.searchsorted(cdf, rng.random(int(name_len.sum()))), vocab - 1)]
    text_words = words[np.minimum(np.searchsorted(cdf, rng.random(int(text_len.sum()))), vocab - 1)]
    name_bounds, text_bounds = np.cumsum(name_len).tolist(), np.cumsum(text_len).tolist()
    names = [" ".join(part).capitalize() for part in np.split(name_words, name_bounds[:-1])]
    texts = [f"{name}. {' '.join(part)}." for name, part in zip(names, np.split(text_words, text_bounds[:-1]),
                                                                 strict=True)]
    type_codes = rng.integers(0, 3, nodes)
    table = pa.table({"id": [f"n{i}" for i in range(nodes)], "type": np.array(["disease", "gene", "phenotype"])[
        type_codes].tolist(), "name": names, "text": texts, "properties": [None] * nodes},
        schema=pa.schema([(c, pa.string()) for c in ("id", "type", "name", "text", "properties")]))
    src = rng.integers(0, nodes, 4 * nodes)
    hub_edges = rng.random(len(src)) < 0.02  # 2% of edges end at one of the hubs (hubs of ~8,000 neighbours)
    dst = np.where(hub_edges, rng.integers(0, HUBS, len(src)), rng.integers(0, nodes, len(src)))
    relations = rng.integers(0, 3, len(src))
    graph = build_graph_from_arrays(table, type_codes, ["disease", "gene", "phenotype"], src, dst, relations,
                                    ["associated_with", "causes", "is_a"], {"name": f"synthetic-{nodes}"})
    save_graph(graph, path)


def make_queries(graph, count: int, seed: int = 1) -> dict[str, list[str]]:
    """Per shape, ``count`` queries drawn from random nodes: names of 2-4 words, and 10-word text passages."""
    rng = np.random.default_rng(seed)
    names, passages = [], []
    for node in rng.permutation(graph.num_nodes).tolist():
        name_words = graph.name(node).split()
        if 2 <= len(name_words) <= 4 and len(names) < count:
            names.append(" ".join(name_words))
        text_words = graph.text(node).split()
        if len(text_words) >= 14 and len(passages) < count:
            start = int(rng.integers(0, len(text_words) - 10))
            passages.append(" ".join(text_words[start: start + 10]))
        if len(names) >= count and len(passages) >= count:
            break
    return {"names 2-4 words": names, "10-word passage": passages}


# ----------------------------------------------------------------------------- timing
def _gc_watch(phase: str, info: dict, started: list[int] = [0]) -> None:  # noqa: B006 - one slot, module-wide
    if phase == "start":
        started[0] = time.perf_counter_ns()
    else:
        GC_PAUSES.append((time.perf_counter_ns() - started[0]) / 1e6)


def interleaved(cases: list[tuple[str, str, str]], ark: Callable[[str, str], object],
                reference: Callable[[str, str], object], repeats: int) -> dict[str, dict[str, list[float]]]:
    """Per case label, CPU and wall ms of each side's calls: ``(label, tool, arguments)`` run ``repeats`` times, the
    two sides alternating which goes first."""
    times: dict[str, dict[str, list[float]]] = {}
    sides = (("ark", ark), ("reference", reference))
    for rep in range(repeats):
        for i, (label, tool, arguments) in enumerate(cases):
            slot = times.setdefault(label, {"ark_cpu": [], "reference_cpu": [], "ark_wall": [],
                                            "reference_wall": []})
            for side, call in (sides if (rep + i) % 2 == 0 else sides[::-1]):
                wall, cpu = time.perf_counter_ns(), time.process_time_ns()
                call(tool, arguments)
                slot[f"{side}_cpu"].append((time.process_time_ns() - cpu) / 1e6)
                slot[f"{side}_wall"].append((time.perf_counter_ns() - wall) / 1e6)
    return times


def _p99(values: list[float]) -> float:
    return float(np.percentile(values, 99))


def summarize(times: dict[str, dict[str, list[float]]]) -> list[dict]:
    rows = []
    for label, slot in times.items():
        row = {"case": label, "calls": len(slot["ark_cpu"])}
        for side in ("ark", "reference"):
            row[f"{side}_median_ms"] = statistics.median(slot[f"{side}_cpu"])
            row[f"{side}_p99_ms"] = _p99(slot[f"{side}_cpu"])
            row[f"{side}_max_wall_ms"] = max(slot[f"{side}_wall"])
        row["median_ratio"] = row["ark_median_ms"] / row["reference_median_ms"]
        row["p99_ratio"] = row["ark_p99_ms"] / row["reference_p99_ms"]
        rows.append(row)
    return rows


def bench_graph(label: str, graph, workdir: Path, args) -> list[dict]:
    """Both sides' tools over ``graph``: global searches of each query shape, neighbourhood calls on its hubs."""
    from ark.index import open_index
    from ark.methods.ark.tools import Toolbox

    names = [graph.name(i) for i in range(graph.num_nodes)]
    texts = [graph.text(i) for i in range(graph.num_nodes)]
    types = [graph.node_type(i) for i in range(graph.num_nodes)]
    tantivy_dir = workdir / f"tantivy-{label}-{graph.num_nodes}"
    if not tantivy_dir.exists():
        build_tantivy(tantivy_dir, names, texts)
    reference = ReferenceTools(tantivy_dir, names, types, texts, adjacency_lists(graph))
    index = open_index(graph, progress=False)
    box = Toolbox(graph, index)
    waited = time.perf_counter()
    for thread in threading.enumerate():  # the kernels' warm-up, which in a run overlaps the model's first request
        if thread.name == "ark-bm25-warm-up":
            thread.join()
    print(f"{label}: compiled kernels warmed up in the background, {time.perf_counter() - waited:.2f} s waited")

    def ark_call(tool: str, arguments: str) -> object:
        return box.execute(tool, arguments)

    def reference_call(tool: str, arguments: str) -> object:
        return getattr(reference, tool)(arguments)

    cases = []
    for shape, queries in make_queries(graph, args.queries).items():
        cases += [(f"{label} search_in_graph, {shape}", "search_in_graph",
                   json.dumps({"query": q, "size": REFERENCE_SIZE})) for q in queries]
    hubs = list(reference.adjacency)[:2]
    for hub in hubs:
        degree = len(reference.adjacency[hub])
        word = graph.text(hub).split()[-1].strip(".")
        cases += [(f"{label} search_in_neighborhood, hub of {degree:,}", "search_in_neighborhood",
                   json.dumps({"node_index": hub})),
                  (f"{label} search_in_neighborhood + query, hub of {degree:,}", "search_in_neighborhood",
                   json.dumps({"node_index": hub, "query": f"{word} {graph.name(hub).split()[0]}"}))]
    GC_PAUSES.clear()
    rows = summarize(interleaved(cases, ark_call, reference_call, args.repeats))
    for row in rows:
        row["gc_pauses_over_10ms"] = sum(p > 10 for p in GC_PAUSES)
    return rows


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def print_rows(rows: list[dict]) -> None:
    print("| case | calls | ARK median | ref median | ratio | ARK p99 | ref p99 | ratio | ARK max wall |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['case']} | {r['calls']} | {r['ark_median_ms']:.3f} | {r['reference_median_ms']:.3f} | "
              f"{r['median_ratio']:.2f}x | {r['ark_p99_ms']:.3f} | {r['reference_p99_ms']:.3f} | "
              f"{r['p99_ratio']:.2f}x | {r['ark_max_wall_ms']:.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default="hpo,synthetic", help="comma-separated: hpo, synthetic")
    parser.add_argument("--nodes", type=int, default=1_000_000, help="size of the synthetic graph")
    parser.add_argument("--queries", type=int, default=25, help="queries per shape")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/ark-bench-tools-reference"))
    parser.add_argument("--json", type=Path, default=None, help="write the rows here")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    gc.callbacks.append(_gc_watch)
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {_load()}, {os.cpu_count()} CPUs")
    rows = []
    for label in args.graphs.split(","):
        if label == "hpo":
            from ark.loaders import open_graph

            graph = open_graph("hpo")
        elif label == "synthetic":
            graph = synthetic_graph(args.workdir / f"synthetic-{args.nodes}", args.nodes)
            label = f"{args.nodes:,} nodes"
        else:
            raise SystemExit(f"unknown graph {label!r}; valid: hpo, synthetic")
        rows += bench_graph(label, graph, args.workdir, args)
        print(f"load after {label}: {_load()}")
    print_rows(rows)
    if args.json:
        args.json.write_text(json.dumps({"load": _load(), "rows": rows, "gc_pauses_ms": GC_PAUSES}, indent=1))


if __name__ == "__main__":
    main()
