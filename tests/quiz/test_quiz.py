"""`ark quiz`: exact answers (re-derived independently), determinism, anchor-disjoint splits, degenerate schemas."""

from __future__ import annotations

import asyncio
import json
import re
from collections import defaultdict

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from ark.cli.quiz_cmd import register
from ark.graph import EdgeTable, KnowledgeGraph, NodeTable, build_graph, build_graph_from_arrays, save_graph
from ark.quiz import QuizConfig, generate_quiz, load_phrasebook
from ark.quiz.output import template_table
from ark.quiz.paraphrase import paraphrase_all
from ark.storage.jsonl import write_jsonl_atomic
from tests.support.openai_server import text_reply

VOCAB = [
    "amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "harbor", "indigo", "jasper",
    "kelp", "lagoon", "marble", "nectar", "onyx", "pewter", "quartz", "russet", "sienna", "topaz",
    "umber", "velvet", "willow", "xenon", "yarrow", "zephyr"
]


# --------------------------------------------------------------------------- fixtures
def synthetic_tables(seed: int = 7) -> tuple[NodeTable, EdgeTable]:
    """Drugs treat diseases, diseases involve genes, genes interact: random edges, texts from a small vocabulary."""
    rng = np.random.default_rng(seed)
    ids, types, names, texts = [], [], [], []
    for prefix, node_type, count in (("G", "gene", 40), ("D", "disease", 50), ("R", "drug", 30)):
        for k in range(count):
            ids.append(f"{prefix}:{k}")
            types.append(node_type)
            names.append(f"{node_type.title()} {k}")
            body = " ".join(rng.choice(VOCAB, size=5))
            texts.append(f"{node_type.title()} {k}. Notes: {body}.")
    src, dst, rel = [], [], []
    for _ in range(160):
        src.append(f"R:{rng.integers(30)}"), dst.append(f"D:{rng.integers(50)}"), rel.append("treats")
    for _ in range(160):
        src.append(f"D:{rng.integers(50)}"), dst.append(f"G:{rng.integers(40)}"), rel.append("involves")
    for _ in range(90):
        src.append(f"G:{rng.integers(40)}"), dst.append(f"G:{rng.integers(40)}"), rel.append("interacts_with")
    return NodeTable(ids, types, names, texts), EdgeTable(src, dst, rel)


@pytest.fixture(scope="module")
def graph() -> KnowledgeGraph:
    nodes, edges = synthetic_tables()
    return build_graph(nodes, edges, metadata={"name": "toy"})


# --------------------------------------------------------------------------- independent oracle
class SetOracle:
    """Answers re-derived from ``graph.edges()`` with plain Python sets and a regex (no code shared with ark.quiz)."""

    def __init__(self, g: KnowledgeGraph) -> None:
        self.g = g
        self.adjacent: dict[tuple[int, str, str], set[int]] = defaultdict(set)
        for s, d, r in zip(*(a.tolist() for a in g.edges()), strict=True):
            name = g.relation_types[r]
            self.adjacent[(s, name, "out")].add(d)
            self.adjacent[(d, name, "in")].add(s)

    def answers(self, params: dict) -> set[str]:
        g = self.g
        anchors = {g.index_of(c["anchor_id"]) for c in params["constraints"]}
        result: set[int] | None = None
        for constraint in params["constraints"]:
            frontier = {g.index_of(constraint["anchor_id"])}
            for step in constraint["path"]:
                frontier = {m for i in frontier for m in self.adjacent[(i, step["relation"], step["direction"])]
                            if g.node_type(m) == step["node_type"]}
            result = frontier if result is None else result & frontier
        assert result is not None
        found = {i for i in result if g.node_type(i) == params["answer_type"]} - anchors
        phrase = params.get("text_phrase")
        if phrase:
            pattern = r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, phrase.lower().split())) + r"(?![^\W_])"
            found = {i for i in found if re.search(pattern, g.text(i).lower())}
        return {g.node_id(i) for i in found}


