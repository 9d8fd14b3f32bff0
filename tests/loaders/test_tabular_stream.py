"""The streamed graph-folder import (#50): ``import_tabular`` reads the tables a run of rows at a time and writes the
graph as it goes, yet writes the graph the whole-table build (``load_tabular`` + ``save_graph``) writes, in every
format, at every memory budget, with the same errors."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from ark.graph import GraphValidationError, save_graph
from ark.loaders import tabular_stream
from ark.loaders.table_reader import ColumnChoice
from ark.loaders.tabular import import_tabular, load_tabular
from benchmarks.synthetic_mag import generate
from tests.loaders.test_one_table_reader import FORMATS, write_graph, write_table

TINY_BUDGET = 2**20  # runs of ~4 KB of nodes, 1,024 edges, buckets of 1,024 CSR entries


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def without_node_file_record(graph_json: bytes) -> dict:
    meta = json.loads(graph_json)
    meta["files"].pop("nodes.arrow")
    return meta


def node_table(folder: Path) -> pa.Table:
    with pa.memory_map(str(folder / "nodes.arrow")) as source:
        return pa.ipc.open_file(source).read_all().combine_chunks()


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_small_graph_imports_to_the_files_the_whole_table_build_saves(tmp_path: Path, fmt: str) -> None:
    folder = write_graph(tmp_path / "films", fmt)
    streamed = import_tabular(folder, tmp_path / "streamed", memory_budget=TINY_BUDGET)
    whole = save_graph(load_tabular(folder), tmp_path / "whole")
    assert files(streamed) == files(whole)


@pytest.fixture(scope="module")
def mag(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The synthetic MAG graph (~900 nodes, ~9,000 edges) as Parquet, CSV and JSONL folders."""
    root = tmp_path_factory.mktemp("mag")
    generate(root / "parquet", scale=0.0005, seed=3)
    folders = {"parquet": root / "parquet"}
    for fmt in ("csv", "jsonl"):
        folders[fmt] = root / fmt
        folders[fmt].mkdir()
        for stem in ("nodes", "edges"):
            table = pq.read_table(root / "parquet" / f"{stem}.parquet")
            if fmt == "csv":
                pa_csv.write_csv(table, folders[fmt] / f"{stem}.csv")
            else:
                write_table(folders[fmt] / f"{stem}.jsonl", table.to_pylist())
    return folders


@pytest.mark.parametrize("fmt", ["parquet", "csv", "jsonl"])
def test_a_graph_read_in_many_runs_gives_the_whole_table_builds_arrays_rows_and_fingerprint(
        mag: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    monkeypatch.setattr(tabular_stream, "BATCH_BYTES", 50_000)  # nodes.arrow in many record batches too
    streamed = import_tabular(mag[fmt], tmp_path / "streamed", memory_budget=TINY_BUDGET)
    whole = save_graph(load_tabular(mag[fmt]), tmp_path / "whole")
    ours, theirs = files(streamed), files(whole)
    for name in ("indptr.npy", "neighbors.npy", "codes.npy", "node_type_codes.npy"):
        assert ours[name] == theirs[name], name
    assert without_node_file_record(ours["graph.json"]) == without_node_file_record(theirs["graph.json"])
    assert node_table(streamed).equals(node_table(whole))
    with pa.memory_map(str(streamed / "nodes.arrow")) as source:
        reader = pa.ipc.open_file(source)
        batches = [reader.get_batch(i) for i in range(reader.num_record_batches)]
    assert len(batches) > 10
    for batch in batches[:-1]:  # each batch ends with the row whose text and properties reach the cap
        sizes = [len(t.encode()) + len(p.encode()) for t, p in zip(batch["text"].to_pylist(),
                                                                     batch["properties"].to_pylist(), strict=True)]
        assert sum(sizes) >= 50_000 > sum(sizes[:-1])


def test_the_files_do_not_depend_on_the_memory_budget(mag: dict[str, Path], tmp_path: Path) -> None:
    small = import_tabular(mag["parquet"], tmp_path / "small", memory_budget=TINY_BUDGET)
    default = import_tabular(mag["parquet"], tmp_path / "default")
    assert files(small) == files(default)


def _nodes(count: int) -> list[dict]:
    """Nodes whose rows are long enough that a tiny budget reads a few of them at a time."""
    return [{"id": f"n{i}", "type": "thing", "name": f"Thing {i}", "properties": json.dumps({"note": "x" * 600})}
            for i in range(count)]


@pytest.mark.parametrize("broken", ["blank id", "blank type", "bad properties", "duplicate id", "unknown endpoint",
                                    "blank edge type", "text column"])
def test_a_broken_table_is_refused_with_the_whole_table_builds_error_and_leaves_nothing(
        tmp_path: Path, broken: str) -> None:
    nodes, edges = _nodes(60), [{"from": f"n{i}", "to": f"n{i + 1}", "type": "next"} for i in range(59)]
    if broken == "blank id":
        nodes[41]["id"] = nodes[57]["id"] = " "
    elif broken == "blank type":
        nodes[50]["type"] = ""
    elif broken == "bad properties":
        nodes[33]["properties"] = nodes[58]["properties"] = "[1, 2]"
    elif broken == "duplicate id":
        nodes[55]["id"] = "n3"
    elif broken == "unknown endpoint":
        edges[40]["to"], edges[52]["from"] = "nowhere", "n999"
    elif broken == "blank edge type":
        edges[44]["type"] = ""
    elif broken == "text column":  # checked against the columns where no properties column may hold the key
        nodes = [{**{k: v for k, v in node.items() if k != "properties"}, "note": "x" * 600} for node in nodes]
    write_table(tmp_path / "src" / "nodes.parquet", nodes)
    write_table(tmp_path / "src" / "edges.parquet", edges)
    columns = ColumnChoice(text=("missing",)) if broken == "text column" else ColumnChoice()
    with pytest.raises(GraphValidationError) as whole:
        load_tabular(tmp_path / "src", columns=columns)
    with pytest.raises(GraphValidationError) as streamed:
        import_tabular(tmp_path / "src", tmp_path / "out", columns=columns, memory_budget=TINY_BUDGET)
    assert str(streamed.value) == str(whole.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("edges", ["integer ids", "no edges"])
def test_integer_ids_and_an_empty_edge_table_import_to_the_whole_table_builds_files(tmp_path: Path,
                                                                                    edges: str) -> None:
    (tmp_path / "src").mkdir()
    pq.write_table(pa.table({"id": pa.array(range(100), pa.int64()), "type": ["t"] * 100,
                             "name": [f"n{i}" for i in range(100)], "x": [i * 1.5 for i in range(100)]}),
                   tmp_path / "src" / "nodes.parquet")
    ends = (range(99), range(1, 100)) if edges == "integer ids" else ([], [])
    pq.write_table(pa.table({"source": pa.array(ends[0], pa.int32()), "target": pa.array(ends[1], pa.int32()),
                             "relation": pa.array(["r"] * len(ends[0]), pa.string())}),
                   tmp_path / "src" / "edges.parquet")
    streamed = import_tabular(tmp_path / "src", tmp_path / "streamed", memory_budget=TINY_BUDGET)
    assert files(streamed) == files(save_graph(load_tabular(tmp_path / "src"), tmp_path / "whole"))
