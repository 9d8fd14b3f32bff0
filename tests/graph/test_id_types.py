"""Node ids keep their type or are refused by name (issue 44): a JSON ``true`` or ``1.0`` where an id or a node
index belongs never becomes the id ``"True"``/``"1.0"`` nor node 1. Every place an id arrives from a file, a request
or a model: the query file, the table import (JSONL and typed Parquet columns), a ``--delete`` file, the Python
tables, ARK's tools and the served graph tools. An integer id stays accepted as its decimal text."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ark.graph import EdgeTable, GraphValidationError, NodeTable, build_graph
from ark.loaders.queries import read_query_jsonl
from ark.loaders.tabular import load_tabular
from ark.loaders.updates import read_deletions
from tests.support.graphs import TABULAR_EDGES, TABULAR_NODES, build_index, build_small_graph, write_folder

REFUSED = [(True, "true (a boolean)"), (False, "false (a boolean)"), (1.0, "1.0 (a float)")]
PATTERN = [(v, re.escape(s)) for v, s in REFUSED]


def _write_queries(path: Path, **fields) -> Path:
    path.write_text(json.dumps({"id": "q1", "query": "which gene?", "answer_ids": ["FBN1"], **fields}) + "\n")
    return path


@pytest.mark.parametrize(("value", "shown"), PATTERN)
def test_a_query_file_refuses_boolean_and_float_answer_ids_by_name(tmp_path, value, shown):
    path = _write_queries(tmp_path / "q.jsonl", answer_ids=["FBN1", value])
    with pytest.raises(ValueError, match=rf"line 1: 'answer_ids': node ids must be text or an integer, got {shown}"):
        read_query_jsonl(path)
    with pytest.raises(ValueError, match=rf"'id': query ids must be text or an integer, got {shown}"):
        read_query_jsonl(_write_queries(tmp_path / "q2.jsonl", id=value))


def test_a_query_file_keeps_integer_ids_as_their_text(tmp_path):
    query = read_query_jsonl(_write_queries(tmp_path / "q.jsonl", id=7, answer_ids=[12, "HP:1"]))[0]
    assert query.id == "7" and query.answer_ids == ["12", "HP:1"]


@pytest.mark.parametrize("column", ["id", "type"])
@pytest.mark.parametrize(("value", "shown"), PATTERN)
def test_a_jsonl_node_table_refuses_boolean_and_float_keys_by_name(tmp_path, column, value, shown):
    nodes = [dict(TABULAR_NODES[0], **{column: value}), *TABULAR_NODES[1:]]
    folder = write_folder(tmp_path / "g", "jsonl", nodes=nodes)
    with pytest.raises(GraphValidationError, match=rf"nodes\.jsonl: column '{column}': node ids must be text or an "
                                                   rf"integer, got {shown}"):
        load_tabular(folder)


@pytest.mark.parametrize(("value", "shown"), PATTERN)
def test_a_jsonl_edge_table_refuses_boolean_and_float_endpoints(tmp_path, value, shown):
    edges = [dict(TABULAR_EDGES[0], to=value), *TABULAR_EDGES[1:]]
    folder = write_folder(tmp_path / "g", "jsonl", edges=edges)
    with pytest.raises(GraphValidationError, match=rf"edges\.jsonl: column 'to': .*got {shown}"):
        load_tabular(folder)


def test_jsonl_integer_ids_load_as_their_text(tmp_path):
    nodes = [dict(TABULAR_NODES[0], id=7), *TABULAR_NODES[1:]]
    edges = [dict(TABULAR_EDGES[0], **{"from": 7}), dict(TABULAR_EDGES[1], to=7)]
    graph = load_tabular(write_folder(tmp_path / "g", "jsonl", nodes=nodes, edges=edges))
    assert graph.has_node("7") and graph.num_edges == 2


@pytest.mark.parametrize(("array", "shown"), [(pa.array([True, False, True]), "true"),
                                               (pa.array([1.0, 2.0, 3.0]), "1.0")])
def test_a_parquet_id_column_of_booleans_or_floats_is_refused(tmp_path, array, shown):
    folder = tmp_path / "g"
    folder.mkdir()
    pq.write_table(pa.table({"id": array, "name": ["x", "y", "z"], "type": ["a"] * 3}), folder / "nodes.parquet")
    pq.write_table(pa.table({"from": ["x"], "to": ["y"], "type": ["r"]}), folder / "edges.parquet")
    with pytest.raises(GraphValidationError, match=rf"column 'id' \(a (bool|double) column\): node ids must be "
                                                   rf"text or an integer, got {shown}"):
        load_tabular(folder)


def test_a_delete_file_refuses_a_boolean_id(tmp_path):
    path = tmp_path / "gone.txt"
    path.write_text('{"id": true}\n')
    with pytest.raises(GraphValidationError, match=r"gone\.txt, line 1: 'id': node ids must be text or an integer, "
                                                   r"got true"):
        read_deletions(path)
    table = tmp_path / "gone.jsonl"
    table.write_text('{"id": "FBN1"}\n{"id": false}\n')
    with pytest.raises(GraphValidationError, match=r"gone\.jsonl: column 'id'.*got false \(a boolean\)"):
        read_deletions(table)


def test_python_tables_refuse_a_boolean_id_and_endpoint():
    with pytest.raises(GraphValidationError, match=r"<nodes>: id: node ids must be text or an integer, got true"):
        build_graph(NodeTable([True, "b"], ["t", "t"], ["x", "y"]), EdgeTable([], [], []))
    with pytest.raises(GraphValidationError, match=r"<edges>: from: .*got 1.0 \(a float\)"):
        build_graph(NodeTable(["a", "b"], ["t", "t"], ["x", "y"]), EdgeTable([1.0], ["b"], ["r"]))


@pytest.fixture(scope="module")
def small():
    graph = build_small_graph()
    return graph, build_index(graph)


@pytest.mark.parametrize(("value", "shown"), REFUSED)
def test_ark_tools_refuse_a_boolean_or_float_node_index_naming_it(small, value, shown):
    from ark.methods.ark.tools import Toolbox

    box = Toolbox(*small)
    result = box.execute("search_in_neighborhood", json.dumps({"node_index": value}))
    assert not result.ok and "node_index: Value error, node_index: node indices must be an integer" in result.text
    assert shown in result.text
    added = box.execute("add_to_answer", json.dumps({"answer_nodes": [{"node_index": value, "reasoning": "r"}]}))
    assert not added.ok and shown in added.text and box.answer == []
    assert box.execute("search_in_neighborhood", json.dumps({"node_index": "1"})).ok  # digits still read


@pytest.mark.parametrize(("value", "shown"), REFUSED)
def test_served_graph_tools_refuse_a_boolean_or_float_node(small, value, shown):
    from ark.serve.graph_tools import GraphTools

    tools = GraphTools(*small)
    result = tools.execute("get_node", {"node": value})
    assert not result.ok and f"nodes must be an integer index or a text id, got {shown}" in result.text
    between = tools.execute("find_paths", {"source": 0, "target": value})
    assert not between.ok and shown in between.text
    assert tools.execute("get_node", {"node": 1}).ok


@pytest.mark.parametrize(("value", "shown"), PATTERN)
def test_a_graphscout_quiz_file_refuses_boolean_and_float_answer_ids(tmp_path, value, shown):
    from ark.methods.graphscout.quiz.records import read_graphscout_quiz

    record = {"id": "q1", "query": "which gene?", "answer": "FBN1", "answer_type": "entity", "clue_ids": ["FBN1"],
              "answer_ids": [value]}
    path = tmp_path / "quiz.jsonl"
    path.write_text(json.dumps(record) + "\n")
    with pytest.raises(ValueError, match=rf"'answer_ids': node ids must be text or an integer, got {shown}"):
        read_graphscout_quiz(path)
    path.write_text(json.dumps({**record, "answer_ids": ["FBN1"], "id": value}) + "\n")
    with pytest.raises(ValueError, match=rf"'id': question ids must be text or an integer, got {shown}"):
        read_graphscout_quiz(path)
