"""GraphScout's experiments as commands, each at a tiny size on the small clinical graph saved to disk with a
GraphScout quiz of it: Figures 4-6 from the scripted solver's run (the baselines marked "needs --model"), Figures
7-8 from the quiz file, Tables 2 and 5 with tiny GRPO models (a few steps: pipeline checks), each report beside
the paper's numbers where the paper prints them and with PNG plots under --charts."""

from __future__ import annotations

import json

import pytest

from ark.experiments.graphscout_paper import TABLE_2, TABLE_5
from ark.graph import save_graph
from tests.support.cli import cli_invoker
from tests.support.graphs import save_clinical_graph

pytest.importorskip("ladybug")
PNG = b"\x89PNG"


@pytest.fixture
def cli(monkeypatch):
    from ark.cli.experiment_cmd import register

    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("COLUMNS", "250")
    return cli_invoker(register)


@pytest.fixture(scope="module")
def clinical(tmp_path_factory):
    """The clinical graph on disk and a 12-question GraphScout quiz of it (the deterministic quizzer, seed 0)."""
    from ark.graph import load_graph
    from ark.methods.graphscout.quiz import GraphScoutQuizConfig, generate_graphscout_quiz

    root = tmp_path_factory.mktemp("gs")
    graph = load_graph(save_clinical_graph(root / "graph"))
    quiz = root / "quiz.jsonl"
    questions = generate_graphscout_quiz(graph, GraphScoutQuizConfig(n=12, seed=0)).questions
    quiz.write_text("".join(json.dumps(q) + "\n" for q in questions))
    return graph, quiz, questions


def run(cli, name, clinical, tmp_path, *flags):
    graph, quiz, _ = clinical
    out = tmp_path / name
    result = cli("experiment", name, str(graph.path), "--queries", quiz, "--out", out, "--runs", tmp_path / "runs",
                 "--no-progress", *flags)
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text()), out, result


def test_quizzer_diversity_counts_the_quizs_labels_and_plots_figures_7_and_8(cli, clinical, tmp_path):
    report, out, _ = run(cli, "quizzer-diversity", clinical, tmp_path, "--charts")
    questions = clinical[2]
    shares = report["tables"]["shares"]["rows"]
    for dimension, key in (("difficulty", "difficulty"), ("answer type", "answer_type")):
        counted = {row[1]: int(row[2]) for row in shares if row[0] == dimension}
        assert counted == {v: sum(q[key] == v for q in questions) for v in {q[key] for q in questions}}
    spread = {row[0]: row for row in report["tables"]["spread"]["rows"]}
    clues = [len(q["clue_ids"]) for q in questions]
    assert float(spread["clue nodes"][1]) == pytest.approx(sum(clues) / len(clues), abs=0.05)
    assert spread["clue nodes"][2] == str(min(clues)) and spread["clue nodes"][5] == str(max(clues))
    for file in ("quizzer_shares.png", "quizzer_spread.png"):
        assert (out / file).read_bytes().startswith(PNG)
    assert "the quizzer's own recorded labels" in (out / "report.md").read_text()


def test_without_charts_no_plots(cli, clinical, tmp_path):
    _, out, _ = run(cli, "quizzer-diversity", clinical, tmp_path)
    assert not list(out.glob("*.png"))


@pytest.mark.parametrize(("name", "table", "plot"), [("graphscout-difficulty", "difficulty", "difficulty.png"),
                                                      ("graphscout-lengths", "lengths", "lengths.png"),
                                                      ("graphscout-tokens", "tokens", "tokens.png")])
def test_behaviour_figures_from_the_scripted_solvers_run(cli, clinical, tmp_path, name, table, plot):
    report, out, result = run(cli, name, clinical, tmp_path, "--charts", "--limit", "6")
    rows = report["tables"][table]["rows"]
    assert rows and all(row[-1] == "plotted, no number" for row in rows)
    if name != "graphscout-lengths":
        assert [row[0] for row in rows] == ["GraphScout"]  # offline: the solver; the baselines need a model
        assert rows[0][1] == "scripted solver (offline, not an LLM)"
        assert "not run offline" in " ".join(report["notes"]) and "GraphCoT" in " ".join(report["notes"])
    else:
        assert {row[0] for row in rows} <= {"simple", "medium", "hard"} and sum(int(r[1]) for r in rows) == 6
        assert all(float(row[3]) >= 1.0 for row in rows)  # the scripted solver calls a tool on every question
    if name == "graphscout-tokens":
        assert rows[0][6] == "estimated (chars / 4)" and float(rows[0][3]) > float(rows[0][4]) > 0
    assert (out / plot).read_bytes().startswith(PNG)
    config = json.loads((tmp_path / "runs").glob("graphscout-*").__next__().joinpath("config.json").read_text())
    assert config["preset"] == "paper" and config["method_options"]["retriever"]["index"] == "dense"


