"""STaRK: knowledge bases from a synthetic ``processed/`` fixture, question files from the real releases."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from ark.graph import GraphValidationError, KnowledgeGraph, load_graph
from ark.loaders.documents import relational_document
from ark.loaders.queries import Query, read_query_jsonl
from ark.loaders.stark import download_stark_skb, import_stark, load_stark_skb, stark_processed_dir
from ark.loaders.stark_qa import available_splits, load_stark_qa

SHARED = Path(os.environ.get("ARK_SHARED", Path(__file__).parents[3] / "shared"))
STARK_QA = SHARED / "data" / "stark"
needs_shared = pytest.mark.skipif(not STARK_QA.is_dir(), reason=f"STaRK question files not found at {STARK_QA}")


def write_stark_fixture(root: Path, name: str) -> Path:
    """The tiny knowledge base ``name`` under ``root``; skips when torch (the 'stark' extra) is missing."""
    pytest.importorskip("torch", reason="STaRK .pt files need torch (the 'stark' extra)")
    from tests.fixtures.make_stark_fixture import write_stark_fixture as write

    return write(root, name)


@pytest.fixture(scope="module")
def skbs(tmp_path_factory) -> dict[str, KnowledgeGraph]:
    root = tmp_path_factory.mktemp("stark")
    return {name: load_stark_skb(name, write_stark_fixture(root / name, name)) for name in ("prime", "mag", "amazon")}


def neighbor_ids(graph: KnowledgeGraph, node: str, relation: str, direction: str = "both") -> list[str]:
    found = graph.neighbors(graph.index_of(node), relation, direction)  # type: ignore[arg-type]
    return [graph.node_id(int(n)) for n in found.nodes]


def test_prime_nodes_types_relations_and_documents(skbs) -> None:
    graph = skbs["prime"]
    assert graph.num_nodes == 6 and [graph.node_id(i) for i in range(6)] == ["0", "1", "2", "3", "4", "5"]
    assert graph.node_types[:2] == ["disease", "gene/protein"] and len(graph.relation_types) == 18
    assert [graph.node_type(i) for i in range(6)] == [
        "disease", "gene/protein", "drug", "effect/phenotype", "anatomy", "exposure"
    ]
    assert graph.num_edges == 8  # 4 pairs stored both ways; the repeated 0->1 edge is kept once
    assert neighbor_ids(graph, "0", "associated with", "out") == ["1"]
    assert neighbor_ids(graph, "0", "associated with", "in") == ["1"]
    assert graph.name(1) == "SCN1A"
    assert graph.text(0) == (
        "- name: epilepsy\n- type: disease\n- source: MONDO\n- details:\n"
        "  - mondo_definition: A brain disorder with seizures.\n"
    )
    assert graph.text(1) == (
        "- name: SCN1A\n- type: gene/protein\n- source: NCBI\n- details:\n"
        "  - name (gene name): sodium channel\n"
        "  - alias (other gene names): ['FEB3', 'GEFSP2']\n"
        "  - genomic_pos (genomic position): {'chr': '2', 'start': 1}\n"
        "  - generif (PubMed text): causes Dravet; fever seizures\n"
        "  - interpro (protein family and classification information): ['Ion transport']\n"
        "  - summary (protein summary text): Voltage-gated channel.\n"
        "  - query: SCN1A\n"
    )
    assert graph.text(2).endswith("- details:\n  - description: An anticonvulsant.\n  - state: solid\n")
    assert graph.text(4) == "- name: brain\n- type: anatomy\n- source: UBERON\n"  # empty details: no block
    assert graph.properties(0) == {"id": "MONDO:1", "type": "disease", "name": "epilepsy", "source": "MONDO"}


def test_mag_uses_builtin_type_tables_and_keeps_citation_direction(skbs) -> None:
    graph = skbs["mag"]
    assert graph.node_types == ["author", "institution", "field_of_study", "paper"]
    assert graph.relation_types[1] == "paper___cites___paper"
    assert neighbor_ids(graph, "3", "paper___cites___paper", "out") == ["4"]
    assert neighbor_ids(graph, "3", "paper___cites___paper", "in") == []
    assert neighbor_ids(graph, "4", "paper___cites___paper") == ["3"]
    assert graph.text(0) == "- author name: Ada Lovelace\n- author paper count: 3\n"
    assert graph.text(1) == " - institution: Imperial College\n- institution citation count: 50\n"
    assert graph.text(2) == " - field of study: Optics\n- field paper count: 10\n- field citation count: 20\n"
    assert graph.text(3) == (
        " - paper title: Light in fibres\n - abstract: We study light.\n - publication date: 2001-02-03\n"
        " - journal: Nature\n"
    )
    assert graph.text(4) == " - paper title: Learning lenses\n - abstract: Lenses are learned.\n - venue: ICML\n"
    assert [graph.name(i) for i in range(5)] == [
        "Ada Lovelace", "Imperial College", "Optics", "Light in fibres", "Learning lenses"
    ]


def test_amazon_reads_the_cache_folder_and_formats_products(skbs, tmp_path: Path) -> None:
    graph = skbs["amazon"]
    assert graph.num_nodes == 5 and graph.type_counts() == {"product": 2, "brand": 1, "category": 1, "color": 1}
    assert stark_processed_dir("amazon", tmp_path) == tmp_path / "processed" / "cache" / "brand-category-color"
    assert graph.text(0) == (
        "- product: Yoga pants\n- brand: Acme\n- dimensions: 10 x 5 x 2 inches\n- weight: 8 ounces\n"
        "- description: Great pants\n- features: \n#1: Soft fabric\n#3: Machine wash\n"
        '- reviews: \n#2:\nsummary: great\ntext: "Love them."\n#1:\nsummary: ok\ntext: "Fine pants."\n'
        '#3:\nsummary: meh\ntext: "Thin."\n'
        '- Q&A: \n#1:\nquestion: "Stretchy?"\nanswer: "Yes"\n#2:\nquestion: "Pockets?"\nanswer: "One"\n'
    )
    mat = graph.text(1)
    assert mat.startswith('- product: Mat\n- reviews: \n#30:\nsummary: s29\ntext: "t29"\n#29:')
    assert mat.count("summary: ") == 27 and mat.count("question: ") == 27  # STaRK's off-by-two cap
    assert [graph.text(i) for i in (2, 3, 4)] == ["brand name: Acme", "category name: yoga", "color name: black"]
    assert [graph.name(i) for i in range(5)] == ["Yoga pants", "Mat", "Acme", "yoga", "black"]
    assert neighbor_ids(graph, "0", "also_buy") == ["1"] and neighbor_ids(graph, "0", "also_view") == ["1"]


def test_amazon_paper_era_documents_have_no_dimensions(tmp_path: Path) -> None:
    graph = load_stark_skb("amazon", write_stark_fixture(tmp_path, "amazon"), amazon_dimensions=False)
    assert graph.text(0).startswith("- product: Yoga pants\n- brand: Acme\n- description: Great pants\n")


def test_relational_document_lists_neighbors_by_relation_and_type(skbs) -> None:
    prime = skbs["prime"]
    assert relational_document(prime, 0) == prime.text(0) + (
        "- relations:\n  indication: {drug: (Valproate),}\n  associated_with: {gene/protein: (SCN1A),}\n"
        "  phenotype_present: {effect/phenotype: (Seizure),}"
    )
    assert relational_document(prime, 5) == prime.text(5)  # isolated node
    amazon = skbs["amazon"]
    assert relational_document(amazon, 3).endswith("- relations:\n  has_category: {product: (Yoga pants, Mat),}")
    capped = relational_document(amazon, 3, max_neighbors_per_relation=1)
    assert capped == "category name: yoga\n- relations:\n  has_category: {product: (Yoga pants),}"


def test_import_stark_round_trips(tmp_path: Path, skbs) -> None:
    root = write_stark_fixture(tmp_path / "prime", "prime")
    loaded = load_graph(import_stark("primekg", root, tmp_path / "out"))
    original = skbs["prime"]
    assert [loaded.text(i) for i in range(6)] == [original.text(i) for i in range(6)]
    assert loaded.schema == original.schema and loaded.metadata["name"] == "stark-prime"


def _write_tensor(path: Path, value: list) -> None:
    import torch

    torch.save(torch.tensor(value), path)


def test_bad_stark_inputs_are_reported_and_nothing_is_written(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown STaRK dataset 'pubmed'; valid: prime, mag, amazon"):
        load_stark_skb("pubmed", tmp_path)
    with pytest.raises(FileNotFoundError, match="STaRK processed folder not found"):
        load_stark_skb("mag", tmp_path / "nowhere")
    root = write_stark_fixture(tmp_path / "mag", "mag")
    folder = root / "processed"
    (folder / "edge_types.pt").unlink()
    with pytest.raises(FileNotFoundError, match=r"missing STaRK file\(s\) edge_types\.pt"):
        load_stark_skb("mag", root)
    _write_tensor(folder / "edge_types.pt", [0, 1, 2, 7, 9])
    with pytest.raises(GraphValidationError, match=r"edge_types\.pt: 2 row\(s\) have relation code\(s\) \[7, 9\]"):
        import_stark("mag", root, tmp_path / "out")
    _write_tensor(folder / "edge_types.pt", [0, 1, 2, 3, 3])
    _write_tensor(folder / "edge_index.pt", [[0, 3, 3, 0, 0], [1, 4, 2, 3, 5]])
    with pytest.raises(GraphValidationError, match=r"1 edge\(s\) point outside node ids 0\.\.4: edge 4: 0->5"):
        import_stark("mag", root, tmp_path / "out")
    _write_tensor(folder / "edge_index.pt", [[0, 3], [1, 4]])
    with pytest.raises(GraphValidationError, match=r"expected shape \[2, 5\]"):
        import_stark("mag", root, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_download_without_huggingface_hub_names_the_install(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(ImportError, match=r"pip install huggingface_hub.*network"):
        download_stark_skb("prime", tmp_path)
    assert not any(tmp_path.iterdir())


# ------------------------------------------------------------------------------------------ questions
# Sizes counted in the released files (shared/data/stark, = stark.md §2 table; Prime's human set has 109 there).
SIZES = {
    "amazon": (9100, {"train": 5910, "val": 1548, "test": 1642}, 81),
    "mag": (13323, {"train": 7993, "val": 2665, "test": 2665}, 84),
    "primekg": (11204, {"train": 6162, "val": 2241, "test": 2801}, 109),
}


@needs_shared
@pytest.mark.parametrize("dataset", list(SIZES))
def test_real_question_files_load_with_documented_sizes(dataset: str) -> None:
    folder = STARK_QA / dataset
    total, splits, human = SIZES[dataset]
    everything = load_stark_qa(folder)
    assert len(everything) == total
    assert [int(q.id) for q in everything] == sorted(int(q.id) for q in everything)
    seen: set[str] = set()
    for split, size in splits.items():
        queries = load_stark_qa(folder, split)
        assert len(queries) == size
        seen |= {q.id for q in queries}
    assert len(seen) == total  # the three splits partition the synthesized questions
    human_queries = load_stark_qa(folder, human=True)
    assert len(human_queries) == human and all(q.template == "human" for q in human_queries)
    assert all(q.answer_ids and all(a.isdigit() for a in q.answer_ids) for q in everything + human_queries)
    assert available_splits(folder) == ["test", "train", "val"]
    with pytest.raises(ValueError, match=r"split 'test-0\.1' not found .*available splits: test, train, val"):
        load_stark_qa(folder, "test-0.1")


@needs_shared
def test_real_prime_rows_parse_exactly() -> None:
    by_id = {q.id: q for q in load_stark_qa(STARK_QA / "primekg")}
    assert by_id["10328"] == Query(
        "10328",
        "Which medications, designed to target genes or proteins associated with the transport of long-chain "
        "fatty acids, enhance the duration of drug presence on the ocular surface?",
        ["18423"],
        None,
    )
    first_human = load_stark_qa(STARK_QA / "primekg", human=True)[0]
    assert first_human.query == "I have pharyngitis and chemosis. What skin disease might I have?"
    assert first_human.answer_ids == ["32299"]
    with pytest.raises(ValueError, match="human-generated STaRK questions have no splits"):
        load_stark_qa(STARK_QA / "primekg", "test", human=True)


def test_question_file_errors(tmp_path: Path) -> None:
    (tmp_path / "stark_qa").mkdir()
    (tmp_path / "stark_qa" / "stark_qa.csv").write_text('id,query,answer_ids\n1,"q one","[5, 6]"\n2,q two,oops\n')
    with pytest.raises(ValueError, match=r"stark_qa\.csv, line 3: 'answer_ids' is not a list literal: 'oops'"):
        load_stark_qa(tmp_path)
    (tmp_path / "stark_qa" / "stark_qa.csv").write_text('id,query\n1,"q one"\n')
    with pytest.raises(ValueError, match=r"missing column\(s\) answer_ids"):
        load_stark_qa(tmp_path)
    (tmp_path / "stark_qa" / "stark_qa.csv").write_text('id,query,answer_ids\n1,"q one","[5, 6]"\n')
    (tmp_path / "split").mkdir()
    (tmp_path / "split" / "test.index").write_text("1\n2\n3")
    with pytest.raises(ValueError, match=r"test\.index: 2 query id\(s\) not in .*stark_qa\.csv: 2, 3"):
        load_stark_qa(tmp_path, "test")
    with pytest.raises(ValueError, match="split 'dev' not found .*available splits: test"):
        load_stark_qa(tmp_path, "dev")
    assert load_stark_qa(tmp_path) == [Query("1", "q one", ["5", "6"], None)]


# ------------------------------------------------------------------------------------------ JSONL queries
def test_read_query_jsonl_reads_our_format(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text(
        '{"id": "a", "query": "Which disease?", "answer_ids": ["OMIM:1"], "template": "t1"}\n\n'
        '{"id": 7, "query": "Another?", "answer_ids": [3]}\n'
    )
    assert read_query_jsonl(path) == [
        Query("a", "Which disease?", ["OMIM:1"], "t1"),
        Query("7", "Another?", ["3"], None),
    ]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "line 2: not valid JSON"),
        ('["a"]', "line 2: expected a JSON object, got list"),
        ('{"id": "b", "query": "q"}', r"line 2: missing field\(s\) answer_ids; required: id, query, answer_ids"),
        ('{"id": "b", "query": "q", "answer_ids": "OMIM:1"}', "line 2: 'answer_ids' must be a list"),
        ('{"id": "b", "query": " ", "answer_ids": []}', "line 2: 'query' must be a non-empty string"),
    ],
)
def test_read_query_jsonl_names_file_and_line_of_bad_input(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "query": "ok", "answer_ids": ["x"]}\n' + line + "\n")
    with pytest.raises(ValueError, match=r"bad\.jsonl, " + message):
        read_query_jsonl(path)


@pytest.mark.skipif(not (SHARED / "data").is_dir(), reason=f"shared data not found at {SHARED}")
def test_read_query_jsonl_on_the_phenopacket_file() -> None:
    queries = read_query_jsonl(SHARED / "data" / "phenopackets-dev.jsonl")
    assert len(queries) == 441 and len({q.id for q in queries}) == 441
    assert all(q.template == "phenopacket" and q.answer_ids for q in queries)
    assert np.mean([len(q.answer_ids) for q in queries]) >= 1
