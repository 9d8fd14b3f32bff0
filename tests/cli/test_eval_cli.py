"""``ark retrieve``, ``ark eval`` and ``ark eval compare`` on a tiny saved graph, through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from ark.cli.eval_cmd import register
from ark.graph import EdgeTable, NodeTable, build_graph, save_graph
from ark.runtime.trajectory_file import read_trajectory_file
from ark.storage.jsonl import read_jsonl

DISEASES = {
    "D:1": ("Marfan syndrome", "tall stature long fingers lens dislocation aortic dilation"),
    "D:2": ("Achondroplasia", "short stature short limbs large head"),
    "D:3": ("Cystic fibrosis", "chronic cough salty sweat poor growth"),
}
PHENOTYPES = {
    "P:1": ("Tall stature", "tall stature"),
    "P:2": ("Short stature", "short stature"),
    "P:3": ("Chronic cough", "chronic cough"),
}


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory) -> Path:
    ids = list(DISEASES) + list(PHENOTYPES)
    rows = {**DISEASES, **PHENOTYPES}
    nodes = NodeTable(ids=ids, types=["disease"] * 3 + ["phenotype"] * 3, names=[rows[i][0] for i in ids],
                      texts=[f"{rows[i][0]}. {rows[i][1]}" for i in ids])
    edges = EdgeTable(sources=["D:1", "D:2", "D:3"], targets=["P:1", "P:2", "P:3"], relations=["has_phenotype"] * 3)
    path = tmp_path_factory.mktemp("graph") / "tiny"
    save_graph(build_graph(nodes, edges, metadata={"name": "tiny"}), path)
    return path


def write_queries(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


QUERIES = [
    {"id": "a", "query": "very tall with lens dislocation", "answer_ids": ["D:1"], "template": "easy"},
    {"id": "b", "query": "short limbs and a large head", "answer_ids": ["D:2"], "template": "easy"},
    {"id": "c", "query": "salty sweat and cough", "answer_ids": ["D:3"], "template": "hard"},
    {"id": "d", "query": "tall stature", "answer_ids": ["D:1", "P:1"], "template": "hard"},
]


@pytest.fixture
def cli():
    app = typer.Typer()

    @app.command("noop")
    def noop() -> None:  # a second command keeps `retrieve` from becoming the app itself
        pass

    register(app)
    runner = CliRunner()

    def invoke(*args):
        result = runner.invoke(app, [str(a) for a in args])
        result.text = " ".join(result.output.split())  # rich wraps long lines: compare words, not layout
        return result

    return invoke


def test_retrieve_writes_one_line_per_query_and_resumes(cli, graph_dir, tmp_path):
    queries = write_queries(tmp_path / "q.jsonl", QUERIES)
    out = tmp_path / "results.jsonl"
    result = cli("retrieve", graph_dir, "--method", "bm25", "--queries", queries, "--out", out, "--no-progress")
    assert result.exit_code == 0, result.output
    records = read_jsonl(out)
    assert [r["id"] for r in records] == ["a", "b", "c", "d"]
    assert records[0]["ranked"][0] == "D:1"
    assert records[0]["scores"] == sorted(records[0]["scores"], reverse=True)
    again = cli("retrieve", graph_dir, "--method", "bm25", "--queries", queries, "--out", out, "--no-progress")
    assert again.exit_code == 0 and "0 new, 4 already done" in again.text
    assert len(read_jsonl(out)) == 4


def test_eval_writes_run_folder_and_prints_table(cli, graph_dir, tmp_path):
    queries = write_queries(tmp_path / "q.jsonl", QUERIES)
    run = tmp_path / "run-bm25"
    result = cli("eval", graph_dir, "--method", "bm25", "--queries", queries, "--run-dir", run, "--no-progress",
                 "--candidate-types", "disease")
    assert result.exit_code == 0, result.output
    for name in ("config.json", "results.jsonl", "per_query.jsonl", "summary.json", "summary.md"):
        assert (run / name).is_file(), name
    summary = json.loads((run / "summary.json").read_text())
    assert summary["overall"]["n"] == 4
    assert set(summary["by_template"]) == {"easy", "hard"}
    # P:1 is not a candidate with --candidate-types disease: dropped and counted, like STaRK
    assert summary["dropped_answers"] == 1
    rows = {r["id"]: r for r in read_jsonl(run / "per_query.jsonl")}
    assert rows["a"]["hit@1"] == 1.0
    assert all(n.startswith("D:") for r in read_jsonl(run / "results.jsonl") for n in r["ranked"])
    assert "Hit@1" in result.text and "template: easy" in result.text
    assert "| overall | 4 |" in (run / "summary.md").read_text()


def test_eval_refuses_to_resume_a_different_run(cli, graph_dir, tmp_path):
    queries = write_queries(tmp_path / "q.jsonl", QUERIES)
    run = tmp_path / "run"
    assert cli("eval", graph_dir, "-m", "bm25", "-q", queries, "--run-dir", run, "--no-progress").exit_code == 0
    result = cli("eval", graph_dir, "-m", "bm25-rel", "-q", queries, "--run-dir", run, "--no-progress")
    assert result.exit_code == 2
    assert "different run" in result.text and "bm25-rel" in result.text


def test_query_file_problems_are_counted_and_skippable(cli, graph_dir, tmp_path):
    bad = [*QUERIES, {"id": "e", "answer_ids": ["D:1"]}, {"id": "f", "query": "x", "answer_ids": ["D:99", "D:98"]}]
    queries = write_queries(tmp_path / "bad.jsonl", bad)
    result = cli("eval", graph_dir, "-m", "bm25", "-q", queries, "--run-dir", tmp_path / "r1", "--no-progress")
    assert result.exit_code == 2
    assert "1 malformed line(s)" in result.text and "missing field(s) query" in result.text
    assert "1 query(ies) with 2 answer id(s) not in the graph" in result.text and "D:99" in result.text
    assert "--skip-invalid" in result.text
    result = cli("eval", graph_dir, "-m", "bm25", "-q", queries, "--run-dir", tmp_path / "r2", "--no-progress",
                 "--skip-invalid")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "r2" / "summary.json").read_text())
    assert summary["n_queries"] == 5  # the malformed line is left out; f stays and scores 0
    assert summary["n_without_valid_answer"] == 1 and summary["dropped_answers"] == 2


def test_unknown_method_is_named_with_valid_choices(cli, graph_dir, tmp_path):
    queries = write_queries(tmp_path / "q.jsonl", QUERIES)
    result = cli("eval", graph_dir, "-m", "bm42", "-q", queries, "--no-progress")
    assert result.exit_code == 2 and "bm42" in result.text and "bm25-rel" in result.text


def _two_runs(cli, graph_dir, tmp_path, name_a: str = "run-a") -> tuple:
    """Two bm25 runs of QUERIES; the second misses query "a" at rank 1."""
    queries = write_queries(tmp_path / "q.jsonl", QUERIES)
    a, b = tmp_path / name_a, tmp_path / "run-b"
    assert cli("eval", graph_dir, "-m", "bm25", "-q", queries, "--run-dir", a, "--no-progress").exit_code == 0
    assert cli("eval", graph_dir, "-m", "bm25", "-q", queries, "--run-dir", b, "--no-progress").exit_code == 0
    rows = read_jsonl(b / "per_query.jsonl")
    for row in rows:
        if row["id"] == "a":
            row["hit@1"] = 0.0
    (b / "per_query.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return a, b


def test_compare_shows_both_runs_and_their_disagreements(cli, graph_dir, tmp_path):
    a, b = _two_runs(cli, graph_dir, tmp_path)
    md = tmp_path / "cmp.md"
    result = cli("eval", "compare", a, b, "--markdown", md)
    assert result.exit_code == 0, result.output
    assert "run-a" in result.text and "run-b" in result.text and "template: hard" in result.text
    assert "1 queries run-a gets right and run-b wrong" in result.text
    assert "very tall with lens dislocation" in result.text
    assert "0 queries run-b gets right and run-a wrong" in md.read_text()


def test_compare_needs_scored_run_folders(cli, tmp_path):
    result = cli("eval", "compare", tmp_path, tmp_path / "nothing")
    assert result.exit_code == 2 and "not a scored run folder" in result.text


def test_stark_csv_queries(cli, tmp_path):
    ids = [str(i) for i in range(4)]
    nodes = NodeTable(ids=ids, types=["paper"] * 4, names=["graph agents", "protein folding", "dense retrieval",
                                                          "knowledge graphs"])
    edges = EdgeTable(sources=["0"], targets=["3"], relations=["cites"])
    gdir = tmp_path / "stark-graph"
    save_graph(build_graph(nodes, edges, metadata={"name": "toy"}), gdir)
    qa = tmp_path / "toy"
    (qa / "stark_qa").mkdir(parents=True)
    (qa / "split").mkdir()
    (qa / "stark_qa" / "stark_qa.csv").write_text(
        'id,query,answer_ids\n0,papers on protein folding,[1]\n1,graph agents,"[0, 3]"\n2,dense retrieval,[2]\n')
    (qa / "split" / "test.index").write_text("2\n0\n")
    run = tmp_path / "run"
    result = cli("eval", gdir, "-m", "bm25", "-q", qa, "--split", "test", "--run-dir", run, "--no-progress")
    assert result.exit_code == 0, result.output
    assert [r["id"] for r in read_jsonl(run / "results.jsonl")] == ["2", "0"]
    assert json.loads((run / "summary.json").read_text())["overall"]["hit@1"] == 1.0
    result = cli("retrieve", gdir, "-m", "bm25", "-q", qa / "stark_qa" / "stark_qa.csv", "--out",
                 tmp_path / "all.jsonl", "--no-progress")
    assert result.exit_code == 0, result.output
    assert len(read_jsonl(tmp_path / "all.jsonl")) == 3


def test_ark_offline_run_with_tool_use_and_charts(cli, graph_dir, tmp_path):
    pytest.importorskip("matplotlib")
    queries = write_queries(tmp_path / "q.jsonl", QUERIES)
    run = tmp_path / "run-ark"
    result = cli("eval", graph_dir, "-m", "ark", "--offline", "-q", queries, "--run-dir", run, "--no-progress",
                 "--set", "n_agents=2", "--set", "max_steps=4", "--charts")
    assert result.exit_code == 0, result.output
    trajectories = read_trajectory_file(run / "trajectories.jsonl")
    assert sorted(r["id"] for r in trajectories) == ["a", "b", "c", "d"]
    assert all(len(r["trajectories"]) == 2 for r in trajectories)
    tool_use = json.loads((run / "tool_use.json").read_text())
    assert tool_use["n_trajectories"] == 8
    assert tool_use["calls"]["global"] >= 8  # every trajectory starts with a global search
    assert "Tool use" in result.text
    charts = sorted(p.name for p in (run / "charts").glob("*.png"))
    assert charts == ["cost_per_query.png", "neighborhood_calls_by_success.png", "tool_use_by_step.png"]
    assert all((run / "charts" / name).read_bytes()[:4] == b"\x89PNG" for name in charts)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["truncate"] == 20 and "truncated to the top 20" in (run / "summary.md").read_text()


def test_truncation_defaults_to_the_methods_own(cli, graph_dir, tmp_path):
    """ARK is scored on its top 20 (the paper's Appendix A.2) unless told otherwise; other methods on everything."""
    queries = write_queries(tmp_path / "q.jsonl", QUERIES[:2])

    def truncate_of(*args):
        run = tmp_path / f"run-{len(list(tmp_path.iterdir()))}"
        result = cli("eval", graph_dir, "-q", queries, "--run-dir", run, "--no-progress", *args)
        assert result.exit_code == 0, result.output
        return json.loads((run / "summary.json").read_text())["truncate"]

    assert truncate_of("-m", "ark", "--offline", "--set", "n_agents=1") == 20
    assert truncate_of("-m", "ark", "--offline", "--set", "n_agents=1", "--truncate", "0") is None
    assert truncate_of("-m", "bm25") is None
    assert truncate_of("-m", "bm25", "--truncate", "5") == 5


def test_eval_trajectories_render_with_trajectory_show(cli, graph_dir, tmp_path):
    from ark.cli.main import app

    queries = write_queries(tmp_path / "q.jsonl", QUERIES[:1])
    run = tmp_path / "run-show"
    result = cli("eval", graph_dir, "-m", "ark", "--offline", "-q", queries, "--run-dir", run, "--no-progress",
                 "--set", "n_agents=2", "--set", "max_steps=4")
    assert result.exit_code == 0, result.output
    record = read_trajectory_file(run / "trajectories.jsonl")[0]
    assert record["question"] == QUERIES[0]["query"]
    assert record["ranked"] and record["ranked"][0]["node_id"] == "D:1"
    shown = CliRunner().invoke(app, ["trajectory", "show", str(run / "trajectories.jsonl")])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.output.split())
    assert QUERIES[0]["query"] in text
    assert "Agent 1" in text and "Fused ranking" in text and "Marfan syndrome" in text


