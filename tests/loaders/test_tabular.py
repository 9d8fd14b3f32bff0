"""ark-agent-cli graph folders (Parquet, CSV, JSONL): loading, node text, metadata and bad-input errors."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ark.graph import GraphValidationError, load_graph
from ark.loaders.tabular import PYTHON_WHITESPACE, import_tabular, load_tabular, node_text
from tests.support.graphs import TABULAR_EDGES as EDGES
from tests.support.graphs import TABULAR_NODES as NODES
from tests.support.graphs import properties_json, write_folder


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_each_format_loads_the_same_graph(tmp_path: Path, fmt: str) -> None:
    folder = write_folder(tmp_path / "marfan", fmt)
    graph = load_tabular(folder)
    assert [graph.node_id(i) for i in range(graph.num_nodes)] == ["007", "FBN1", "HP:1"]
    assert [graph.node_type(i) for i in range(3)] == ["disease", "gene", "phenotype"]
    assert graph.num_edges == 2 and sorted(graph.relation_types) == ["causes", "has_phenotype"]
    marfan = graph.index_of("007")
    assert graph.name(marfan) == "Marfan syndrome"
    assert graph.properties(marfan)["score"] == 3
    assert graph.properties(graph.index_of("HP:1")) == {}
    out = graph.neighbors(marfan, "has_phenotype", "out")
    assert [graph.node_id(int(n)) for n in out.nodes] == ["HP:1"]
    incoming = graph.neighbors(marfan, "causes", "in")
    assert [graph.node_id(int(n)) for n in incoming.nodes] == ["FBN1"]
    assert graph.metadata["name"] == "marfan"


def test_node_text_puts_description_and_summary_first() -> None:
    text = node_text("Marfan syndrome", NODES[0]["properties"])
    assert text == (
        "Marfan syndrome\ndescription: Tall stature.\nsummary: A connective tissue disorder.\n"
        "synonyms: MFS; Marfan\nsource: OMIM"
    )
    assert node_text("X", {}) == "X"


def test_graph_json_gives_name_and_description(tmp_path: Path) -> None:
    info = {"id": "mfs", "name": "Marfan graph", "description": "A toy graph.", "color": "#fff", "order": 1}
    graph = load_tabular(write_folder(tmp_path / "g", "parquet", graph_json=info))
    assert graph.metadata["name"] == "Marfan graph"
    assert graph.metadata["description"] == "A toy graph." and graph.metadata["id"] == "mfs"
    assert load_tabular(tmp_path / "g", name="custom").metadata["name"] == "custom"


def test_import_writes_a_loadable_graph(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "src", "csv")
    out = import_tabular(folder, tmp_path / "out", name="marfan")
    loaded = load_graph(out)
    original = load_tabular(folder, name="marfan")
    assert loaded.metadata == original.metadata
    assert [loaded.text(i) for i in range(3)] == [original.text(i) for i in range(3)]
    assert loaded.text(0).startswith("Marfan syndrome\ndescription: Tall stature.")


def test_edges_without_nodes_file_or_graph_folder_are_reported(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="graph folder not found"):
        load_tabular(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="expected one of nodes.parquet, nodes.csv, nodes.jsonl"):
        load_tabular(tmp_path / "empty")


BAD_INPUTS = {
    "missing column": (
        [{k: v for k, v in n.items() if k != "type"} for n in NODES], EDGES,
        r"nodes\.csv: missing column\(s\) type; required: id, type \(optional: name\); found: id, name, "
        r"properties \(name another with --type-column\)",
    ),
    "missing edge column": (
        NODES, [{k: v for k, v in e.items() if k != "to"} for e in EDGES],
        r"edges\.csv: missing column\(s\) to; required: from, to, type",
    ),
    "duplicate ids": (
        NODES + [NODES[1], NODES[2], NODES[2]], EDGES,
        r"nodes\.csv: duplicate node ids in 2 row\(s\): 'FBN1', 'HP:1'",
    ),
    "unknown endpoints": (
        NODES, EDGES + [{"from": "007", "to": "HP:404", "type": "has_phenotype", "properties": None},
                        {"from": "FBN1", "to": "ghost", "type": "causes", "properties": None}],
        r"edges\.csv: column 'to' points at unknown node ids in 2 row\(s\): 'row 2: HP:404', 'row 3: ghost'",
    ),
    "empty graph": ([], [], r"nodes\.csv: the graph has no nodes"),
    "malformed properties": (
        [{**NODES[0], "properties": "{oops"}, NODES[1], {**NODES[2], "properties": "[1, 2]"}], EDGES,
        r"nodes\.csv: column 'properties' must hold JSON objects; malformed in 2 row\(s\): row 0: '\{oops', "
        r"row 2: '\[1, 2\]'",
    ),
    "blank id": (
        [{**NODES[0], "id": ""}] + NODES[1:], EDGES, r"nodes\.csv: column 'id' is empty in 1 row\(s\): 0",
    ),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_reported_and_nothing_is_written(tmp_path: Path, case: str) -> None:
    nodes, edges, message = BAD_INPUTS[case]
    if case == "malformed properties":  # write the raw strings, not JSON-encoded ones
        folder = tmp_path / "g"
        write_folder(folder, "csv", nodes=[{**n, "properties": None} for n in nodes], edges=edges)
        rows = [{**n, "properties": n["properties"] if isinstance(n["properties"], str)
                 else properties_json(n["properties"])}
                for n in nodes]
        with (folder / "nodes.csv").open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    else:
        folder = write_folder(tmp_path / "g", "csv", nodes=nodes, edges=edges)
    with pytest.raises(GraphValidationError, match=message):
        import_tabular(folder, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g"]


def test_unknown_relation_names_are_rejected_when_a_list_is_given(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "g", "jsonl")
    with pytest.raises(GraphValidationError, match=r"unknown relation name\(s\) in 1 row\(s\): 'causes'; "
                                                   r"valid: has_phenotype, is_a"):
        load_tabular(folder, relations=["has_phenotype", "is_a"])
    assert load_tabular(folder, relations=["has_phenotype", "causes"]).num_edges == 2


def test_malformed_jsonl_line_names_file_and_line(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "g", "jsonl")
    with (folder / "edges.jsonl").open("a") as handle:
        handle.write("{not json\n")
    with pytest.raises(GraphValidationError, match=r"edges\.jsonl, line 3: not valid JSON"):
        load_tabular(folder)


def test_csv_ids_keep_leading_zeros_and_edges_only_graph_is_allowed(tmp_path: Path) -> None:
    graph = load_tabular(write_folder(tmp_path / "g", "csv", edges=[]))
    assert graph.has_node("007") and not graph.has_node("7")
    assert graph.num_edges == 0 and graph.schema == []


# ------------------------------------------------------------------------------------------------ text encodings
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_text_that_is_not_utf8_names_the_file_line_and_column(tmp_path: Path, fmt: str) -> None:
    folder = write_folder(tmp_path / "latin", fmt)
    nodes = folder / f"nodes.{fmt}"
    lines = nodes.read_bytes().split(b"\n")
    row = next(i for i, line in enumerate(lines) if b"FBN1" in line)
    lines[row] = lines[row].replace(b"FBN1", b"Caf\xe9 FBN1", 1)  # a Latin-1 byte in the FBN1 row
    nodes.write_bytes(b"\n".join(lines))
    column = lines[row].index(b"\xe9") + 1
    with pytest.raises(GraphValidationError) as info:
        load_tabular(folder)
    assert str(info.value) == (f"{nodes}, line {row + 1}, column {column}: not UTF-8 text (byte 0xe9); "
                               "save the file as UTF-8")


def test_parquet_name_columns_stored_as_bytes_are_decoded_or_refused(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = write_folder(tmp_path / "bytes", "parquet")
    table = pq.read_table(folder / "nodes.parquet")
    names = [n.encode() for n in table.column("name").to_pylist()]
    names[1] = "Café".encode()
    binary = table.set_column(table.column_names.index("name"), "name", pa.array(names, pa.binary()))
    pq.write_table(binary, folder / "nodes.parquet")
    graph = load_tabular(folder)
    assert graph.name(graph.index_of("FBN1")) == "Café"  # not "b'Caf\\xc3\\xa9'"

    names[1] = "Café".encode("latin-1")
    pq.write_table(binary.set_column(table.column_names.index("name"), "name", pa.array(names, pa.binary())),
                   folder / "nodes.parquet")
    with pytest.raises(GraphValidationError, match=r"column 'name' holds bytes that are not UTF-8 text \(row 1: "
                                                   r"b'Caf\\xe9'\)"):
        load_tabular(folder)


def test_python_whitespace_set_is_what_str_strip_removes() -> None:
    assert set(PYTHON_WHITESPACE) == {c for c in map(chr, range(0x110000)) if c.isspace()}


def test_ids_types_and_relations_are_stripped_exactly_like_python(tmp_path: Path) -> None:
    """The Arrow path strips only what Python's str.strip() strips (including \\x1c and U+3000), nothing else."""
    odd = ["\u3000A\u2005", "\x1cB", "C\x85", "D\u200b", " E ", "F"]  # U+200B is not whitespace: kept
    folder = tmp_path / "g"
    folder.mkdir()
    pq.write_table(pa.table({"id": odd, "name": ["a", "b", "c", "d", "e", "f"],
                             "type": [" gene", "gene\t", "gene", "gene", "gene", "gene"]}), folder / "nodes.parquet")
    pq.write_table(pa.table({"from": [" A", "B\u3000"], "to": ["C", "D\u200b"], "type": ["rel ", "\u2028rel"]}),
                   folder / "edges.parquet")
    graph = load_tabular(folder)
    assert [graph.node_id(i) for i in range(6)] == [v.strip() for v in odd]
    assert graph.node_types == ["gene"] and graph.relation_types == ["rel"]
    assert graph.has_node("D\u200b") and graph.num_edges == 2


