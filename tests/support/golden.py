"""Golden outputs that guard refactors with no behaviour change (issue 27's typed records, toolbox and policy steps).

For seeded 100-question samples of the HPO quiz's test split and of phenopackets-dev, the rankings (node ids and
scores) of offline ``ark``, the scripted ``graphscout`` solver and ``bm25``, and digests of the run folders' results
and trajectory files with their timing fields removed; plus a tiny SeedER model's rankings on the connector fixture.
``tests/test_golden_outputs.py`` demands the same after every change; a change that means to move rankings rewrites
them on purpose:

    python -m tests.support.golden            # rewrite tests/golden/*.json (ARK_HOME with HPO built, or built here)
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
GOLDEN_DIR = REPO / "tests" / "golden"
# shared/ lies beside the checkout (as in CI); ARK_SHARED points elsewhere.
SHARED_DATA = Path(os.environ.get("ARK_SHARED", REPO.parent / "shared")) / "data"
PHENOPACKETS = SHARED_DATA / "phenopackets-dev.jsonl"
SAMPLE, SEED, DEPTH = 100, 0, 20
METHODS = ("ark", "bm25", "graphscout")
GOLDEN_BLAS_THREADS = 2  # numpy BLAS threads of the SeedER golden (see seeder_goldens)
# Keys whose values are clocks, not behaviour: removed before digesting a run's files.
TIMING_KEYS = frozenset({"wall_s", "elapsed_s", "llm_s", "ms", "latency_s", "duration_s", "started_at", "finished_at",
                         "created_at", "time", "timestamp"})


def quiz_sample(graph: Any) -> list[Any]:
    """A seeded sample of the ``hpo`` recipe's test split (the quiz is generated the same way every time)."""
    from ark.loaders.queries import Query
    from ark.quiz import generate_quiz
    from ark.quiz.recipes import recipe

    questions = [q for q in generate_quiz(graph, recipe("hpo")).questions if q.get("split") == "test"]
    picked = sorted(random.Random(SEED).sample(range(len(questions)), SAMPLE))
    return [Query(str(questions[i]["id"]), questions[i]["query"], list(questions[i]["answer_ids"]),
                  template=questions[i].get("template")) for i in picked]


def phenopackets_sample() -> list[Any]:
    """A seeded sample of the real patient cases in ``shared/data`` (absent outside the project's checkouts)."""
    from ark.loaders.queries import read_query_jsonl

    cases = read_query_jsonl(PHENOPACKETS)
    picked = sorted(random.Random(SEED).sample(range(len(cases)), SAMPLE))
    return [cases[i] for i in picked]


