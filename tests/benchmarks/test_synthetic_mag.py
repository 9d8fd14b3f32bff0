"""The synthetic MAG-shaped graph of benchmarks/synthetic_mag.py at a tiny scale: shape, determinism, import."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.graph import KnowledgeGraph, load_graph
from benchmarks.synthetic_mag import MagShape, generate, mag_questions

SCALE = 0.0005  # 350 papers, 552 authors, 4 institutions, 30 fields, ~10k edges


def digest(folder: Path) -> str:
    return hashlib.sha256(b"".join((folder / name).read_bytes() for name in ("nodes.parquet", "edges.parquet",
                                                                               "graph.json"))).hexdigest()


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> tuple[Path, KnowledgeGraph, dict]:
    root = tmp_path_factory.mktemp("smag")
    stats = generate(root / "src", scale=SCALE, seed=3)
    result = CliRunner().invoke(app, ["graph", "import", "parquet", str(root / "src"), "--out", str(root / "graph")])
    assert result.exit_code == 0, result.output
    return root, load_graph(root / "graph"), stats


def test_same_seed_same_bytes_other_seed_other_graph(imported, tmp_path: Path) -> None:
    root, _, _ = imported
    generate(tmp_path / "again", scale=SCALE, seed=3)
    generate(tmp_path / "other", scale=SCALE, seed=4)
    assert digest(tmp_path / "again") == digest(root / "src")
    assert digest(tmp_path / "other") != digest(root / "src")


def test_shape_follows_stark_mag(imported) -> None:
    root, graph, stats = imported
    shape = MagShape().scaled(SCALE)
    assert graph.type_counts() == {"paper": shape.papers, "author": shape.authors,
                                   "institution": shape.institutions, "field_of_study": shape.fields}
    assert {(t.source_type, t.relation, t.target_type) for t in graph.schema} == {
        ("author", "writes", "paper"), ("paper", "cites", "paper"), ("paper", "has_topic", "field_of_study"),
        ("author", "affiliated_with", "institution")}
    written = sum(r.count for r in shape.relations)
    assert stats["edges"] <= written and 0.85 * written < graph.num_edges <= stats["edges"]  # repeats dropped
    papers = graph.nodes_of_type("paper")
    assert all(len(graph.neighbors(int(p), "has_topic", "out")) >= 1 for p in papers)
    assert all(len(graph.neighbors(int(p), "writes", "in")) >= 1 for p in papers)
    # Heavy tails: the most popular field holds a large share of all topic links.
    fields = graph.nodes_of_type("field_of_study")
    topic_degree = np.array([len(graph.neighbors(int(f), "has_topic", "in")) for f in fields])
    assert topic_degree.max() > 4 * np.median(topic_degree)
    # Text: about 285 whitespace tokens per paper (title + abstract), counted as the generator reports them.
    texts = pq.read_table(root / "src" / "nodes.parquet").column("properties").to_pylist()
    assert stats["tokens"] > 250 * shape.papers and '"abstract": "' in texts[0]
    assert graph.text(int(papers[0])).split("\n")[1].startswith("abstract: ")


def test_questions_have_exact_answers(imported) -> None:
    _, graph, _ = imported
    questions = mag_questions(graph, 12, seed=1, max_answers=60)  # a tiny graph's institutions cover most papers
    assert len(questions) == 12 and {q["template"] for q in questions} == {"author_field", "cites_field",
                                                                           "institution_field"}
    assert mag_questions(graph, 12, seed=1, max_answers=60) == questions
    relation = {"author_field": ("writes", "out"), "cites_field": ("cites", "in"),
                "institution_field": ("affiliated_with", "in")}
    for question in questions:
        anchor, field = (graph.index_of(i) for i in question["anchor_ids"])
        on_field = set(graph.neighbors(field, "has_topic", "in").nodes.tolist())
        linked = set(graph.neighbors(anchor, *relation[question["template"]]).nodes.tolist())
        if question["template"] == "institution_field":  # members of the institution, then their papers
            linked = {int(p) for a in linked for p in graph.neighbors(a, "writes", "out").nodes.tolist()}
        expected = sorted(graph.node_id(i) for i in linked & on_field)
        assert sorted(question["answer_ids"]) == expected and 1 <= len(expected) <= 60
        assert graph.name(anchor) in question["query"] and graph.name(field) in question["query"]