def check_questions(g: KnowledgeGraph, questions: list[dict], max_answers: int = 20) -> None:
    oracle = SetOracle(g)
    for q in questions:
        expected = oracle.answers(q["params"])
        assert set(q["answer_ids"]) == expected, q["query"]
        assert 1 <= len(q["answer_ids"]) <= max_answers
        anchors = [c["anchor_id"] for c in q["params"]["constraints"]]
        assert q["clue_ids"][: len(anchors)] == anchors
        for name in q["anchor_names"]:
            assert name in q["query"]


# --------------------------------------------------------------------------- tests
def test_answers_match_an_independent_traversal(graph):
    result = generate_quiz(graph, QuizConfig(n=150, seed=3))
    assert len(result.questions) >= 100
    assert {q["template"] for q in result.questions} >= {"one_hop", "one_hop_text", "two_anchor", "two_hop"}
    check_questions(graph, result.questions)


def test_text_constraint_narrows_the_relational_answers(graph):
    result = generate_quiz(graph, QuizConfig(n=60, seed=5, mix={"one_hop_text": 1.0}))
    oracle = SetOracle(graph)
    assert result.questions
    for q in result.questions:
        relational = oracle.answers({**q["params"], "text_phrase": None})
        assert set(q["answer_ids"]) < relational  # the phrase removes some structural answers
        assert f"'{q['params']['text_phrase']}'" in q["query"]


def test_two_hop_clues_are_the_intermediate_nodes_on_answer_paths(graph):
    result = generate_quiz(graph, QuizConfig(n=30, seed=2, mix={"two_hop": 1.0}))
    oracle = SetOracle(graph)
    assert result.questions
    for q in result.questions:
        constraint = q["params"]["constraints"][0]
        first, second = constraint["path"]
        middle = {graph.node_id(m) for m in oracle.adjacent[(graph.index_of(constraint["anchor_id"]),
                                                             first["relation"], first["direction"])]
                  if graph.node_type(m) == first["node_type"]}
        on_paths = {m for m in middle if oracle.answers({"answer_type": q["params"]["answer_type"],
                                                         "constraints": [{"anchor_id": m, "path": [second]}]})
                    & set(q["answer_ids"])}
        assert set(q["clue_ids"][1:]) == on_paths


def test_same_seed_same_bytes_and_other_seed_differs(graph, tmp_path):
    paths = []
    for k, seed in enumerate((11, 11, 12)):
        result = generate_quiz(graph, QuizConfig(n=80, seed=seed))
        paths.append(write_jsonl_atomic(tmp_path / f"run{k}.jsonl", result.questions))
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()


def test_splits_do_not_share_anchors(graph):
    result = generate_quiz(graph, QuizConfig(n=150, seed=4))
    anchors_by_split: dict[str, set[str]] = defaultdict(set)
    for q in result.questions:
        anchors_by_split[q["split"]].update(c["anchor_id"] for c in q["params"]["constraints"])
    assert set(anchors_by_split) == {"train", "val", "test"}
    assert not anchors_by_split["train"] & anchors_by_split["test"]
    assert not anchors_by_split["train"] & anchors_by_split["val"]
    assert not anchors_by_split["val"] & anchors_by_split["test"]


def test_degenerate_schema_is_skipped_with_notes():
    """A relation type without edges and a node type whose nodes have no text: notes, and questions still."""
    nodes, edges = synthetic_tables()
    texts = ["" if t == "drug" else x for t, x in zip(nodes.types, nodes.texts, strict=True)]
    table = NodeTable(nodes.ids, nodes.types, nodes.names, texts).to_arrow()
    base = build_graph(nodes, edges)
    type_codes = np.asarray([base.node_types.index(t) for t in nodes.types])
    src, dst, rel = base.edges()
    g = build_graph_from_arrays(table, type_codes, base.node_types, src, dst, rel,
                                base.relation_types + ["contraindicated_for"], metadata={"name": "degenerate"})
    result = generate_quiz(g, QuizConfig(n=60, seed=1))
    notes = " | ".join(result.notes)
    assert "'contraindicated_for' has no edges" in notes
    assert "'drug' has no usable text" in notes
    assert result.questions
    assert not [q for q in result.questions if q["params"]["text_phrase"] and q["params"]["answer_type"] == "drug"]
    check_questions(g, result.questions)