def test_retrieve_refuses_to_resume_results_of_other_settings(cli, graph_dir, tmp_path):
    queries = write_queries(tmp_path / "q.jsonl", QUERIES)
    out = tmp_path / "r.jsonl"
    assert cli("retrieve", graph_dir, "-m", "bm25", "-q", queries, "-o", out, "--no-progress").exit_code == 0
    assert json.loads((tmp_path / "r.config.json").read_text())["method"] == "bm25"
    result = cli("retrieve", graph_dir, "-m", "bm25-rel", "-q", queries, "-o", out, "--no-progress")
    assert result.exit_code == 2, result.output
    assert "different run" in result.text and "bm25-rel" in result.text and "already done" not in result.text
    assert [r["id"] for r in read_jsonl(out)] == ["a", "b", "c", "d"]  # left as it was
    again = cli("retrieve", graph_dir, "-m", "bm25", "-q", queries, "-o", out, "--no-progress", "--k", "7")
    assert again.exit_code == 2 and "k: was 100, now 7" in again.text


def test_retrieve_out_directory_is_a_clear_error(cli, graph_dir, tmp_path):
    queries = write_queries(tmp_path / "q.jsonl", QUERIES)
    result = cli("retrieve", graph_dir, "-m", "bm25", "-q", queries, "-o", tmp_path, "--no-progress")
    assert result.exit_code == 2, result.output
    assert "is a directory" in result.text and not isinstance(result.exception, IsADirectoryError)


