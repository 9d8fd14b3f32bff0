"""Caches that never answer wrong: one first build for parallel processes, checksums checked on opening (damaged
files named with the command that rebuilds them), nothing half-written left by a full disk, truncated files named."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from ark.graph import load_graph, save_graph
from ark.index import open_index
from ark.storage import checksums
from ark.storage.checksums import DamagedFileError
from tests.support.graphs import ONE_HOP, build_clinical_graph, save_clinical_graph

REPO = Path(__file__).resolve().parents[2]


def flip_byte(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x5A
    path.write_bytes(bytes(data))


def index_folder(graph_dir: Path, kind: str = "bm25") -> Path:
    (folder,) = (graph_dir / "index").glob(f"{kind}-*")
    return folder


@pytest.fixture
def graph_dir(tmp_path) -> Path:
    return save_clinical_graph(tmp_path / "clinical")


def test_sixteen_parallel_first_uses_build_once_and_all_succeed(graph_dir, tmp_path):
    """Every process finds the index missing at once; one builds it, the others wait and open it."""
    env = {**os.environ, "ARK_HOME": str(tmp_path / "home"), "PYTHONPATH": str(REPO)}
    code = "from ark.cli.main import main; main()"
    args = [sys.executable, "-c", code, "ask", str(graph_dir), ONE_HOP[0], "--top", "3"]
    started = time.monotonic()
    procs = [subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(16)]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    elapsed = time.monotonic() - started
    failed = [(proc.returncode, err.strip()[-300:]) for proc, (_, err) in zip(procs, outputs, strict=True)
              if proc.returncode != 0]
    assert not failed, failed
    assert elapsed < 60
    assert all("FBN1" in out for out, _ in outputs)
    leftovers = [p.name for p in (graph_dir / "index").iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_a_flipped_byte_in_a_graph_file_is_named_on_opening(graph_dir):
    flip_byte(graph_dir / "indptr.npy", 200)
    with pytest.raises(DamagedFileError, match=r"indptr\.npy is damaged \(checksum mismatch\); rebuild"):
        load_graph(graph_dir)


@pytest.mark.parametrize("name", ["term_ptr.npy", "doc_deltas.bin"])
def test_a_flipped_byte_in_an_index_array_is_named_on_opening(graph_dir, name):
    """Before checksums these (then indptr.npy and indices.npy) gave wrong rankings with no error."""
    graph = load_graph(graph_dir)
    open_index(graph, "bm25", progress=False)
    folder = index_folder(graph_dir)
    flip_byte(folder / name, (folder / name).stat().st_size - 3)
    with pytest.raises(DamagedFileError) as caught:
        open_index(graph, "bm25", progress=False)
    message = str(caught.value)
    assert f"{folder / name} is damaged" in message and f"rm -r {folder}" in message
    assert "\n" not in message


def test_a_truncated_vocabulary_is_named_even_without_checksums(graph_dir):
    """An index written before checksums (no ``files`` in its manifest) still catches a truncated terms.txt."""
    graph = load_graph(graph_dir)
    open_index(graph, "bm25", progress=False)
    folder = index_folder(graph_dir)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.pop("files", None)
    (folder / "manifest.json").write_text(json.dumps(manifest))
    open_index(graph, "bm25", progress=False)  # the old layout opens
    terms = folder / "terms.txt"
    terms.write_bytes(terms.read_bytes()[:-40])
    with pytest.raises(DamagedFileError, match=r"terms\.txt is damaged"):
        open_index(graph, "bm25", progress=False)


def test_a_truncated_graph_array_names_the_file(graph_dir):
    """Also for a graph saved before checksums: the error names the file instead of 'mmap length is greater'."""
    meta = json.loads((graph_dir / "graph.json").read_text())
    meta.pop("files", None)
    (graph_dir / "graph.json").write_text(json.dumps(meta))
    load_graph(graph_dir)  # a graph without checksums opens
    codes = graph_dir / "codes.npy"
    codes.write_bytes(codes.read_bytes()[:-100])
    with pytest.raises(DamagedFileError, match=r"codes\.npy is damaged \(unreadable"):
        load_graph(graph_dir)


def test_large_files_are_sampled_on_opening_and_hashed_in_full_by_verify(graph_dir, tmp_path, monkeypatch):
    from ark.graph import verify_graph

    monkeypatch.setattr(checksums, "FULL_HASH_LIMIT", 2000)  # the small graph's node table (~4.7 kB) is "large"
    monkeypatch.setattr(checksums, "BLOCK_SIZE", 64)
    monkeypatch.setattr(checksums, "SAMPLE_BLOCKS", 4)
    folder = save_graph(build_clinical_graph(), tmp_path / "sampled")
    nodes = folder / "nodes.arrow"
    size = nodes.stat().st_size
    assert size > checksums.FULL_HASH_LIMIT
    sampled = [range(o, o + checksums.BLOCK_SIZE) for o in checksums.sample_offsets(size)]
    outside = next(i for i in range(size // 3, size) if not any(i in block for block in sampled))
    flip_byte(nodes, outside)
    load_graph(folder)  # outside every sampled block: opening does not read it
    with pytest.raises(DamagedFileError, match=r"nodes\.arrow is damaged \(checksum mismatch\)"):
        verify_graph(folder)
    flip_byte(nodes, outside)
    assert verify_graph(folder) == 5
    flip_byte(nodes, checksums.sample_offsets(size)[3] + 7)
    with pytest.raises(DamagedFileError, match="checksum of sampled blocks mismatch"):
        load_graph(folder)


def test_ark_graph_verify_checks_graph_and_indexes_in_one_line(graph_dir):
    from typer.testing import CliRunner

    from ark.cli.main import app

    graph = load_graph(graph_dir)
    open_index(graph, "bm25", progress=False)
    result = CliRunner().invoke(app, ["graph", "verify", str(graph_dir)])
    assert result.exit_code == 0, result.output
    assert "5 graph files" in " ".join(result.output.split())
    flip_byte(index_folder(graph_dir) / "scores.npy" if (index_folder(graph_dir) / "scores.npy").exists()
              else index_folder(graph_dir) / "doc_deltas.bin", 130)
    result = CliRunner().invoke(app, ["graph", "verify", str(graph_dir)])
    assert result.exit_code != 0
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "is damaged" in errors[0] and "rm -r" in errors[0]


def test_a_full_disk_while_saving_an_index_leaves_nothing_and_the_next_run_builds(graph_dir, monkeypatch, caplog):
    """The run answers from memory with one warning; no temporary folder stays; the next run saves the cache."""
    from ark.index import terms

    graph = load_graph(graph_dir)
    real_save_table = terms.save_table

    def full_disk(directory, vocabulary):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(directory / terms.OFFSETS_FILE))

    monkeypatch.setattr("ark.index.bm25.save_table", full_disk)
    index = open_index(graph, "bm25", progress=False)
    assert index.search(ONE_HOP[0], 3)
    assert "could not save the bm25 index" in caplog.text and "No space left on device" in caplog.text
    assert list((graph_dir / "index").iterdir()) == []  # no temporary or half-written folder
    monkeypatch.setattr("ark.index.bm25.save_table", real_save_table)
    open_index(graph, "bm25", progress=False)
    assert (index_folder(graph_dir) / "manifest.json").is_file()


def test_the_llm_cache_falls_back_to_memory_on_a_read_only_home(tmp_path, caplog):
    from ark.llm.cache import ResponseCache

    root = tmp_path / "home" / "llm-cache"
    root.parent.mkdir()
    root.parent.chmod(0o555)
    try:
        if os.access(root.parent, os.W_OK):
            pytest.skip("running as a user that can write a read-only folder (root)")
        cache = ResponseCache(root)
        cache.put("ab12", {"reply": 1})
        cache.put("cd34", {"reply": 2})
        assert cache.get("ab12") == {"format": 1, "reply": 1}
        assert caplog.text.count("keeping LLM replies in memory") == 1
    finally:
        root.parent.chmod(0o755)


def test_the_llm_cache_falls_back_to_memory_when_a_write_fails(tmp_path, monkeypatch, caplog):
    """The same as above where the test runs as root (a read-only folder is writable to root)."""
    from ark.llm import cache as cache_module

    def read_only(path, text, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))

    monkeypatch.setattr(cache_module, "atomic_write_text", read_only)
    cache = cache_module.ResponseCache(tmp_path / "llm-cache")
    cache.put("ab12", {"reply": 1})
    cache.put("cd34", {"reply": 2})
    assert cache.get("ab12") == {"format": 1, "reply": 1} and cache.get("cd34")["reply"] == 2
    assert caplog.text.count("keeping LLM replies in memory") == 1
    assert "Read-only file system" in caplog.text


def test_checksums_are_blake2b_of_the_whole_file(tmp_path):
    import hashlib

    path = tmp_path / "a.bin"
    path.write_bytes(np.arange(1000, dtype=np.int64).tobytes())
    record = checksums.file_record(path)
    assert record == {"size": 8000, "blake2b": hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()}


def test_files_hashed_once_are_rehashed_only_after_a_change(graph_dir, monkeypatch):
    """A file hashed in full is stamped with its stat; the next opening skips hashing it until a write moves its
    ctime, and then the damage is found as before."""
    monkeypatch.setattr(checksums, "RACY_S", -1.0)  # trust stamps of files written just now
    load_graph(graph_dir)
    assert sorted(json.loads((graph_dir / checksums.STAMP_FILE).read_text())) == [
        "codes.npy", "indptr.npy", "neighbors.npy", "node_type_codes.npy", "nodes.arrow"]
    real_digest = checksums.digest_file

    def no_hashing(path):
        raise AssertionError(f"{path} hashed again although unchanged")

    monkeypatch.setattr(checksums, "digest_file", no_hashing)
    load_graph(graph_dir)
    monkeypatch.setattr(checksums, "digest_file", real_digest)
    time.sleep(0.05)  # file times come from a coarse clock
    flip_byte(graph_dir / "neighbors.npy", 150)
    with pytest.raises(DamagedFileError, match=r"neighbors\.npy is damaged \(checksum mismatch\)"):
        load_graph(graph_dir)
    assert verify_ignores_stamps(graph_dir)


def verify_ignores_stamps(graph_dir: Path) -> bool:
    from ark.graph import verify_graph

    try:
        verify_graph(graph_dir)
    except DamagedFileError:
        return True
    return False