def test_graph_without_any_text_skips_text_templates():
    nodes, edges = synthetic_tables()
    empty = NodeTable(nodes.ids, nodes.types, nodes.names, [""] * len(nodes.ids))
    g = build_graph(empty, edges)
    result = generate_quiz(g, QuizConfig(n=40, seed=1))
    assert any("'one_hop_text' skipped" in note for note in result.notes)
    assert result.questions and all(q["params"]["text_phrase"] is None for q in result.questions)


def test_ambiguous_names_are_never_anchors():
    nodes, edges = synthetic_tables()
    names = list(nodes.names)
    names[nodes.ids.index("D:1")] = names[nodes.ids.index("D:2")]  # two diseases now share a name
    g = build_graph(NodeTable(nodes.ids, nodes.types, names, nodes.texts), edges)
    result = generate_quiz(g, QuizConfig(n=150, seed=6))
    anchors = {c["anchor_id"] for q in result.questions for c in q["params"]["constraints"]}
    assert anchors and not anchors & {"D:1", "D:2"}


def test_bad_mix_names_the_template_and_the_valid_ones():
    with pytest.raises(ValueError, match=r"'three_hop'.*valid: one_hop"):
        QuizConfig(mix={"three_hop": 1.0})


def test_phrase_file_is_used_and_validated(graph, tmp_path):
    good = tmp_path / "toy.toml"
    good.write_text('[types.drug]\nsingular = "medicine"\nplural = "medicines"\n\n[[relations]]\nname = "treats"\n'
                    'forward = ["are prescribed for {anchor}"]\n', encoding="utf-8")
    result = generate_quiz(graph, QuizConfig(n=40, seed=8, mix={"one_hop": 1.0}), load_phrasebook(good))
    drug_questions = [q["query"] for q in result.questions if q["params"]["answer_type"] == "drug"]
    assert drug_questions and all("medicines" in q and "are prescribed for" in q for q in drug_questions)
    # Relations the file does not mention fall back to a phrasing built from the relation name.
    assert any("'involves'" in q["query"] for q in result.questions)
    bad = tmp_path / "bad.toml"
    bad.write_text('[[relations]]\nname = "treats"\nforward = ["treat something"]\n', encoding="utf-8")
    with pytest.raises(ValueError, match="bad.toml.*'treats'.*anchor"):
        load_phrasebook(bad)


def test_template_table_counts_and_answer_sizes(graph):
    questions = generate_quiz(graph, QuizConfig(n=60, seed=9)).questions
    rows = {row.template: row for row in template_table(questions)}
    assert rows["all"].count == len(questions) == sum(r.count for name, r in rows.items() if name != "all")
    sizes = [len(q["answer_ids"]) for q in questions if q["template"] == "one_hop"]
    assert rows["one_hop"].max_answers == max(sizes)
    assert rows["one_hop"].mean_answers == pytest.approx(sum(sizes) / len(sizes))


