"""SeedER's costs on a graph (default: the built-in HPO graph): embedding, feature cache, inference latency, size.

    python benchmarks/bench_seeder.py [--graph hpo] [--queries QUERY_FILE] [--model MODEL_DIR] [--sample 2000]
                                      [--full-embedding] [--repeats 100] [--threads 1]

Prints:
- the one-off node-embedding time: measured on ``--sample`` node documents and extrapolated to the whole graph
  (labelled as such), or measured in full with ``--full-embedding`` (embeds every node again into a temporary
  copy of the graph's folder, leaving the real cache alone);
- the input-feature cache (PCA 256) on disk, and the time to fit it;
- per-question inference latency of SeedER, query embedding included (median and p90 over ``--repeats``
  questions), split into query embedding, seeds + K-HOP-WITH-FILTERING subgraph, and the policy; with a trained
  ``--model`` or, by default, a randomly initialised network of the ``hpo`` preset's shape (latency does not
  depend on the weights);
- the model directory's size.

BLAS and torch threads are set before numpy loads (``--threads``, default 1): on small per-query work, extra
threads on shared cores cost more than they give.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def _set_threads(argv: list[str]) -> int:
    threads = 1
    if "--threads" in argv:
        threads = int(argv[argv.index("--threads") + 1])
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, str(threads))
    return threads


THREADS = _set_threads(sys.argv)

import numpy as np  # noqa: E402


def folder_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", default="hpo")
    parser.add_argument("--queries", help="JSONL query file for latency (default: a few hundred node names)")
    parser.add_argument("--model", help="trained model directory (default: a random network, hpo preset)")
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--full-embedding", action="store_true")
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    import torch

    torch.set_num_threads(args.threads)
    from ark.index.embedders import node_embeddings, open_embedder
    from ark.index.graph_index import node_documents
    from ark.loaders import open_graph
    from ark.methods.seeder.config import train_settings
    from ark.methods.seeder.embeddings import open_graph_embeddings, open_node_features
    from ark.methods.seeder.method import SeederMethod
    from ark.methods.seeder.model import SeederNetwork, count_parameters
    from ark.methods.seeder.options import SeederOptions
    from ark.methods.seeder.store import directory_size, save_model
    from ark.methods.seeder.trainer import architecture_for

    graph = open_graph(args.graph)
    print(f"graph {graph!r}; threads {args.threads}; device {args.device}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    embedder = open_embedder()
    docs = list(node_documents(graph))

    # 1. one-off node embedding
    if args.full_embedding:
        with tempfile.TemporaryDirectory() as tmp:
            from ark.graph import load_graph, save_graph

            save_graph(graph, Path(tmp) / "copy")
            copy = load_graph(Path(tmp) / "copy")
            start = time.perf_counter()
            node_embeddings(copy, embedder, progress=True)
            seconds = time.perf_counter() - start
        print(f"node embedding, measured in full: {len(docs):,} nodes in {seconds:.0f} s "
              f"({len(docs) / seconds:.1f} nodes/s)")
    else:
        rng = np.random.default_rng(0)
        sample = [docs[i] for i in rng.choice(len(docs), size=min(args.sample, len(docs)), replace=False)]
        embedder.embed(sample[:8])  # load the model first
        start = time.perf_counter()
        embedder.embed(sample)
        seconds = time.perf_counter() - start
        rate = len(sample) / seconds
        print(f"node embedding, EXTRAPOLATED from {len(sample):,} random nodes: {rate:.1f} nodes/s, so about "
              f"{len(docs) / rate / 60:.1f} min for all {len(docs):,} nodes (one-off, cached with the graph)")

    # 2. feature cache
    embeddings = open_graph_embeddings(graph, embedder, progress=True)
    start = time.perf_counter()
    features = open_node_features(graph, embeddings, 256)
    fit_seconds = time.perf_counter() - start
    cache = [p for p in (Path(graph.path) / "index").glob("seeder-features-*")] if graph.path else []
    size = sum(folder_bytes(p) for p in cache)
    print(f"input features: {features.nodes.shape}, PCA 256 fit/load {fit_seconds:.2f} s, cache on disk "
          f"{size / 1e6:.1f} MB ({', '.join(p.name for p in cache)})")

    # 3. a model directory
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model
        if model_dir is None:
            settings = train_settings("hpo")
            torch.manual_seed(0)
            arch = architecture_for(settings, 256, 256, 2 * len(graph.relation_types), len(graph.node_types))
            network = SeederNetwork(arch)
            model_dir = Path(tmp) / "random-model"
            save_model(model_dir, network, settings, graph, {"spec": embedder.spec, "identity": embedder.identity,
                                                             "dimension": embeddings.dimension},
                       features.pca, {"note": "randomly initialised, for latency and size only"})
            print(f"model: RANDOMLY INITIALISED network of the hpo preset, {count_parameters(network):,} "
                  "parameters")
        method = SeederMethod(graph, SeederOptions(model=str(model_dir), device=args.device,
                                                   torch_threads=args.threads))
        print(f"model directory size: {directory_size(model_dir) / 1e6:.2f} MB")

        # 4. latency
        if args.queries:
            import json

            texts = [json.loads(line)["query"] for line in Path(args.queries).read_text().splitlines() if line]
        else:
            rng = np.random.default_rng(1)
            texts = [f"Which diseases are associated with {graph.name(int(i))}?"
                     for i in rng.choice(graph.num_nodes, size=args.repeats, replace=False)]
        texts = texts[: args.repeats]
        method.retrieve(texts[0], 20)  # warm up (model load, first kernels)
        method.embeddings._memo.clear()
        total, cpu, embed, subgraph, policy = [], [], [], [], []
        from ark.methods.seeder.rollout import collate, rankings, run_policy

        s = method.settings.search
        for text in texts:
            method.embeddings._memo.clear()
            start, start_cpu = time.perf_counter(), time.process_time()
            method.retrieve(text, 20)
            total.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
            # the same three stages again, timed one by one
            method.embeddings._memo.clear()
            t0 = time.perf_counter()
            vector = method.embeddings.query(text)
            t1 = time.perf_counter()
            sub, _ = method.builder.build(vector)
            t2 = time.perf_counter()
            with torch.no_grad():
                batch = collate([sub], method.node_features, method.node_types, 1, args.device)
                run = run_policy(method.network, batch, s.sizes, s.caps, sample=False)
                rankings(batch, run, [sub])
            t3 = time.perf_counter()
            embed.append(t1 - t0), subgraph.append(t2 - t1), policy.append(t3 - t2)
        ms = lambda xs, q=50: 1000 * float(np.percentile(xs, q))  # noqa: E731
        print(f"inference over {len(texts)} questions (query embedding included): median {ms(total):.1f} ms, "
              f"p90 {ms(total, 90):.1f} ms wall; median {ms(cpu):.1f} ms of CPU time (what an idle core would take; "
              f"load average now {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
        print(f"  stages (median): query embedding {ms(embed):.1f} ms, seeds + K-HOP-WITH-FILTERING subgraph "
              f"{ms(subgraph):.1f} ms, policy (T={s.horizon} steps + scoring) {ms(policy):.1f} ms")


if __name__ == "__main__":
    main()
