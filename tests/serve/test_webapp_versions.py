"""``ark serve``'s pages over a graph that changes, on a real server on loopback: the node pages and a run's evidence
drawing follow the newest version between requests (as the tool routes do), each page from one version."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pyarrow as pa
import pytest

pytest.importorskip("uvicorn")

from ark.graph import load_graph  # noqa: E402
from ark.graph.versioning import update_graph  # noqa: E402
from ark.graph.versioning.delta import EDGE_SCHEMA, GraphDelta, empty_edges, empty_nodes  # noqa: E402
from ark.index import open_index  # noqa: E402
from ark.serve.graph_tools import GraphTools  # noqa: E402
from ark.serve.questions import ModelSettings, QuestionService  # noqa: E402
from ark.serve.webapp import create_app  # noqa: E402
from tests.support.graphs import save_clinical_graph  # noqa: E402

NEW = {"id": "HP:9999999", "type": "phenotype", "name": "Zebrine stripes of the skin",
       "text": "Zebrine stripes of the skin: alternating pale and dark bands", "properties": "{}"}


def get(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_node_pages_and_evidence_follow_the_newest_version(tmp_path: Path, run_root: Path, loopback) -> None:
    folder = save_clinical_graph(tmp_path / "clinical")  # the same graph the run in run_root was made on
    graph = load_graph(folder)
    tools = GraphTools(graph, open_index(graph, "bm25", progress=False),
                       questions=QuestionService(graph, ModelSettings(offline=True)))
    first = graph.node_id(0)
    renamed = {"id": first, "type": graph.node_type(0), "name": "Renamed first node", "text": "renamed",
               "properties": "{}"}
    with loopback(create_app(tools, runs=[run_root])) as server:
        [run] = json.loads(urllib.request.urlopen(f"{server.url}/api/runs", timeout=30).read())
        evidence = f"{server.url}/api/runs/{run['name']}/trajectories/0/evidence"
        assert get(evidence)[0] == 200
        assert get(f"{server.url}/api/nodes/{NEW['id']}")[0] == 404

        edges = pa.table({"source": [NEW["id"]], "target": [first], "relation": [graph.relation_types[0]]},
                         schema=EDGE_SCHEMA)
        rows = pa.Table.from_pylist([NEW, renamed], schema=empty_nodes().schema)
        update_graph(folder, GraphDelta(rows, edges, empty_edges(), pa.array([], pa.string())))

        status, page = get(f"{server.url}/api/nodes/{NEW['id']}")
        assert status == 200 and page["graph_version"] == 1 and page["name"] == NEW["name"]
        assert [(n["id"], n["name"]) for n in page["neighbour_list"]] == [(first, "Renamed first node")]
        status, page = get(f"{server.url}/api/nodes/{first}")
        assert status == 200 and page["name"] == "Renamed first node" and page["text"] == "renamed"
        assert NEW["id"] in {n["id"] for n in page["neighbour_list"]}
        # A changed node keeps its index: the run's evidence still draws on version 1.
        assert get(evidence)[0] == 200
        # Deleting a node shifts the nodes after it: the run's node indices name other nodes in version 2.
        gone = pa.array([graph.node_id(1)], pa.string())
        update_graph(folder, GraphDelta(empty_nodes(), empty_edges(), empty_edges(), gone))
        status, refused = get(evidence)
        assert status == 409 and "version 2" in refused["error"], refused
