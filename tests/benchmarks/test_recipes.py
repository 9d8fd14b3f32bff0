"""benchmarks/recipes/grbench.sh and stark.sh end to end on small files in the released layouts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]
GRBENCH_FIXTURES = REPO / "tests" / "fixtures" / "grbench"


def recipe(name: str, *args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(REPO / "benchmarks" / "recipes" / name), *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHON": sys.executable, **(env or {})})


def test_grbench_recipe_prints_the_table_per_graph_and_resumes(tmp_path):
    pytest.importorskip("ijson", reason="the streaming GRBench import needs ijson (the 'grbench' extra)")
    root = tmp_path / "processed_data"
    shutil.copytree(GRBENCH_FIXTURES, root)  # biomedical: graph.json + data.json; academic: graph.json only
    out = tmp_path / "out"
    done = recipe("grbench.sh", root, out)
    assert done.returncode == 0, done.stderr
    assert "academic: skipped" in done.stdout
    table = done.stdout.split("== biomedical", 1)[1]
    assert "| Paper: GRBench Healthcare F1 (backbone) | Paper: GRBench Healthcare QwenScore (backbone) |" in table
    assert "| GraphScout | offline (scripted solver, not an LLM) | ran | 3 |" in table
    assert "| BaseLLM | — | needs --model |" in table
    assert "| easy F1 (n) |" in table  # qids 0-2 of biomedical: easy in the shipped level table
    assert (out / "inputs" / "biomedical.sha256").read_text().count("\n") == 2

    again = recipe("grbench.sh", root, out)  # resumes: same table, no new import or run
    assert again.returncode == 0 and "Imported" not in again.stdout + again.stderr
    assert again.stdout.split("== biomedical", 1)[1].split("\n", 1)[1] == table.split("\n", 1)[1]

    with (root / "biomedical" / "data.json").open("a") as handle:
        handle.write('{"qid": "3", "question": "Which compound treats fictional fever?", "answer": "Examplomab"}\n')
    changed = recipe("grbench.sh", root, out)
    assert changed.returncode == 3 and "inputs differ" in changed.stderr


def write_stark(root: Path) -> Path:
    pytest.importorskip("torch", reason="STaRK .pt files need torch (the 'stark' extra)")
    from tests.fixtures.make_stark_fixture import write_stark_fixture

    write_stark_fixture(root / "skb" / "prime", "prime")
    qa = root / "qa" / "prime"
    (qa / "stark_qa").mkdir(parents=True)
    (qa / "split").mkdir()
    (qa / "stark_qa" / "stark_qa.csv").write_text(
        "id,query,answer_ids\n0,Which drug is indicated for epilepsy?,[2]\n1,What gene is associated with epilepsy?,"
        "[1]\n2,Which anatomy expresses SCN1A?,[4]\n")
    (qa / "split" / "test.index").write_text("0\n1")
    (qa / "split" / "train.index").write_text("2")
    return qa


def test_stark_recipe_prints_table_1_with_the_reported_columns_and_the_split(tmp_path):
    qa = write_stark(tmp_path / "stark")
    out = tmp_path / "out"
    done = recipe("stark.sh", tmp_path / "stark", "prime", out, env={"METHODS": "bm25 ark kar"})
    assert done.returncode == 0, done.stderr
    assert "split `test`: 2 questions in the released split file; the paper's Table 6 lists 2,016" in done.stdout
    assert "| Paper: Hit@1 | Paper: R@20 | Paper: MRR |" in done.stdout
    rows = {line.split(" | ")[0].strip("| "): line for line in done.stdout.splitlines() if line.startswith("| ")}
    assert "| offline policy (not an LLM) | ran | 2 |" in rows["ARK"]
    assert rows["ARK"].endswith("| 48.20 | 69.46 | 57.68 |")
    assert "| no model | ran | 2 |" in rows["BM25"] and rows["BM25"].endswith("| 12.75 | 31.25 | 19.84 |")
    assert "not run: error: method 'kar' prompts a chat model" in rows["KAR"]
    assert "not available" in rows["ada-002"]
    for method in ("bm25", "ark"):  # the split is named in every run's config
        assert json.loads((out / "runs" / method / "config.json").read_text())["split"] == "test"
    sums = (out / "inputs.sha256").read_text()
    assert "stark_qa.csv" in sums and "test.index" in sums and "node_info.pkl" in sums
    assert (out / "table.md").read_text() in done.stdout

    (qa / "split" / "test.index").write_text("0")
    assert recipe("stark.sh", tmp_path / "stark", "prime", out).returncode == 3  # changed inputs are refused
    missing = recipe("stark.sh", tmp_path / "nowhere", "prime", tmp_path / "out2")
    assert missing.returncode == 2 and "missing" in missing.stderr