def test_cli_writes_questions_splits_and_table(graph, tmp_path):
    graph_dir = save_graph(graph, tmp_path / "toy-graph")
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)  # two commands, so "quiz" is addressed by name as under `ark`
    out, split_dir = tmp_path / "quiz.jsonl", tmp_path / "splits"
    args = ["quiz", str(graph_dir), "--n", "50", "--seed", "2", "--out", str(out), "--split-dir", str(split_dir)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "one_hop" in result.output and "median" in result.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 50
    assert {"id", "query", "answer_ids", "template", "clue_ids", "params", "split"} <= set(lines[0])
    per_split = {p.stem: len(p.read_text(encoding="utf-8").splitlines()) for p in split_dir.glob("*.jsonl")}
    assert sum(per_split.values()) == 50 and set(per_split) == {"train", "val", "test"}
    bad = CliRunner().invoke(app, ["quiz", str(graph_dir), "--out", str(out), "--mix", "one_hop"])
    assert bad.exit_code == 2 and "TEMPLATE=WEIGHT" in bad.output


def test_paraphrases_kept_only_when_faithful(openai_server, tmp_path):
    from ark.llm import OpenAIChatClient, resolve_settings

    records = [
        {"query": "Which diseases present with Seizure?", "anchor_names": ["Seizure"], "params": {}},
        {"query": "Which genes are linked to Ataxia and mention 'ion'?", "anchor_names": ["Ataxia"],
         "params": {"text_phrase": "ion"}},
    ]
    openai_server.add_conversation("Seizure", text_reply("What illnesses show seizure as a symptom?"))
    # 'ions' is not the word 'ion': the paraphrase dropped the textual constraint.
    openai_server.add_conversation("Ataxia", text_reply("What genes relate to ataxia and mention ions?"))
    settings = resolve_settings(base_url=openai_server.base_url, model="test-model", use_cache=False,
                                environ={}, config_path=tmp_path / "absent.toml")
    kept = asyncio.run(paraphrase_all(OpenAIChatClient(settings), records))
    assert kept == 1
    assert records[0]["query_paraphrase"] == "What illnesses show seizure as a symptom?"
    assert records[1]["query_paraphrase"] is None
    assert records[0]["query"] == "Which diseases present with Seizure?"
    assert openai_server.requests[0].get("tools") is None


@pytest.mark.slow
def test_hpo_answers_rederived_for_a_sample(use_hpo_home):
    from ark.loaders import open_graph
    from ark.quiz.recipes import recipe

    g = open_graph("hpo")
    config = recipe("hpo")
    result = generate_quiz(g, QuizConfig(n=300, seed=config.seed, mix=config.mix))
    assert len(result.questions) == 300 and not result.notes
    sample = [result.questions[i] for i in np.random.default_rng(0).choice(300, size=80, replace=False)]
    check_questions(g, sample)




def _flat(text: str) -> str:
    """``text`` without whitespace or box lines, so a check survives the wrapping of rich's error boxes."""
    return re.sub(r"[\s│╭╮╰╯─]+", "", text)


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--seed", "-1"], "'--seed':Inputshouldbegreaterthanorequalto0"),
        (["--mix", "one_hop=inf"], "'one_hop'mustbeafinitenumber>=0,gotinf"),
        (["--mix", "one_hop=nan,two_hop=1"], "'one_hop'mustbeafinitenumber>=0,gotnan"),
        (["--mix", "one_hop=-0.5"], "'one_hop'mustbeafinitenumber>=0,got-0.5"),
        (["--mix", "one_hop=0,two_hop=0"], "addupto"),
        (["--mix", "one_hop=1e308,two_hop=1e308"], "addupto"),
    ],
)
def test_cli_rejects_bad_seed_and_weights_with_a_clear_message(graph, tmp_path, args, expected):
    graph_dir = save_graph(graph, tmp_path / "toy-graph")
    app = typer.Typer()
    register(app)
    app.command("noop")(lambda: None)
    out = tmp_path / "quiz.jsonl"
    result = CliRunner().invoke(app, ["quiz", str(graph_dir), "--n", "20", "--out", str(out), *args])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert expected in _flat(result.output)
    assert not out.exists()


def test_config_rejects_a_negative_seed_and_lists_templates_for_an_empty_mix():
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got -3"):
        QuizConfig(seed=-3)
    with pytest.raises(ValueError, match=r"give at least one of one_hop.*positive weight"):
        QuizConfig(mix={"one_hop": 0.0})
