"""``ark experiment khop-growth``: SeedER's k-hop growth (Figure 3(a), Figure 5) offline, at a tiny size: the
neighbourhood sizes counted exactly on the clinical graph, and the command on HPO writing its labelled report."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from ark.experiments.khop_growth import khop_growth, neighbourhood_sizes
from ark.loaders.queries import Query
from tests.support.graphs import build_clinical_graph


def test_the_neighbourhood_grows_hop_by_hop_over_undirected_edges():
    graph = build_clinical_graph()
    marfan = graph.index_of("OMIM:154700")
    # Hop 1: its 6 findings and FBN1; hop 2 adds the 3 diseases sharing a finding (Loeys-Dietz, Homocystinuria,
    # Ehlers-Danlos) and the findings' 3 parents (eye, skeleton, heart).
    one, two = neighbourhood_sizes(graph, [marfan], 2)
    assert (one, two) == (8, 14)
    reached = {marfan} | {int(j) for j in graph.neighbors(marfan).nodes.tolist()}
    second = reached | {int(k) for j in reached for k in graph.neighbors(j).nodes.tolist()}
    assert two == len(second) and two > one
    assert neighbourhood_sizes(graph, [marfan, marfan], 1) == [8]  # a seed counted once


def test_sizes_over_questions_are_the_mean_and_the_largest():
    graph = build_clinical_graph()
    questions = [Query("a", "Marfan syndrome", []), Query("b", "Hemophilia A bleeding", [])]
    sizes = khop_growth(graph, questions, hops=2, seeds=1, seeds_by="bm25")
    assert [s.hop for s in sizes] == [1, 2]
    assert sizes[0].largest >= sizes[0].mean and sizes[1].mean >= sizes[0].mean
    with pytest.raises(ValueError, match="unknown seeds_by 'cosine'; valid: dense, bm25"):
        khop_growth(graph, questions, seeds_by="cosine")


@pytest.mark.slow
def test_khop_growth_on_hpo_writes_the_offline_report_with_the_papers_words(use_hpo_home, tmp_path, monkeypatch):
    from ark.cli.main import app

    monkeypatch.setenv("COLUMNS", "200")
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": str(i), "query": q, "answer_ids": []}) + "\n" for i, q in
                               enumerate(["Which genes are implicated in Marfan syndrome?", "tall stature"])))
    out = tmp_path / "report"
    result = CliRunner().invoke(app, ["experiment", "khop-growth", "hpo", "-q", str(queries), "--out", str(out),
                                      "--set", "seeds_by=bm25", "--set", "hops=2"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "results.json").read_text())
    table = report["tables"]["khop_growth"]
    assert "offline, no model; seeds by BM25 (ours, not the paper's dense seeds)" in table["caption"]
    assert [row[0] for row in table["rows"]] == ["1", "2"]
    assert all(row[-1] == "plotted, no number" for row in table["rows"])
    assert any("even a 2–3 hop neighborhood can cover a large fraction of the graph" in n for n in report["notes"])
    assert (out / "khop_growth.png").is_file() or not report["figures"]
    bad = CliRunner().invoke(app, ["experiment", "khop-growth", "hpo", "-q", str(queries), "--set", "depth=2"])
    assert bad.exit_code != 0 and "unknown setting 'depth'; valid: hops, seeds, seeds_by" in bad.output
