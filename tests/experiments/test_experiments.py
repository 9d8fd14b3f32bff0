"""The ARK paper's experiments end to end on a small graph: report folders with their tables and non-empty PNG plots,
resumed runs, shared configurations, the command line, and one ablation driven by a scripted model on loopback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.eval.query_files import read_queries
from ark.experiments import EXPERIMENTS, Settings, run_experiment
from ark.llm import OpenAIChatClient, resolve_settings
from ark.methods import MethodContext
from ark.methods.choice import MethodChoice
from ark.runtime.trajectory_file import read_trajectory_file
from tests.support.graphs import BROAD, ONE_HOP, SHARED_FINDINGS, TWO_HOP, save_clinical_graph
from tests.support.openai_server import tool_reply

pytest.importorskip("matplotlib")

PNG = b"\x89PNG\r\n\x1a\n"
SETTINGS = Settings(agents=(1, 2), steps=(3, 6), t=2)
# The rows each experiment's tables must have (first column), for SETTINGS.
EXPECTED_ROWS = {
    "ablations": {"table2": ["Full", "w/o Neighbors", "Neighbors w/o q", "Neighbors w/o F"]},
    "fusion": {"table3": ["Voting", "Ordering", "Random"]},
    "relevance": {"table4": ["BM25 (field-aware)", "BM25 (plain)", "Dense (MiniLM)"]},
    "budget": {"figure2": ["n = 1, T_max = 3", "n = 1, T_max = 6", "n = 2, T_max = 3", "n = 2, T_max = 6"]},
    "agents-vs-steps": {"table8": ["1 agent, T_max = 6", "3 agents, T_max = 2"]},
    "tool-use": {"retrieval": ["ARK"], "figure3": ["offline"], "table9": ["All traj.", "Successful traj."],
                 "table10": ["All traj.", "Successful traj."]},
    "neighborhood": {"retrieval": ["ARK"], "figure5": ["Successful", "Failed"]},
}
PLOTS = {"ablations": ["ablations.png"], "fusion": ["fusion.png"], "relevance": ["relevance.png"],
         "budget": ["budget.png"], "agents-vs-steps": ["agents_vs_steps.png"], "tool-use": ["tool_use.png"],
         "neighborhood": ["neighborhood_calls.png"]}


@pytest.fixture(scope="module")
def clinical(tmp_path_factory):
    """The clinical graph saved to disk and a query file of its four strategy questions."""
    root = tmp_path_factory.mktemp("clinical")
    graph_dir = save_clinical_graph(root / "graph")
    queries = root / "queries.jsonl"
    rows = [{"id": f"q{i}", "query": q, "answer_ids": [a], "template": "t"}
            for i, (q, a) in enumerate([ONE_HOP, SHARED_FINDINGS, TWO_HOP, BROAD])]
    queries.write_text("".join(json.dumps(r) + "\n" for r in rows))
    from ark.graph import load_graph

    return load_graph(graph_dir), queries


def check_report(folder: Path, name: str, model: str = "offline") -> dict:
    """Every PNG is a non-empty PNG, every table has its expected rows, and every row names model and truncation."""
    results = json.loads((folder / "results.json").read_text())
    for file in PLOTS[name]:
        data = (folder / file).read_bytes()
        assert data.startswith(PNG) and len(data) > 2000, file
    assert {f["file"] for f in results["figures"]} == set(PLOTS[name])
    for table, rows in EXPECTED_ROWS[name].items():
        got = results["tables"][table]
        first = [row[0] for row in got["rows"]]
        assert first == ([model] if rows == ["offline"] else rows), (name, table, first)
        model_at, cut_at = got["columns"].index("Model / policy"), got["columns"].index("Truncation")
        assert all(row[model_at] == model and row[cut_at] == "top 20" for row in got["rows"])
    markdown = (folder / "report.md").read_text()
    assert all(f"]({file})" in markdown for file in PLOTS[name])
    if name == "tool-use":  # the trajectories were read: calls counted
        [row] = results["tables"]["figure3"]["rows"]
        assert int(row[2]) > 0 and int(row[3]) > 0, row
    if name == "neighborhood":
        assert sum(int(row[3]) for row in results["tables"]["figure5"]["rows"]) > 0
    return results


@pytest.mark.parametrize("name", [n for n in EXPERIMENTS if n != "relevance"])
def test_each_experiment_writes_its_tables_and_plots_with_the_offline_policy(clinical, tmp_path, name):
    graph, queries = clinical
    base = MethodChoice.make("ark", {"n_agents": 2})
    report, runs = run_experiment(name, graph, base, read_queries(queries).queries, str(queries), tmp_path / "report",
                                  tmp_path / "runs", truncate=20, fraction=1.0, settings=SETTINGS, progress=False)
    results = check_report(tmp_path / "report", name)
    assert results["runs"] and all(Path(r["folder"]).is_dir() for r in results["runs"])
    assert all((Path(r["folder"]) / "config.json").is_file() for r in results["runs"])
    if name == "ablations":  # the tool switches reached the runs
        options = {r["label"]: r["options"]["tools"] for r in results["runs"]}
        assert options["w/o Neighbors"]["neighborhood_tool"] is False
        assert options["Neighbors w/o F"]["neighborhood_filters"] is False


def test_relevance_experiment_compares_bm25_and_dense(clinical, tmp_path):
    pytest.importorskip("sentence_transformers")
    graph, queries = clinical
    run_experiment("relevance", graph, MethodChoice.make("ark", {"n_agents": 1}), read_queries(queries).queries,
                   str(queries), tmp_path / "report", tmp_path / "runs", truncate=20, fraction=1.0, progress=False)
    results = check_report(tmp_path / "report", "relevance")
    assert [r["options"]["relevance"] for r in results["runs"]] == ["bm25", "bm25", "dense"]


def test_rerun_resumes_and_configurations_are_shared(clinical, tmp_path):
    graph, queries = clinical
    base = MethodChoice.make("ark", {"n_agents": 1})
    args = (graph, base, read_queries(queries).queries, str(queries))
    _, fusion = run_experiment("fusion", *args, tmp_path / "fusion", tmp_path / "runs", truncate=20, progress=False)
    _, tool_use = run_experiment("tool-use", *args, tmp_path / "tool-use", tmp_path / "runs", truncate=20,
                                 progress=False)
    assert tool_use[0].folder == fusion[0].folder  # the default configuration is the Voting row's run
    assert tool_use[0].outcome.stats.completed == 0 and tool_use[0].outcome.stats.already_done == 4
    _, again = run_experiment("fusion", *args, tmp_path / "fusion", tmp_path / "runs", truncate=20, progress=False)
    assert all(r.outcome.stats.completed == 0 for r in again)
    assert [r.folder for r in again] == [r.folder for r in fusion]


def test_ablation_subset_is_a_seeded_tenth(clinical, tmp_path):
    graph, queries = clinical
    many = read_queries(queries).queries * 1
    many = [type(q)(f"{q.id}-{i}", q.query, q.answer_ids, q.template) for i in range(5) for q in many]
    report, runs = run_experiment("ablations", graph, MethodChoice.make("ark", {"n_agents": 1}), many, "q.jsonl",
                                  tmp_path / "r", tmp_path / "runs", truncate=20, seed=3, progress=False)
    assert all(r.overall["n"] == 2 for r in runs)  # 10% of 20 queries
    assert "a seeded random 10% of them (seed 3): 2 queries" in report.setting[0]
    assert json.loads((runs[0].folder / "config.json").read_text())["queries"] == "q.jsonl#random-0.1-seed-3"


def test_experiment_command_line(clinical, tmp_path):
    from ark.cli.main import app

    graph, queries = clinical
    result = CliRunner().invoke(app, [
        "experiment", "agents-vs-steps", str(graph.path), "--queries", str(queries), "--out", str(tmp_path / "out"),
        "--runs", str(tmp_path / "runs"), "--t", "2", "--no-progress", "--set", "tools.neighborhood_budget=10"])
    assert result.exit_code == 0, result.output
    results = check_report(tmp_path / "out", "agents-vs-steps")
    assert "tools.neighborhood_budget=10" in " ".join(results["setting"])
    assert all(r["options"]["tools"]["neighborhood_budget"] == 10 for r in results["runs"])
    bad = CliRunner().invoke(app, ["experiment", "tables", str(graph.path), "--queries", str(queries)])
    assert bad.exit_code == 2 and "valid: ablations, fusion" in " ".join(bad.output.split())
    other = CliRunner().invoke(app, ["experiment", "fusion", str(graph.path), "--queries", str(queries),
                                     "--method", "bm25"])
    assert other.exit_code == 2 and "run the ark method" in other.output


def test_an_ablation_runs_end_to_end_with_a_scripted_model(clinical, tmp_path, openai_server):
    """The Table 2 experiment with a real chat client against the loopback server: the model sees the ablated
    toolsets, and every row names the model."""
    graph, queries = clinical

    def respond(body):
        tools = {t["function"]["name"] for t in body["tools"]}
        params = {}
        if "search_in_neighborhood" in tools:
            params = next(t["function"]["parameters"]["properties"] for t in body["tools"]
                          if t["function"]["name"] == "search_in_neighborhood")
        turn = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        marfan = 19  # Marfan syndrome's index in the clinical graph (phenotypes first)
        script = [("search_in_graph", {"query": "Marfan syndrome"})]
        if params:
            call = {"node_index": marfan}
            if "node_types" in params:
                call["node_types"] = ["gene"]
            if "query" in params:
                call["query"] = "fibrillin"
            script.append(("search_in_neighborhood", call))
        script += [("add_to_answer", {"answer_nodes": [{"node_index": 25, "reasoning": "FBN1"}]}), ("finish", {})]
        return tool_reply(script[min(turn, len(script) - 1)])

    openai_server.responder = respond
    settings = resolve_settings(base_url=openai_server.base_url, model="test-model", api_key="k", environ={},
                                config_path=tmp_path / "absent.toml", use_cache=False)
    base = MethodChoice.make("ark", {"n_agents": 1}, MethodContext(llm=OpenAIChatClient(settings)))
    run_experiment("ablations", graph, base, read_queries(queries).queries, str(queries), tmp_path / "report",
                   tmp_path / "runs", truncate=20, fraction=1.0, progress=False)
    results = check_report(tmp_path / "report", "ablations", model="openai:test-model")
    offered = [sorted(t["function"]["name"] for t in r["tools"]) for r in openai_server.requests
               if not any(m.get("role") == "assistant" for m in r["messages"])]
    assert ["add_to_answer", "finish", "search_in_graph"] in offered  # w/o Neighbors
    assert offered.count(["add_to_answer", "finish", "search_in_graph", "search_in_neighborhood"]) == 12
    assert len(openai_server.requests) == 4 * 4 * 4 - 4  # 4 setups x 4 queries x 4 turns (3 without neighbours)
    full = [r for r in results["runs"] if r["label"] == "Full"][0]
    records = read_trajectory_file(Path(full["folder"]) / "trajectories.jsonl")
    calls = [c["name"] for rec in records for t in rec["trajectories"] for s in t["steps"] for c in s["tool_calls"]]
    assert calls.count("search_in_neighborhood") == 4


@pytest.mark.slow
def test_every_experiment_runs_on_hpo_with_the_offline_policy(tmp_path):
    """The experiments end to end on the real HPO graph (a few layperson-synonym questions and a relational one); the
    full-size runs are benchmarks/recipes/hpo_experiments.sh."""
    from ark.loaders import open_graph
    from ark.loaders.queries import Query
    from ark.quiz.lookup import layperson_queries

    graph = open_graph("hpo")  # built into ARK_HOME (the user's cache) on first use
    records = layperson_queries(graph, n=3, seed=1)
    queries = [Query(r["id"], r["query"], r["answer_ids"], r["template"]) for r in records]
    queries.append(Query("marfan", "Which genes are implicated in Marfan syndrome?", ["NCBIGene:2200"], "one_hop"))
    # relevance is left out: its dense row embeds every HPO node first (tens of minutes on a CPU); the clinical-graph
    # test above runs it, and benchmarks/recipes/hpo_experiments.sh runs it on HPO.
    names = [n for n in EXPERIMENTS if n != "relevance"]
    settings = Settings(agents=(1, 2), steps=(5, 20), t=5)
    for name in names:
        run_experiment(name, graph, MethodChoice.make("ark"), queries, "hpo-sample", tmp_path / name,
                       tmp_path / "runs", truncate=20, fraction=1.0, settings=settings, progress=False)
        expected = dict(EXPECTED_ROWS[name])
        if name == "budget":
            expected["figure2"] = [f"n = {a}, T_max = {t}" for a in (1, 2) for t in (5, 20)]
        if name == "agents-vs-steps":
            expected["table8"] = ["1 agent, T_max = 15", "3 agents, T_max = 5"]
        results = json.loads((tmp_path / name / "results.json").read_text())
        for table, rows in expected.items():
            got = [row[0] for row in results["tables"][table]["rows"]]
            assert got == (["offline"] if rows == ["offline"] else rows), (name, table)
        for file in PLOTS[name]:
            assert (tmp_path / name / file).read_bytes().startswith(PNG)


def test_the_experiment_command_runs_under_the_paper_preset_unless_told_otherwise(clinical, tmp_path):
    from ark.cli.main import app

    graph, queries = clinical

    def configs(*flags: str) -> list[dict]:
        out = tmp_path / "-".join(["out", *flags])
        result = CliRunner().invoke(app, ["experiment", "fusion", str(graph.path), "--queries", str(queries),
                                          "--out", str(out), "--runs", str(tmp_path / "runs"), "--no-progress",
                                          *flags])
        assert result.exit_code == 0, result.output
        runs = json.loads((out / "results.json").read_text())["runs"]
        return [json.loads((Path(r["folder"]) / "config.json").read_text()) for r in runs]

    paper = configs()
    assert [c["method_options"]["fusion"] for c in paper] == ["votes", "ordering", "random"]
    assert all(c["preset"] == "paper" and c["method_options"]["fusion_evidence"] is False
               and c["method_options"]["scoring"] == "plain" for c in paper)  # Table 3's votes: the paper's rule
    ours = configs("--preset", "none")
    assert all("preset" not in c and c["method_options"]["scoring"] == "fielded" for c in ours)
    kept = configs("--set", "fusion_evidence=true")  # an option given over the preset stays in every variant
    assert all(c["preset"] == "paper" and "fusion_evidence" not in c["method_options"]
               and c["method_options"]["scoring"] == "plain" for c in kept)