TINY = ["--set", "steps=1", "--set", "questions=2", "--set", "group_size=2", "--set", "eval_questions=2",
        "--set", "max_new_tokens=24", "--set", "warm_start_epochs=1", "--set", "max_completion_tokens=48",
        "--set", "max_turns=3", "--preset", "none"]


@pytest.mark.parametrize("name", ["graphscout-tool-failures", "graphscout-ablations"])
def test_tiny_model_tables_beside_the_papers(cli, clinical, tmp_path, name):
    pytest.importorskip("trl")
    report, out, result = run(cli, name, clinical, tmp_path, *TINY)
    ours = {row[0] + " | " + row[1]: row for row in report["tables"]["table5" if "failures" in name else "table2"]
            ["rows"]}
    if name == "graphscout-tool-failures":
        assert [key.split(" | ")[0] for key in ours] == ["tiny base (random init)",
                                                         "w/o train (warm start, before GRPO)", "w/ train (after GRPO)"]
        row = ours["w/o train (warm start, before GRPO) | tiny model (pipeline check)"]
        assert row[-1] == f"{TABLE_5['w/o train'][0]:.2f}%" and row[2] == "2"
        assert int(row[4]) <= int(row[3])
        assert len(report["tables"]["paper"]["rows"]) == 2
    else:
        labels = [row.label for row in TABLE_2]
        assert [key.split(" | ")[0] for key in ours] == [*labels, "GraphScout", "w/o A_code"]
        scripted = ours["GraphScout | scripted solver (offline, not an LLM)"]
        assert scripted[5] == "0.855" and 0.0 <= float(scripted[4]) <= 1.0
        assert ours["w/o r_clue | tiny model (pipeline check)"][5] == "0.812"
        assert len(list((tmp_path / "runs").glob("graphscout-tiny-*/grpo*"))) == 4  # four GRPO runs
    assert "pipeline checks, not model results" in (out / "report.md").read_text()


def test_unknown_tiny_settings_are_named(cli, clinical, tmp_path):
    graph, quiz, _ = clinical
    result = cli("experiment", "graphscout-ablations", str(graph.path), "--queries", quiz, "--set", "stepz=1")
    assert result.exit_code == 2 and "unknown setting 'stepz'" in result.text and "steps" in result.text


def test_cross_domain_grid_of_tiny_models_on_two_graphs(cli, clinical, tmp_path):
    pytest.importorskip("trl")
    from tests.support.graphs import build_drug_graph

    drugs = save_graph(build_drug_graph(), tmp_path / "drugs")
    report, out, _ = run(cli, "cross-domain", clinical, tmp_path, *TINY, "--set", f"domains={drugs}", "--charts")
    rows = {row[0]: row for row in report["tables"]["grid"]["rows"]}
    assert report["tables"]["grid"]["columns"] == ["Trained on", "clinical", "drugs", "paper"]
    assert list(rows) == ["tiny model, clinical", "tiny model, drugs", "scripted solver (no training)",
                          "own domain, before GRPO"]
    assert all(0.0 <= float(cell) <= 1.0 for row in rows.values() for cell in row[1:3])
    assert (out / "cross_domain.png").read_bytes().startswith(PNG)
    assert len(list((tmp_path / "runs").glob("graphscout-tiny-*/grpo"))) == 2  # one GRPO run per domain


def test_domains_belong_to_cross_domain(cli, clinical, tmp_path):
    graph, quiz, _ = clinical
    result = cli("experiment", "cross-domain", str(graph.path), "--queries", quiz)
    assert result.exit_code == 2 and "--set domains=GRAPH[,GRAPH...] names the other domains" in result.text
    result = cli("experiment", "graphscout-ablations", str(graph.path), "--queries", quiz, "--set", "domains=x")
    assert result.exit_code == 2 and "belongs to cross-domain alone" in result.text
