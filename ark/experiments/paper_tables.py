"""The retrieval tables of the ARK and SeedER papers as data: each row's reported numbers, the registered method
(and options) that reproduces it here, or why it cannot run here. Read by :mod:`.retrieval_table`.

The numbers are copied from the papers (seed texts 000 and 002) and are never measured here. ARK's Table 1 is in
percent on the STaRK synthetic test sets (Hit@1, R@20, MRR per graph, then the average); SeedER's Tables 1 and 3
are fractions (Hit@1, Hit@5, MRR, R@20 per graph) on the same test sets.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FINE_TUNING = "not run: needs LLM fine-tuning (LoRA on LLaMA3-8B)"


@dataclass(frozen=True)
class PaperRow:
    """One row: the paper's label and backbone, its numbers per benchmark (in the table's metric order), and the
    method that runs it here (``method`` None with ``not_run`` saying why)."""

    label: str
    group: str
    backbone: str
    reported: Mapping[str, tuple[float, ...]]
    method: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    not_run: str | None = None
    note: str = ""


@dataclass(frozen=True)
class PaperTable:
    """A paper's table: its metrics (our metric names and the paper's headers), benchmarks, scale and rows."""

    paper: str
    number: int
    title: str
    split: str
    metrics: tuple[str, ...]
    headers: tuple[str, ...]
    benchmarks: tuple[str, ...]
    scale: float  # 100 for percentages
    rows: tuple[PaperRow, ...]


def _split(values: tuple[float, ...], benchmarks: tuple[str, ...]) -> dict[str, tuple[float, ...]]:
    size = len(values) // len(benchmarks)
    return {name: values[i * size:(i + 1) * size] for i, name in enumerate(benchmarks)}


ARK_BENCHMARKS = ("AMAZON", "MAG", "PRIME", "Average")


def _ark(label: str, group: str, backbone: str, values: tuple[float, ...], **kwargs: Any) -> PaperRow:
    return PaperRow(label, group, backbone, _split(values, ARK_BENCHMARKS), **kwargs)


ARK_TABLE_1 = PaperTable(
    "ark", 1, "ARK Table 1: retrieval on STaRK (training-free and requires-training)", "STaRK synthetic test sets",
    ("hit@1", "recall@20", "mrr"), ("Hit@1", "R@20", "MRR"), ARK_BENCHMARKS, 100.0, (
        _ark("BM25", "Training-free, retrieval-based", "—", (44.94, 53.77, 55.30, 25.85, 45.69, 34.91, 12.75, 31.25,
             19.84, 27.85, 43.57, 36.68), method="bm25"),
        _ark("ada-002", "Training-free, retrieval-based", "OpenAI text-embedding-ada-002",
             (39.16, 53.29, 50.35, 29.08, 48.36, 38.62, 12.63, 36.00, 21.41, 26.96, 45.88, 36.79),
             not_run="not run: needs OpenAI's ada-002 embeddings (`--method dense --set "
                     "embedder=openai:text-embedding-ada-002` with an endpoint)"),
        _ark("GritLM-7B", "Training-free, retrieval-based", "GritLM-7B embeddings",
             (42.08, 56.52, 53.46, 37.90, 46.40, 47.25, 15.57, 39.09, 24.11, 31.85, 47.34, 41.61),
             not_run="not run: needs GritLM-7B embeddings (a 7B encoder; `--set embedder=openai:MODEL` with a "
                     "server for it)"),
        _ark("KAR", "Training-free, retrieval-based", "as in its paper (Xia et al. 2025b)",
             (54.20, 57.24, 61.29, 50.47, 60.28, 57.51, 30.35, 50.81, 39.22, 45.01, 56.11, 52.67), method="kar"),
        _ark("Think-on-Graph + GPT-4o", "Training-free, agent-based", "GPT-4o (numbers from Yu et al. 2025)",
             (20.67, 25.81, 30.90, 23.33, 48.03, 36.38, 16.67, 54.35, 27.02, 20.22, 42.73, 31.43), method="tog"),
        _ark("Think-on-Graph + LLaMA3", "Training-free, agent-based", "LLaMA3 (numbers from Yu et al. 2025)",
             (4.21, 2.61, 5.25, 12.00, 6.77, 12.67, 21.92, 33.84, 26.61, 12.71, 14.41, 14.84), method="tog"),
        _ark("ARK", "Training-free, agent-based", "GPT-4.1",
             (55.82, 60.61, 64.77, 73.40, 84.47, 79.87, 48.20, 69.46, 57.68, 59.14, 71.51, 67.44), method="ark"),
        _ark("mFAR", "Requires training, retrieval-based", "as in its paper (Li et al. 2025a)",
             (53.0, 66.3, 64.3, 55.9, 74.1, 64.3, 40.0, 72.6, 52.0, 49.63, 71.00, 60.20), method="mfar"),
        _ark("MoR", "Requires training, retrieval-based", "as in its paper (Lei et al. 2025)",
             (52.19, 59.92, 62.24, 58.19, 75.01, 67.14, 36.41, 63.48, 46.92, 48.93, 66.14, 58.77), method="mor"),
        _ark("GraphFlow", "Requires training, agent-based", "LLaMA3-8B fine-tuned (Yu et al. 2025)",
             (47.85, 36.15, 55.49, 39.09, 57.18, 47.82, 51.39, 79.71, 61.37, 46.11, 57.68, 54.89),
             not_run=FINE_TUNING),
        _ark("AvaTaR", "Requires training, agent-based", "as in its paper (Wu et al. 2024a)",
             (49.90, 60.60, 58.70, 44.36, 50.63, 51.15, 18.40, 39.30, 26.73, 37.55, 50.18, 45.53), method="avatar"),
        _ark("ARK distilled", "Requires training, agent-based", "Qwen3-8B student of GPT-4.1",
             (54.99, 60.31, 64.24, 61.66, 81.39, 70.09, 31.87, 57.22, 41.08, 49.51, 66.31, 58.47),
             not_run="needs --model hf:STUDENT (a student made with `ark distill`), run as `--paper ark` with it"),
    ))

SEEDER_BENCHMARKS = ("PRIME", "MAG", "AMAZON")


def _seeder(label: str, group: str, backbone: str, values: tuple[float, ...], **kwargs: Any) -> PaperRow:
    return PaperRow(label, group, backbone, _split(values, SEEDER_BENCHMARKS), **kwargs)


_MINILM = "all-MiniLM-L6-v2"
SEEDER_TABLE_1 = PaperTable(
    "seeder", 1, "SeedER Table 1: first-stage retrievers with the MiniLM-L6-v2 encoder", "STaRK test sets",
    ("hit@1", "hit@5", "mrr", "recall@20"), ("H@1", "H@5", "MRR", "R@20"), SEEDER_BENCHMARKS, 1.0, tuple(
        _seeder(label, "First-stage retrievers", _MINILM, values, method=method) for label, method, values in (
            ("Dense Retriever", "dense", (0.101, 0.218, 0.161, 0.259, 0.203, 0.358, 0.273, 0.344, 0.306, 0.525,
                                          0.411, 0.417)),
            ("G-Retriever", "pcst", (0.099, 0.232, 0.162, 0.321, 0.206, 0.371, 0.277, 0.366, 0.306, 0.526, 0.408,
                                     0.416)),
            ("SubgraphRAG", "subgraphrag", (0.099, 0.220, 0.156, 0.262, 0.203, 0.359, 0.273, 0.345, 0.306, 0.525,
                                            0.408, 0.414)),
            ("Beam Search", "beam", (0.099, 0.249, 0.167, 0.331, 0.204, 0.387, 0.281, 0.392, 0.306, 0.528, 0.404,
                                     0.429)),
            ("A* Search", "astar", (0.099, 0.250, 0.167, 0.334, 0.204, 0.387, 0.282, 0.392, 0.306, 0.529, 0.404,
                                    0.430)),
            ("PPR", "ppr", (0.088, 0.244, 0.160, 0.320, 0.191, 0.395, 0.279, 0.404, 0.280, 0.524, 0.391, 0.435)),
            ("PPR+MMR", "ppr-mmr", (0.088, 0.257, 0.162, 0.318, 0.191, 0.397, 0.279, 0.399, 0.278, 0.524, 0.392,
                                    0.430)),
            ("K-HOP-W-FILTER", "khop-filter", (0.101, 0.248, 0.167, 0.342, 0.205, 0.391, 0.285, 0.398, 0.306, 0.525,
                                               0.411, 0.435)),
            ("SEEDER", "seeder", (0.199, 0.411, 0.293, 0.461, 0.244, 0.439, 0.332, 0.449, 0.319, 0.546, 0.422,
                                  0.444)),
        )))

_YU = " (numbers from Yu et al. 2025)"
_NO_RERANK, _RERANK = "Agent-based, without reranking", "Agent-based, with reranking"
SEEDER_TABLE_3 = PaperTable(
    "seeder", 3, "SeedER Table 3: LLM-based agentic retrieval beside SeedER", "STaRK test sets",
    ("hit@1", "hit@5", "mrr", "recall@20"), ("H@1", "H@5", "MRR", "R@20"), SEEDER_BENCHMARKS, 1.0, (
        _seeder("ToG + LLaMA3", _NO_RERANK, "LLaMA3" + _YU, (0.219, 0.340, 0.266, 0.338, 0.120, 0.141, 0.127, 0.068,
                0.042, 0.062, 0.053, 0.026), method="tog"),
        _seeder("ToG + GPT-4o", _NO_RERANK, "GPT-4o" + _YU, (0.167, 0.398, 0.270, 0.544, 0.233, 0.567, 0.364, 0.480,
                0.207, 0.414, 0.309, 0.258), method="tog"),
        _seeder("SFT", _NO_RERANK, "LLaMA3-8B fine-tuned" + _YU, (0.275, 0.401, 0.331, 0.477, 0.265, 0.286, 0.291,
                0.375, 0.082, 0.153, 0.135, 0.252), not_run=FINE_TUNING),
        _seeder("PRM", _NO_RERANK, "LLaMA3-8B fine-tuned" + _YU, (0.210, 0.467, 0.313, 0.460, 0.261, 0.280, 0.285,
                0.367, 0.201, 0.263, 0.282, 0.357), not_run=FINE_TUNING),
        _seeder("GraphFlow", _NO_RERANK, "LLaMA3-8B fine-tuned" + _YU, (0.398, 0.717, 0.546, 0.797, 0.293, 0.586,
                0.413, 0.572, 0.196, 0.442, 0.317, 0.362), not_run=FINE_TUNING),
        _seeder("ToG + LLaMA3 (reranked)", _RERANK, "LLaMA3" + _YU, (0.219, 0.340, 0.266, 0.338, 0.120, 0.141,
                0.127, 0.068, 0.042, 0.062, 0.053, 0.026), method="tog", options={"rerank": True}),
        _seeder("ToG + GPT-4o (reranked)", _RERANK, "GPT-4o" + _YU, (0.533, 0.637, 0.578, 0.544, 0.267, 0.567,
                0.397, 0.480, 0.276, 0.517, 0.391, 0.258), method="tog", options={"rerank": True}),
        _seeder("SFT (reranked)", _RERANK, "LLaMA3-8B fine-tuned" + _YU, (0.238, 0.525, 0.360, 0.477, 0.276, 0.449,
                0.364, 0.375, 0.122, 0.306, 0.215, 0.252), not_run=FINE_TUNING),
        _seeder("PRM (reranked)", _RERANK, "LLaMA3-8B fine-tuned" + _YU, (0.229, 0.282, 0.269, 0.460, 0.273, 0.441,
                0.337, 0.367, 0.213, 0.425, 0.320, 0.357), not_run=FINE_TUNING),
        _seeder("GraphFlow (reranked)", _RERANK, "LLaMA3-8B fine-tuned" + _YU, (0.514, 0.721, 0.614, 0.797, 0.391,
                0.575, 0.478, 0.572, 0.479, 0.650, 0.555, 0.362), not_run=FINE_TUNING),
        _seeder("SEEDER (mean of runs)", "First-stage retriever", "Qwen3-Embedding-4B encoder", (
            0.310, 0.582, 0.429, 0.647, 0.397, 0.620, 0.495, 0.607, 0.406, 0.653, 0.516, 0.527), method="seeder",
            note="the paper's std over runs: PRIME (0.024, 0.021, 0.023, 0.006), MAG (0.022, 0.012, 0.017, 0.005), "
                 "AMAZON (0.015, 0.011, 0.012, 0.003)"),
    ))

TABLES: dict[tuple[str, int], PaperTable] = {(t.paper, t.number): t for t in (ARK_TABLE_1, SEEDER_TABLE_1,
                                                                              SEEDER_TABLE_3)}
# STaRK graph names (our loaders' names) and the benchmark column each one is.
STARK_GRAPHS = {"prime": "PRIME", "stark-prime": "PRIME", "mag": "MAG", "stark-mag": "MAG", "amazon": "AMAZON",
                "stark-amazon": "AMAZON"}


def paper_table(paper: str, number: int) -> PaperTable:
    """The table ``number`` of ``paper``; ``ValueError`` lists the tables there are."""
    if (paper, number) not in TABLES:
        valid = ", ".join(f"--paper {p} --table {n}" for p, n in TABLES)
        extra = {("ark", 3): " (ARK's Table 3, the fusion rules, is `ark experiment fusion`)"}.get((paper, number), "")
        valid += ", --paper graphscout --table 1"
        raise ValueError(f"no table {number} of paper {paper!r} here{extra}; valid: {valid}")
    return TABLES[(paper, number)]
