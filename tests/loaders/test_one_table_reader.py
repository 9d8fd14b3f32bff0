"""One table reader for every way a graph enters ARK (#45): the same small graph written as CSV, TSV, JSONL,
Parquet and Arrow imports to the same node texts, properties and BM25 rankings; the same files given to ``ark graph
update`` give the same nodes; a question worded from a description finds its node first; ``--delete`` reads the
formats ``--nodes`` reads, and plain id lines."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest

from ark.cli.graph_cmd import register as register_graph
from ark.graph import KnowledgeGraph, load_graph, save_graph
from ark.graph.versioning.delta import node_rows
from ark.index import open_index
from ark.loaders.tabular import load_tabular
from ark.loaders.updates import read_deletions
from tests.support.cli import cli_invoker

pytestmark = pytest.mark.usefixtures("isolated_env")
cli = cli_invoker(register_graph)

# Every node has a description, a text, synonyms and an extra string column (country); year is a number.
NODES = [
    {"id": "f1", "type": "film", "name": "The Prestige", "year": 2006, "country": "United Kingdom",
     "description": "Two rival magicians in Victorian London compete to create the ultimate illusion.",
     "text": "A story of obsession and sacrifice.", "synonyms": "Prestige; The Prestige (2006)"},
    {"id": "f2", "type": "film", "name": "Inception", "year": 2010, "country": "United States",
     "description": "A thief plants an idea in a target's mind through shared dreams.",
     "text": "Layers of dreams inside dreams.", "synonyms": "Origin"},
    {"id": "f3", "type": "film", "name": "Memento", "year": 2000, "country": "United States",
     "description": "A man with short-term memory loss hunts for his wife's killer.",
     "text": "Told backwards, with tattoos and notes.", "synonyms": "Memento (2000)"},
    {"id": "p1", "type": "person", "name": "Christopher Nolan", "year": 1970, "country": "United Kingdom",
     "description": "A director of puzzle films about time and memory.",
     "text": "Born in London.", "synonyms": "Nolan; C. Nolan"},
]
EDGES = [{"from": "f1", "to": "p1", "type": "directed_by"}, {"from": "f2", "to": "p1", "type": "directed_by"},
         {"from": "f3", "to": "p1", "type": "directed_by"}]
FORMATS = ("csv", "tsv", "jsonl", "parquet", "arrow")
QUERIES = ("rival magicians", "dreams", "memory loss killer", "London", "United States", "Nolan", "Prestige 2006")


def write_table(path: Path, rows: list[dict]) -> Path:
    """``rows`` as the table file ``path`` names by its suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = path.suffix.lstrip(".")
    if fmt in ("csv", "tsv"):
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter="\t" if fmt == "tsv" else ",")
            writer.writeheader()
            writer.writerows(rows)
    elif fmt == "jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    elif fmt == "parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        feather.write_feather(pa.Table.from_pylist(rows), path)
    return path


def write_graph(folder: Path, fmt: str) -> Path:
    write_table(folder / f"nodes.{fmt}", NODES)
    write_table(folder / f"edges.{fmt}", EDGES)
    return folder


def node_view(graph: KnowledgeGraph) -> dict[str, tuple]:
    """id -> (type, name, text, properties) of every node."""
    return {row["id"]: (row["type"], row["name"], row["text"], json.loads(row["properties"] or "{}"))
            for row in node_rows(graph).to_pylist()}


def rankings(graph: KnowledgeGraph) -> dict[str, list[tuple[str, float]]]:
    index = open_index(graph, "bm25", progress=False)
    out = {}
    for query in QUERIES:
        out[query] = [(graph.node_id(node), round(score, 5)) for node, score in index.search(query, 10)]
    return out


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KnowledgeGraph]:
    root = tmp_path_factory.mktemp("formats")
    graphs = {}
    for fmt in FORMATS:
        graph = load_tabular(write_graph(root / fmt / "films", fmt))
        graphs[fmt] = load_graph(save_graph(graph, root / fmt / "graph"))
    return graphs


def test_every_format_gives_the_same_texts_properties_and_rankings(imported: dict[str, KnowledgeGraph]) -> None:
    reference = node_view(imported["csv"])
    prestige = reference["f1"]
    # the text is built from every text-like column, the name first; numbers and ids are no text
    assert prestige[2] == ("The Prestige\nA story of obsession and sacrifice.\ndescription: Two rival magicians in "
                           "Victorian London compete to create the ultimate illusion.\nsynonyms: Prestige; The "
                           "Prestige (2006)\ncountry: United Kingdom")
    assert prestige[3] == {"year": 2006, "country": "United Kingdom", "description": NODES[0]["description"],
                           "synonyms": NODES[0]["synonyms"]}
    reference_ranks = rankings(imported["csv"])
    assert reference_ranks["rival magicians"][0][0] == "f1"
    for fmt in FORMATS[1:]:
        assert node_view(imported[fmt]) == reference, fmt
        assert rankings(imported[fmt]) == reference_ranks, fmt
        assert imported[fmt].num_edges == 3


