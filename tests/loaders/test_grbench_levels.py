"""GRBench difficulty levels: the shipped table (derived from Graph-CoT's notebooks) and the script that derives it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from ark.graph.info import GraphInfo
from ark.loaders.grbench import LEVELS_FILE, UNLABELLED, grbench_level, grbench_levels
from benchmarks.grbench_levels_derive import derive

# released question counts per graph (Graph-CoT data/processed_data/*/data.json; GraphScout Table 4)
RELEASED = {"amazon": 200, "biomedical": 270, "dblp": 150, "goodreads": 240, "legal": 180}


def test_shipped_table_cites_its_source_and_labels_the_verified_domains():
    table = json.loads(LEVELS_FILE.read_text())
    assert len(table["commit"]) == 40 and table["commit"] in table["source"]
    assert all(file.endswith("design_questions.ipynb") for file in table["files"])
    levels = grbench_levels()
    assert set(levels) == set(RELEASED)  # the five MAPLE graphs are left out, with the reason written down
    assert set(table["left_out"]) == {"Biology", "Chemistry", "Materials_Science", "Medicine", "Physics"}
    for domain, ranges in levels.items():
        conflicts = table["conflicts"].get(domain, [])
        covered = sorted([(a, b) for a, b, _ in ranges] + [(a, b) for a, b, _ in conflicts])
        assert covered[0][0] == 0 and covered[-1][1] == RELEASED[domain] - 1  # every qid: labelled or a conflict
        assert all(later[0] == earlier[1] + 1 for earlier, later in itertools.pairwise(covered))
    assert "hard" not in {level for _, _, level in levels["biomedical"]}  # Healthcare has no hard questions


def test_labelled_questions_get_their_level_and_the_rest_stay_unlabelled():
    levels = grbench_levels()
    assert grbench_level("amazon", "0", levels) == "easy"
    assert grbench_level("amazon", "120", levels) == "medium"
    assert grbench_level("amazon", "165", levels) == "hard"
    assert grbench_level("goodreads", "235", levels) == "hard"
    assert grbench_level("legal", "85", levels) == UNLABELLED  # heading and cell comment disagree
    assert grbench_level("biomedical", "145", levels) == UNLABELLED
    assert grbench_level("Physics", "0", levels) == UNLABELLED  # a left-out domain
    assert grbench_level("amazon", "200", levels) == UNLABELLED  # past the released questions


def notebook(cells: list[tuple[str, str]]) -> str:
    return json.dumps({"cells": [{"cell_type": kind, "source": [text]} for kind, text in cells]})


ADD = "all_generated_data[(question, answer)] = generated_data\n"


def write_checkout(root: Path, order: list[str]) -> None:
    cells = [("code", "k = 2\n"), ("markdown", "### One-hop (easy)"),
             ("code", 'question = "Who wrote {book}?"\nanswer = "{a}"\n' + ADD),
             ("code", '## question (medium): count\nquestion = "How many books has {author}?"\nanswer = "{num}"\n'
                      + ADD),
             ("markdown", "## Inductive reasoning (hard)"),
             ("code", 'question = "What book should {user} read next?"\nanswer = "{b}"\n' + ADD)]
    questions = {"who": ["Who wrote Dune?", "Tell me who wrote Emma"], "count": ["How many books has Austen?", "7"],
                 "next": ["What book should Ann read next?", "Recommend Bob a book"]}
    answers = {"who": "X", "count": "3", "next": "Y"}
    for folder in ("amazon", "biomedical", "dblp", "goodreads", "legal", "maple"):
        (root / "data/processed_data" / folder).mkdir(parents=True)
        (root / "data/processed_data" / folder / "design_questions.ipynb").write_text(notebook(cells))
    graphs = ["amazon", "biomedical", "dblp", "goodreads", "legal"] + [
        f"maple/{name}" for name in ("Biology", "Chemistry", "Materials_Science", "Medicine", "Physics")]
    for graph in graphs:
        lines, qid = [], 0
        for key in (order if graph == "goodreads" else ["who", "count", "next"]):
            for text in questions[key][:1] + [questions[key][1] if key != "count" else "How many does Bo have?"]:
                lines.append(json.dumps({"qid": str(qid), "question": text, "answer": answers[key]}))
                qid += 1
        (root / "data/processed_data" / graph).mkdir(parents=True, exist_ok=True)
        (root / "data/processed_data" / graph / "data.json").write_text("\n".join(lines) + "\n")


def test_derivation_labels_by_section_finds_conflicts_and_leaves_out_a_misordered_domain(tmp_path):
    write_checkout(tmp_path, order=["who", "next", "count"])  # goodreads released out of the notebook's order
    derived = derive(tmp_path, show=False)
    assert derived["domains"]["amazon"] == [[0, 1, "easy"], [4, 5, "hard"]]
    assert derived["conflicts"]["amazon"] == [[2, 3, "heading (cell 1): easy; comment (cell 3): medium"]]
    assert "goodreads" not in derived["domains"]
    assert any("verbatim wording" in problem for problem in derived["left_out"]["goodreads"])


def test_every_released_graph_folder_is_a_graphscout_table_1_domain():
    from types import SimpleNamespace

    from ark.experiments.graphscout_table import paper_domain

    expected = {"biomedical": "Healthcare", "goodreads": "Literature", "dblp": "Academic", "amazon": "E-Commerce",
                "legal": "Legal", "Biology": "Academic", "Chemistry": "Academic", "Materials_Science": "Academic",
                "Medicine": "Academic", "Physics": "Academic"}
    for folder, domain in expected.items():
        assert paper_domain(SimpleNamespace(info=GraphInfo(name=folder), path=None)) == (domain, True)
