"""versions.json read as typed records at its edge: a field of the wrong kind is one damaged-file error naming the
key, and an opened version's segments are a typed record (what the indexes and Cypher databases follow)."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from ark.graph import load_graph, save_graph
from ark.graph.info import VersionSegments
from ark.graph.versioning import read_manifest, update_graph
from ark.graph.versioning.delta import GraphDelta, empty_edges
from ark.storage.checksums import DamagedFileError
from tests.support.graphs import build_clinical_graph


def _updated(tmp_path):
    folder = save_graph(build_clinical_graph(), tmp_path / "g")
    nodes = pa.table({"id": ["X:1"], "type": ["gene"], "name": ["gene one"], "text": ["a new gene"],
                      "properties": ["{}"]})
    update_graph(folder, GraphDelta(nodes, empty_edges(), empty_edges(), pa.array([], pa.string())), note="one")
    return folder


def test_the_manifest_reads_as_typed_records_and_writes_back_byte_for_byte(tmp_path):
    folder = _updated(tmp_path)
    manifest = read_manifest(folder)
    assert manifest is not None and manifest.current == 1
    update = manifest.entry(1)
    assert update.is_update and update.note == "one" and update.counts["nodes_upserted"] == 1
    assert isinstance(update.fingerprint, str) and set(update.files) >= {"nodes.arrow"}
    assert manifest.dumps() == (folder / "versions.json").read_text(encoding="utf-8")


@pytest.mark.parametrize(("key", "value"), [("version", [1]), ("fingerprint", 7), ("files", "nodes.arrow"),
                                            ("sums", {"nodes": 3})])
def test_a_manifest_field_of_the_wrong_kind_is_a_damaged_file_naming_it(tmp_path, key, value):
    folder = _updated(tmp_path)
    data = json.loads((folder / "versions.json").read_text(encoding="utf-8"))
    data["history"][-1][key] = value
    (folder / "versions.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DamagedFileError, match=key):
        read_manifest(folder)


def test_an_opened_version_says_its_segments_as_a_record(tmp_path):
    folder = _updated(tmp_path)
    graph = load_graph(folder)
    segments = graph.info.version_segments
    assert isinstance(segments, VersionSegments)
    assert (segments.base, segments.base_version, segments.cypher) == (".", 0, "cypher/versions/000001")
    assert [(d.version, d.delta) for d in segments.deltas] == [(1, "deltas/000001")]
    assert segments.newest_folder() == "deltas/000001"
    assert segments.deltas[0].fingerprint == read_manifest(folder).entry(1).fingerprint
    assert VersionSegments.from_json(segments.to_json()) == segments
    assert load_graph(save_graph(build_clinical_graph(), tmp_path / "plain")).info.version_segments is None