def strip_timing(value: Any) -> Any:
    """``value`` with every timing key removed, recursively."""
    if isinstance(value, dict):
        return {k: strip_timing(v) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [strip_timing(v) for v in value]
    return value


def file_digest(path: Path) -> str:
    """sha256 of a run file's records (trajectory files unpacked by their own reader) with timing keys removed."""
    from ark.runtime.trajectory_file import read_trajectory_file

    digest = hashlib.sha256()
    if path.is_file():
        for record in read_trajectory_file(path, repair=False):
            digest.update(json.dumps(strip_timing(record)).encode() + b"\n")
    return digest.hexdigest()


def method_outputs(graph: Any, method: str, queries: list[Any], run_dir: Path) -> dict[str, Any]:
    """Run ``method`` (no model) over ``queries`` into ``run_dir``; its rankings and its files' digests."""
    from ark.eval import run_eval
    from ark.methods.choice import MethodChoice

    run_eval(graph, MethodChoice.make(method), queries, run_dir, k=DEPTH, concurrency=1, progress=False)
    rankings = {}
    for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rankings[str(row["id"])] = [[node, score] for node, score in zip(row["ranked"], row["scores"],
                                                                        strict=True)][:DEPTH]
    return {"rankings": dict(sorted(rankings.items())),
            "results_digest": file_digest(run_dir / "results.jsonl"),
            "trajectories_digest": file_digest(run_dir / "trajectories.jsonl")}


def hpo_goldens(work: Path) -> dict[str, dict[str, Any]]:
    """Every method's outputs on both samples, keyed ``"<set>/<method>"``."""
    from ark.loaders import open_graph

    graph = open_graph("hpo")
    sets = {"quiz": quiz_sample(graph), "phenopackets": phenopackets_sample()}
    return {f"{name}/{method}": method_outputs(graph, method, queries, work / name / method)
            for name, queries in sets.items() for method in METHODS}


def seeder_goldens(work: Path) -> dict[str, Any]:
    """A tiny SeedER model trained on the connector fixture (MiniLM seeds), and its rankings of every question."""
    import torch
    from threadpoolctl import threadpool_limits  # installed with sentence-transformers (through scikit-learn)

    from ark.index.sorted_encoding import PRECISION_ENV

    torch.manual_seed(0)
    torch.set_num_threads(1)
    # The node embeddings in float32 whatever bf16 unit the CPU has: bf16 autocast (on by default on a CPU with
    # AVX-512 BF16 or AMX) rounds differently on each, and training amplifies it (a score moved by up to 1.6).
    saved = os.environ.get(PRECISION_ENV)
    os.environ[PRECISION_ENV] = "fp32"
    # numpy's BLAS thread count (OpenBLAS: the machine's cores unless OPENBLAS_NUM_THREADS says) changes the last
    # bits of the node features' PCA (components differ by ~7e-9 between 1 and 2 threads), which four epochs of
    # training amplify into other scores (with 1 thread every score moved, e.g. 0.73964 to 0.73223): pinned to
    # the 2 threads the golden was written with, whatever the machine.
    try:
        with threadpool_limits(limits=GOLDEN_BLAS_THREADS, user_api="blas"):
            return _seeder_rankings(work)
    finally:
        if saved is None:
            os.environ.pop(PRECISION_ENV, None)
        else:
            os.environ[PRECISION_ENV] = saved


def _seeder_rankings(work: Path) -> dict[str, Any]:
    from ark.methods.seeder.config import train_settings
    from ark.methods.seeder.method import SeederMethod
    from ark.methods.seeder.options import SeederOptions
    from ark.methods.seeder.pipeline import Question, train_seeder
    from tests.support.seeder_fixture import build_connector_graph

    tiny = {"search": {"seeds": 3, "hop_budgets": [20, 40], "budget": 60, "sizes": [2, 2], "caps": [20, 20]},
            "hidden": 16, "layers": 2, "batch_size": 8, "epochs": 4, "warmup_epochs": 1, "lr": 3e-3, "dropout": 0.0,
            "seed": 0}
    graph, rows = build_connector_graph()
    questions = [Question(r["id"], r["query"], tuple(graph.index_of(a) for a in r["answer_ids"])) for r in rows]
    out = work / "seeder"
    train_seeder(graph, questions, out, train_settings("prime", overrides=tiny), progress=False, log=lambda _: None)
    method = SeederMethod(graph, SeederOptions(model=str(out)))
    rankings = {}
    for row in rows:
        output = method.retrieve(row["query"], DEPTH)
        rankings[row["id"]] = [[graph.node_id(int(i)), round(float(s), 5)]
                               for i, s in zip(output.indices, output.scores, strict=True)]
    return {"rankings": rankings}


def main() -> int:
    import tempfile

    GOLDEN_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for key, value in hpo_goldens(Path(tmp)).items():
            (GOLDEN_DIR / f"{key.replace('/', '-')}.json").write_text(json.dumps(value, indent=0) + "\n")
            print(f"wrote {key}")
        (GOLDEN_DIR / "seeder-connector.json").write_text(json.dumps(seeder_goldens(Path(tmp)), indent=0) + "\n")
        print("wrote seeder-connector")
    return 0


if __name__ == "__main__":
    sys.exit(main())
