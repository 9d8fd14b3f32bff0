"""The streaming GRBench import: the same graph as the whole-file loader, bounded memory, atomic output."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from ark.cli.graph_cmd import register
from ark.graph import GraphValidationError, KnowledgeGraph, load_graph, spilled
from ark.loaders import grbench_import, id_index
from ark.loaders.grbench import load_grbench
from ark.loaders.grbench_import import stream_import_grbench
from benchmarks.bench_grbench_import import STREAM, peak_rss_mb
from benchmarks.synthetic_grbench import DOMAINS, write_graph
from tests.support.cli import cli_invoker

pytest.importorskip("ijson")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "grbench"
invoke = cli_invoker(register)


def _same_graph(a: KnowledgeGraph, b: KnowledgeGraph) -> None:
    assert a.metadata["fingerprint"] == b.metadata["fingerprint"]
    assert a.nodes.equals(b.nodes.combine_chunks())
    assert (a.node_types, a.relation_types) == (b.node_types, b.relation_types)
    assert np.array_equal(a.node_type_codes, b.node_type_codes)
    assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.neighbor_array, b.neighbor_array)
    assert np.array_equal(a.code_array, b.code_array)
    assert a.schema == b.schema and a.metadata["dropped_edges"] == b.metadata["dropped_edges"]


@pytest.mark.parametrize("domain", ["academic", "biomedical"])
def test_released_fixtures_import_as_the_whole_file_loader_builds_them(tmp_path, domain):
    out = stream_import_grbench(FIXTURES / domain, tmp_path / "g", chunk_size=2)  # several batches
    _same_graph(load_grbench(FIXTURES / domain), load_graph(out))


@pytest.mark.parametrize("domain", sorted(DOMAINS))
def test_every_domain_keeps_its_node_and_edge_kinds(tmp_path, monkeypatch, domain):
    _tiny_chunks(monkeypatch)  # many edge chunks, spill reads and CSR buckets
    write_graph(tmp_path / domain, domain, target_bytes=60_000, text_words=5, degree=3, seed=1)
    graph = load_graph(stream_import_grbench(tmp_path / domain, tmp_path / "g", chunk_size=7))
    _same_graph(load_grbench(tmp_path / domain), graph)
    assert set(graph.node_types) == set(DOMAINS[domain])
    kinds = {kind for _name, _extra, neighbors in DOMAINS[domain].values() for kind in neighbors}
    assert set(graph.relation_types) == kinds
    if domain == "biomedical":  # Source-verb-Target kinds run from Source to Target, whichever node lists them
        assert {t.source_type for t in graph.schema if t.relation == "Compound-treats-Disease"} == {"Compound"}


def _tiny_chunks(monkeypatch) -> None:
    monkeypatch.setattr(grbench_import, "EDGE_CHUNK", 5)
    monkeypatch.setattr(spilled, "SPILL_CHUNK", 4)
    monkeypatch.setattr(spilled, "BUCKET_ENTRIES", 3)


@pytest.mark.parametrize("source", ["academic", "biomedical", "amazon"])
def test_ids_sharing_a_hash_still_resolve_exactly(tmp_path, monkeypatch, source):
    """With a hash that collides all the time, every id still finds its own node and unknown ids are dropped."""
    monkeypatch.setattr(id_index, "id_hash", lambda node_id: len(node_id) % 3)
    _tiny_chunks(monkeypatch)
    folder = FIXTURES / source
    if source == "amazon":
        folder = tmp_path / "src"
        write_graph(folder, "amazon", target_bytes=40_000, text_words=3, degree=4, seed=2)
    _same_graph(load_grbench(folder), load_graph(stream_import_grbench(folder, tmp_path / "g")))


def test_a_duplicate_id_is_found_among_ids_sharing_a_hash(tmp_path, monkeypatch):
    monkeypatch.setattr(id_index, "id_hash", lambda node_id: 7)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "graph.json").write_text(json.dumps(
        {"paper_nodes": {"p1": {}, "p2": {}}, "author_nodes": {"a1": {}, "p2": {}}}))
    with pytest.raises(GraphValidationError, match="duplicate node id 'p2'"):
        stream_import_grbench(tmp_path / "src", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_cli_prints_an_estimate_imports_and_names_a_missing_domain(tmp_path):
    result = invoke("graph", "import", "grbench", str(FIXTURES), "--domain", "biomedical", "--out",
                    str(tmp_path / "g"))
    assert result.exit_code == 0, result.output
    assert "of disk" in result.output and "nodes=7, edges=8" in result.output
    result = invoke("graph", "import", "grbench", str(FIXTURES), "--domain", "legal", "--out", str(tmp_path / "h"))
    assert result.exit_code != 0 and "academic, biomedical" in result.output
    assert not (tmp_path / "h").exists()


@pytest.mark.parametrize(("content", "message"), [
    ('{"papers": {}}', "not a '<type>_nodes' table"),
    ('{"paper_nodes": {"1": {"features": {}, "neighbors": {"author": "a1"}}}}', "must be a list"),
    ('{"paper_nodes": {"1": {"features": [], "neighbors": {}}}}', "'features' must be an object"),
    ('{"paper_nodes": {"1": 5}}', "node '1' of paper_nodes is not an object"),
    ('{"paper_nodes": {"1": {"features": {}}}, "author_nodes": {"1": {}}}', "duplicate node id '1'"),
    ('{"paper_nodes": {"1": {"features": {"title": "x"}, ', "not valid JSON"),
])
def test_malformed_files_are_named_and_nothing_is_written(tmp_path, content, message):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "graph.json").write_text(content)
    with pytest.raises(GraphValidationError, match=message):
        stream_import_grbench(tmp_path / "src", tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["src"]  # no temporary left behind


def test_a_failed_import_keeps_the_earlier_graph(tmp_path):
    out = stream_import_grbench(FIXTURES / "academic", tmp_path / "g")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "graph.json").write_text(json.dumps({"x_nodes": {"1": {"neighbors": {"y": 3}}}}))
    with pytest.raises(GraphValidationError):
        stream_import_grbench(tmp_path / "bad", out)
    assert load_graph(out).num_nodes == 5


@pytest.mark.heavy
@pytest.mark.slow
def test_peak_memory_grows_far_less_than_the_file(tmp_path):
    """~20 MB vs ~200 MB graph.json, each imported in its own subprocess (minutes: marked slow). The file is mostly
    ids and neighbour lists (~250k nodes, ~13M neighbour entries at 200 MB), so an importer holding the graph's ids or
    edges in memory grows with it, not only one reading the whole file."""
    peaks = []
    for size in (20e6, 200e6):
        folder = tmp_path / f"g{size:.0f}"
        write_graph(folder, "amazon", int(size), text_words=4, degree=40)
        assert (folder / "graph.json").stat().st_size > 0.9 * size
        peaks.append(peak_rss_mb(STREAM, str(folder), str(tmp_path / f"o{size:.0f}"), "20000")[1])
        assert load_graph(tmp_path / f"o{size:.0f}").num_nodes > 0
    assert peaks[1] - peaks[0] < 100, peaks


def test_a_text_column_past_32_bit_offsets_imports_with_the_whole_file_loaders_fingerprint(tmp_path, monkeypatch):
    """A full-size graph's names or texts pass 2 GiB (GRBench Amazon's did): one array of them needs 64-bit offsets,
    and both the streaming import and the in-memory build hash them so (the limit lowered to a few bytes here)."""
    from ark.graph import build

    monkeypatch.setattr(build, "OFFSET32_LIMIT", 64)
    out = stream_import_grbench(FIXTURES / "academic", tmp_path / "g", chunk_size=2)  # text over 64 bytes, batches
    _same_graph(load_grbench(FIXTURES / "academic"), load_graph(out))
    monkeypatch.setattr(build, "OFFSET32_LIMIT", 2**31 - 1)
    whole = load_grbench(FIXTURES / "academic").metadata["fingerprint"]
    assert load_graph(out).metadata["fingerprint"] != whole  # the offsets' width is in the digest


def test_dropped_neighbours_are_reported_on_the_console_with_a_count_and_an_example(tmp_path):
    """``ark graph import grbench`` (the real command) says how many neighbours named no node, with one of them."""
    import os
    import subprocess
    import sys

    source = tmp_path / "src"
    source.mkdir()
    (source / "graph.json").write_text(json.dumps({
        "paper_nodes": {"p1": {"features": {"title": "Graphs"}, "neighbors": {"author": ["a1", "a9", "a8"]}}},
        "author_nodes": {"a1": {"features": {"name": "Ada"}, "neighbors": {"paper": ["p1", "p99"]}}}}))
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-m", "ark.cli.main", "graph", "import", "grbench", str(source), "--out",
                           str(tmp_path / "g")], capture_output=True, text=True, timeout=120, cwd=repo,
                          env={**os.environ, "ARK_HOME": str(tmp_path / "home"), "COLUMNS": "300"})
    assert done.returncode == 0, done.stderr
    console = " ".join((done.stdout + done.stderr).split())
    assert "dropped 3 edge(s) whose neighbour names no node" in console, console
    assert "e.g. paper 'p1' -> author 'a9'" in console, console
    graph = load_graph(tmp_path / "g")
    assert graph.metadata["dropped_edges"] == 3 and graph.num_edges == 2, graph.metadata
    assert load_grbench(source).metadata["dropped_edge_example"] == graph.metadata["dropped_edge_example"]
