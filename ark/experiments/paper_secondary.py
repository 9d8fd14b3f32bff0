"""The secondary tables of the SeedER and ARK papers as data, beside which the experiments print ours.

Copied from the seed texts (002: SeedER, 000: ARK), never measured here; tests/experiments/test_paper_secondary.py
reads each cell back from the seed text. SeedER's Table 6 (validation–test correlation over 10 seeds × 10 epochs on
STaRK-PRIME, MiniLM-L6-v2); SeedER's Figure 4 is a plot whose text states the parameter counts quoted here; ARK's
Table 5 (backbones and distilled Qwen3 students, percent, STaRK synthetic test sets).
"""

from __future__ import annotations

from collections.abc import Mapping

# SeedER Table 6: metric -> (Pearson r, Spearman rho, Kendall tau); n = 100 paired observations.
SEEDER_TABLE_6_COLUMNS = ("Pearson r", "Spearman ρ", "Kendall τ")
SEEDER_TABLE_6: Mapping[str, tuple[float, float, float]] = {
    "hit@1": (0.966, 0.962, 0.846),
    "hit@5": (0.971, 0.968, 0.860),
    "mrr": (0.982, 0.978, 0.879),
    "recall@20": (0.967, 0.933, 0.785),
}
SEEDER_TABLE_6_LABELS = {"hit@1": "H@1", "hit@5": "H@5", "mrr": "MRR", "recall@20": "R@20"}
SEEDER_STABILITY_SETUP = ("SeedER Appendix G: STaRK-PRIME, MiniLM-L6-v2, ten random seeds, 20% of the training set "
                          "held out as validation, the original validation split as the test set; Table 6 pairs "
                          "validation and test at every checkpoint (10 seeds × 10 epochs, n = 100).")
SEEDER_STABILITY_RUNS = 10  # "repeated across ten random seeds"
SEEDER_STABILITY_EPOCHS = 10  # "ten random seeds and ten training epochs"

# SeedER Figure 4 (STaRK-PRIME): Recall@20 against per-query latency and model size. The figure's numbers are not in
# the text; the text gives these, and the R@20 of each retriever is Table 1's PRIME column (GraphFlow's: Table 3).
SEEDER_FIGURE_4_PARAMETERS = {"SEEDER": "1.1M trainable parameters", "GraphFlow": "an 8B-parameter LLM"}
SEEDER_FIGURE_4_SAYS = ("SeedER Section 5 (Figure 4, STaRK-PRIME): SEEDER uses \"only 1.1M trainable parameters\"; "
                        "against GraphFlow (an 8B-parameter LLM) it has \"roughly 1/8000 as many parameters and is "
                        "tens of times faster per query\". Latencies are plotted, not stated.")
SEEDER_FIGURE_6_SAYS = ("SeedER Appendix F.2 (Figure 6): \"On STARK-PRIME and STARK-MAG, K-HOP-WITH-FILTERING "
                        "consistently improves Hit@Any and Recall@Any across budgets, with the largest gains at small "
                        "and medium budgets [...] MRR improves only modestly\". The figure is a plot: the paper "
                        "states no numbers for it, so none are printed beside ours.")

# ARK Table 5: row -> {benchmark: (Hit@1, Hit@5, R@20, MRR)}, percent.
ARK_TABLE_5_METRICS = ("hit@1", "hit@5", "recall@20", "mrr")
ARK_TABLE_5_HEADERS = ("Hit@1", "Hit@5", "R@20", "MRR")
ARK_TABLE_5_BENCHMARKS = ("AMAZON", "MAG", "PRIME")
_ARK_TABLE_5_ROWS = (
    ("GPT-4o", (55.13, 76.37, 57.18, 64.29, 67.01, 86.67, 79.79, 75.46, 36.01, 60.17, 60.13, 46.44)),
    ("GPT-4.1", (55.82, 75.80, 60.61, 64.77, 73.40, 87.92, 84.47, 79.87, 48.20, 69.57, 69.46, 57.68)),
    ("GPT-5.2", (56.12, 77.76, 58.62, 65.71, 73.13, 91.11, 86.21, 81.01, 50.64, 71.44, 70.04, 59.55)),
    ("Qwen3-4B", (45.69, 67.46, 47.17, 55.26, 37.64, 56.56, 54.54, 46.01, 18.02, 37.00, 35.43, 26.20)),
    ("Qwen3-4B-600", (50.10, 71.26, 53.73, 59.32, 49.90, 69.21, 68.47, 58.43, 26.52, 47.27, 49.54, 36.01)),
    ("Qwen3-4B-6000", (54.46, 74.66, 58.91, 64.78, 60.16, 78.79, 79.88, 68.59, 27.46, 49.15, 51.40, 36.95)),
    ("Qwen3-8B", (47.95, 70.03, 53.10, 57.95, 35.09, 57.02, 53.42, 44.96, 18.37, 36.41, 36.13, 26.28)),
    ("Qwen3-8B-600", (50.06, 70.07, 55.29, 59.13, 48.89, 69.41, 68.48, 58.13, 25.24, 47.20, 50.16, 35.08)),
    ("Qwen3-8B-6000", (54.99, 74.35, 60.31, 64.24, 61.66, 80.41, 81.39, 70.09, 31.87, 51.10, 57.22, 41.08)),
)
ARK_TABLE_5: Mapping[str, Mapping[str, tuple[float, ...]]] = {
    label: {bench: values[4 * i:4 * i + 4] for i, bench in enumerate(ARK_TABLE_5_BENCHMARKS)}
    for label, values in _ARK_TABLE_5_ROWS}
