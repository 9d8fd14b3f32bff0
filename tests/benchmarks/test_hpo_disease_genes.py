"""The disease → gene question file (benchmarks/hpo_disease_genes.py): seeded, answers exactly the disease's
``associated_gene`` neighbours, names no other node bears."""

from __future__ import annotations

import json

import pytest

from benchmarks.hpo_disease_genes import PHRASINGS, main, questions


@pytest.mark.slow
def test_questions_are_seeded_and_their_answers_are_the_diseases_genes(use_hpo_home, tmp_path):
    from ark.loaders import open_graph

    first = questions("hpo", 12, seed=3)
    assert first == questions("hpo", 12, seed=3) and first != questions("hpo", 12, seed=4)
    graph = open_graph("hpo")
    names = [graph.name(i).lower() for i in range(graph.num_nodes)]
    for row in first:
        name = next(p for p in PHRASINGS if _fits(p, row["query"]))
        disease = _between(name, row["query"])
        assert names.count(disease.lower()) == 1
        index = names.index(disease.lower())
        genes = {graph.node_id(g) for g in graph.neighbors(index, "associated_gene", "out").nodes.tolist()}
        assert set(row["answer_ids"]) == genes and 1 <= len(genes) <= 10
    out = tmp_path / "q.jsonl"
    assert main(["--out", str(out), "--n", "5", "--seed", "3"]) == 0
    assert [json.loads(line) for line in out.read_text().splitlines()] == questions("hpo", 5, seed=3)


def _fits(phrasing: str, query: str) -> bool:
    head, tail = phrasing.split("{name}")
    return query.startswith(head) and query.endswith(tail)


def _between(phrasing: str, query: str) -> str:
    head, tail = phrasing.split("{name}")
    return query[len(head):len(query) - len(tail)]