def test_parquet_integer_ids_and_dictionary_columns_load_as_text(tmp_path: Path) -> None:
    folder = tmp_path / "g"
    folder.mkdir()
    kinds = pa.array(["paper", "author", "paper"]).dictionary_encode()
    pq.write_table(pa.table({"id": pa.array([10, 20, 30]), "name": ["x", "y", "z"], "type": kinds}),
                   folder / "nodes.parquet")
    pq.write_table(pa.table({"from": pa.array([20, 20]), "to": pa.array([10, 30]), "type": ["writes"] * 2}),
                   folder / "edges.parquet")
    graph = load_tabular(folder)
    assert graph.index_of("20") == 1 and graph.node_type(1) == "author" and graph.num_edges == 2
    assert graph.text(0) == "x" and graph.properties(0) == {}


def test_large_folders_are_read_in_batches_with_the_same_result(tmp_path: Path, monkeypatch) -> None:
    """Node text is computed a batch of rows at a time; the graph (and its fingerprint) must not depend on it."""
    import ark.loaders.table_reader as reader

    rows = [{"id": f"n{i}", "name": f"node {i}", "type": "t",
             "properties": {"description": f"about {i}", "rank": i, "tags": ["a", str(i)]}} for i in range(50)]
    folder = write_folder(tmp_path / "g", "parquet", nodes=rows, edges=[{"from": "n1", "to": "n2", "type": "r"}])
    whole = load_tabular(folder)
    original = reader._batches
    monkeypatch.setattr(reader, "_batches", lambda *a: original(*a[:6], 7, a[7]))
    batched = load_tabular(folder)
    assert batched.nodes.column("text").num_chunks > 1
    assert batched.metadata["fingerprint"] == whole.metadata["fingerprint"]
    assert [batched.text(i) for i in range(50)] == [whole.text(i) for i in range(50)]
    assert batched.text(3) == "node 3\ndescription: about 3\ntags: a; 3"
    assert [batched.properties(i) for i in range(50)] == [r["properties"] for r in rows]