# ------------------------------------------------------------------------------------------------ answers
QA_QUERIES = [
    {"id": "count", "query": "How many genes are associated with Loeys-Dietz syndrome?", "answer": 2,
     "template": "number"},
    {"id": "genes", "query": "Which genes are associated with Loeys-Dietz syndrome?",
     "answer_ids": ["NCBIGene:7046", "NCBIGene:7048"], "answer": ["TGFBR1", "TGFBR2"], "template": "set"},
    {"id": "check", "query": "Is F8 associated with Marfan syndrome?", "answer": "no", "template": "boolean"},
]


@pytest.fixture(scope="module")
def clinical_dir(tmp_path_factory) -> Path:
    from tests.support.graphs import save_clinical_graph

    return save_clinical_graph(tmp_path_factory.mktemp("graphs") / "clinical")


def test_eval_graphscout_reports_answer_metrics_beside_retrieval(cli, clinical_dir, tmp_path, no_llm):
    pytest.importorskip("ladybug")
    queries = write_queries(tmp_path / "qa.jsonl", QA_QUERIES)
    run = tmp_path / "run-gs"
    result = cli("eval", clinical_dir, "-m", "graphscout", "-q", queries, "--run-dir", run, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "answer EM" in result.text and "answer F1" in result.text
    rows = {row["id"]: row for row in read_jsonl(run / "per_query.jsonl")}
    assert rows["count"]["predicted_answer"] == "2" and rows["count"]["answer_metrics"]["exact_match"] == 1.0
    assert rows["genes"]["answer_metrics"]["exact_match"] == 1.0 and rows["genes"]["hit@1"] == 1.0
    assert rows["check"]["predicted_answer"] == "no"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["answers"] == {"n": 3, "exact_match": 1.0, "f1": 1.0, "item_f1": 1.0}
    assert summary["overall"]["n"] == 1 and set(summary["by_template"]) == {"number", "set", "boolean"}
    assert summary["by_template"]["number"]["answers"]["exact_match"] == 1.0
    assert "| n answered | EM | F1 |" in (run / "summary.md").read_text()
    results = {r["id"]: r for r in read_jsonl(run / "results.jsonl")}
    assert results["count"]["answer"] == {"text": "2", "type": "number"}
    assert len(read_jsonl(run / "trajectories.jsonl")) == 3
    # one warm worker per question in flight (3 at --concurrency 4), reset in place after each question, all ended
    # with the run and their CPU time recorded
    usage = json.loads((run / "config.json").read_text())["sandbox_usage"]
    assert 1 <= usage["workers_started"] <= 3 and usage["resets_in_place"] == 3
    assert usage["workers_ended"] == usage["workers_started"] and usage["workers_killed"] == 0
    assert usage["worker_cpu_s"] > 0 and summary["run"]["sandbox_usage"] == usage


def test_eval_graphscout_keeps_one_sandbox_worker_for_a_sequential_run(cli, clinical_dir, tmp_path, no_llm):
    pytest.importorskip("ladybug")
    queries = write_queries(tmp_path / "qa.jsonl", QA_QUERIES)
    run = tmp_path / "run-gs-1"
    result = cli("eval", clinical_dir, "-m", "graphscout", "-q", queries, "--run-dir", run, "--no-progress",
                 "--concurrency", "1")
    assert result.exit_code == 0, result.output
    usage = json.loads((run / "config.json").read_text())["sandbox_usage"]
    assert usage["workers_started"] == 1 and usage["resets_in_place"] == 3 and usage["workers_ended"] == 1


def test_eval_judge_flag_grades_with_the_configured_model(cli, clinical_dir, tmp_path, no_llm, openai_server,
                                                           monkeypatch):
    pytest.importorskip("ladybug")
    from tests.support.openai_server import text_reply, turn_script

    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    openai_server.responder = turn_script([text_reply("INCORRECT")])
    queries = write_queries(tmp_path / "qa.jsonl", QA_QUERIES[:1])
    run = tmp_path / "run-judge"
    result = cli("eval", clinical_dir, "-m", "graphscout", "--offline", "-q", queries, "--run-dir", run,
                 "--no-progress", "--judge", "--judge-model", "judge-model")
    assert result.exit_code == 0, result.output
    assert [body["model"] for body in openai_server.requests] == ["judge-model"]  # the method stayed offline
    summary = json.loads((run / "summary.json").read_text())
    assert summary["answers"]["judge_accuracy"] == 0.0 and summary["answers"]["exact_match"] == 1.0
    assert "LLM judge accuracy (model-graded, off by default)" in result.text and "answer Judge" in result.text


def test_eval_judge_without_a_model_is_a_clear_error(cli, clinical_dir, tmp_path, no_llm):
    queries = write_queries(tmp_path / "qa.jsonl", QA_QUERIES[:1])
    result = cli("eval", clinical_dir, "-m", "bm25", "-q", queries, "--run-dir", tmp_path / "r", "--judge")
    assert result.exit_code == 2 and "--judge needs a chat model" in result.text


def test_compare_shows_query_text_and_run_names_as_text_not_markup(cli, graph_dir, tmp_path):
    """A query written by a model or a data set (and a run folder's name) holding rich markup: a terminal hyperlink
    or a style in it is printed as the text it is."""
    a, b = _two_runs(cli, graph_dir, tmp_path, "run-[bold]a")
    rows = read_jsonl(a / "per_query.jsonl")
    for row in rows:
        if row["id"] == "a":
            row["query"] = "[link=https://evil.example]click here[/link] [blink]now[/]"
    (a / "per_query.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = cli("eval", "compare", a, b)
    assert result.exit_code == 0, result.output
    assert "[link=https://evil.example]click here[/link] [blink]now[/]" in result.text, result.text
    assert "1 queries run-[bold]a gets right" in result.text, result.text


def test_query_file_problems_quote_the_file_as_text_not_markup(cli, graph_dir, tmp_path):
    bad = [*QUERIES, {"id": "g", "query": "x", "answer_ids": ["[link=https://evil.example]D:97[/link]"]}]
    queries = write_queries(tmp_path / "bad.jsonl", bad)
    result = cli("eval", graph_dir, "-m", "bm25", "-q", queries, "--run-dir", tmp_path / "r", "--no-progress",
                 "--skip-invalid")
    assert result.exit_code == 0, result.output
    assert "[link=https://evil.example]D:97[/link]" in result.text, result.text