@pytest.mark.parametrize(("question", "answer"), [
    ("Which film is about rival magicians in Victorian London?", "f1"),
    ("the film where a thief plants an idea in someone's mind", "f2"),
    ("a man with short-term memory loss hunting a killer", "f3"),
])
def test_a_question_worded_from_a_description_finds_its_node_first(imported: dict[str, KnowledgeGraph],
                                                                    question: str, answer: str) -> None:
    for fmt in FORMATS:
        hits = open_index(imported[fmt], "bm25", progress=False).search(question, 3)
        assert imported[fmt].node_id(hits[0][0]) == answer, fmt


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_same_files_given_to_update_give_the_same_graph(tmp_path: Path, fmt: str,
                                                            imported: dict[str, KnowledgeGraph]) -> None:
    # A graph cannot be empty: its first version holds one placeholder node, deleted by the update that adds the
    # files, so the update's version holds exactly what the files say.
    seed = tmp_path / "seed"
    write_table(seed / "nodes.csv", [{"id": "placeholder", "type": "film", "name": "Placeholder"}])
    write_table(seed / "edges.csv", [{"from": "placeholder", "to": "placeholder", "type": "directed_by"}])
    assert cli("graph", "import", "csv", seed, "--out", tmp_path / "g").exit_code == 0
    files = write_graph(tmp_path / "files", fmt)
    delete = tmp_path / "delete.txt"
    delete.write_text("placeholder\n", encoding="utf-8")
    result = cli("graph", "update", tmp_path / "g", "--nodes", files / f"nodes.{fmt}", "--edges",
                 files / f"edges.{fmt}", "--delete", delete)
    assert result.exit_code == 0, result.output
    updated = load_graph(tmp_path / "g")
    assert updated.metadata["graph_version"] == 1
    assert node_view(updated) == node_view(imported["csv"])
    assert rankings(updated) == rankings(imported["csv"])
    assert sorted((updated.node_id(int(s)), updated.node_id(int(d)), updated.relation_types[int(r)])
                  for s, d, r in zip(*updated.edges(), strict=True)) == sorted(
        (e["from"], e["to"], e["type"]) for e in EDGES)


DELETE_FILES = {
    "delete.csv": "id\nf2\nf3\n",
    "delete.tsv": "node_id\textra\nf2\tx\nf3\ty\n",
    "delete.jsonl": '{"id": "f2"}\n{"id": "f3", "why": "gone"}\n',
    "delete.txt": "# two films\nf2\n\nf3\n",
    "objects.txt": '{"id": "f2"}\n{"id": "f3"}\n',
}


@pytest.mark.parametrize("name", [*DELETE_FILES, "delete.parquet", "delete.arrow"])
def test_delete_reads_the_formats_nodes_reads_and_plain_id_lines(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name in DELETE_FILES:
        path.write_text(DELETE_FILES[name], encoding="utf-8")
    else:
        write_table(path, [{"id": "f2"}, {"id": "f3"}])
    assert read_deletions(path) == (["f2", "f3"], [])
    folder = write_graph(tmp_path / "films", "csv")
    assert cli("graph", "import", "csv", folder, "--out", tmp_path / "g").exit_code == 0
    result = cli("graph", "update", tmp_path / "g", "--delete", path)
    assert result.exit_code == 0, result.output
    assert "2 deleted" in result.text
    graph = load_graph(tmp_path / "g")
    assert sorted(graph.node_id(i) for i in range(graph.num_nodes)) == ["f1", "p1"]


def test_delete_tables_of_edges_and_a_table_without_an_id_column(tmp_path: Path) -> None:
    edges = write_table(tmp_path / "edges.jsonl", [{"source": "f1", "target": "p1", "relation": "directed_by"}])
    assert read_deletions(edges) == ([], [("f1", "p1", "directed_by")])
    folder = write_graph(tmp_path / "films", "csv")
    assert cli("graph", "import", "csv", folder, "--out", tmp_path / "g").exit_code == 0
    result = cli("graph", "update", tmp_path / "g", "--delete", edges)
    assert result.exit_code == 0 and "1 removed" in result.text, result.output
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("film\nf2\n", encoding="utf-8")
    refused = cli("graph", "update", tmp_path / "g", "--delete", wrong)
    assert refused.exit_code == 2
    assert "needs an id column" in refused.text and "found: film" in refused.text


def test_neo4j_import_headers_and_lightrag_edge_columns_import_as_they_are(tmp_path: Path) -> None:
    neo4j = tmp_path / "neo4j"
    neo4j.mkdir()
    (neo4j / "nodes.csv").write_text("filmId:ID,title,:LABEL,description\nf1,The Prestige,Film,Rival magicians.\n"
                                     "p1,Christopher Nolan,Person,A director.\n", encoding="utf-8")
    (neo4j / "edges.csv").write_text(":START_ID,:END_ID,:TYPE\nf1,p1,DIRECTED_BY\n", encoding="utf-8")
    graph = load_tabular(neo4j)
    assert graph.node_types == ["Film", "Person"] and graph.relation_types == ["DIRECTED_BY"]
    assert graph.text(graph.index_of("f1")) == "The Prestige\ndescription: Rival magicians."
    lightrag = tmp_path / "lightrag"
    write_table(lightrag / "nodes.jsonl", [{"id": "f1", "entity_type": "film", "entity_name": "The Prestige"},
                                           {"id": "p1", "entity_type": "person", "entity_name": "Nolan"}])
    write_table(lightrag / "edges.jsonl", [{"src_id": "f1", "tgt_id": "p1", "relation": "directed_by",
                                            "keywords": "director"}])
    graph = load_tabular(lightrag)
    assert graph.name(graph.index_of("f1")) == "The Prestige" and graph.num_edges == 1


def test_an_edge_table_without_a_type_column_says_which_names_it_may_have(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    write_table(folder / "nodes.csv", NODES)
    write_table(folder / "edges.csv", [{"source": "f1", "target": "p1", "weight": 1}])
    result = cli("graph", "import", "csv", folder, "--out", tmp_path / "out")
    assert result.exit_code == 2
    assert ("missing column(s) type; required: from, to, type; found: source, target, weight (rename a column: "
            "type is one of type, relation, relationship, predicate, :TYPE)") in result.text
    assert "--type-column" not in result.text  # that flag chooses the nodes' column, not the edges'
    assert not (tmp_path / "out").exists()
