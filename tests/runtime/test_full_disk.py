"""A full disk while a cache, an index or a graph is written: one error naming the file being written and saying the
disk is full (with the space left), and nothing half-written or temporary left behind."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ark.graph import load_graph
from ark.index import open_index
from ark.storage.atomic import atomic_directory
from tests.support.full_disk import full_disk_command
from tests.support.graphs import ONE_HOP, save_clinical_graph

REPO = Path(__file__).resolve().parents[2]
SHORT_WRITE = "929814 requested and 438272 written"  # numpy's tofile on a full disk: no errno, no file


def fill_disk_at_the_second_run(monkeypatch) -> list[Path]:
    """Make the BM25 build's second spilled run (numbered by its first document) stop as numpy's tofile does on a
    full disk, after writing part of its file; returns the half-written file's path (once written)."""
    from ark.index import bm25_build

    real = bm25_build.SortedRuns.spill_term_major
    written: list[Path] = []

    def spill(self, counts, field_lengths, first_doc, number):
        if number == 0:
            return real(self, counts, field_lengths, first_doc, number)
        half = self.directory / f"run{number:05d}.docs"
        np.zeros(100, np.int32).tofile(half)
        written.append(half)
        raise OSError(SHORT_WRITE)

    monkeypatch.setattr(bm25_build.SortedRuns, "spill_term_major", spill)
    monkeypatch.setattr(bm25_build, "PIPELINE_WORKERS", 0)
    return written


def test_a_full_disk_during_the_index_build_names_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    graph = load_graph(save_clinical_graph(tmp_path / "clinical"))
    written = fill_disk_at_the_second_run(monkeypatch)
    from ark.index import bm25

    real_build = bm25.BM25Index.build_fielded.__func__

    def small_chunks(cls, *args, **kwargs):  # several runs from the small graph
        return real_build(cls, *args, **{**kwargs, "chunk_size": 8})

    monkeypatch.setattr(bm25.BM25Index, "build_fielded", classmethod(small_chunks))
    with pytest.raises(OSError) as info:
        open_index(graph, "bm25", progress=False)
    error = info.value
    assert error.errno == errno.ENOSPC and written and error.filename == str(written[0]), (error, written)
    message = str(error)
    assert "disk is full" in message and str(written[0]) in message and "MB free" in message, message
    assert SHORT_WRITE in message  # what the write itself said, kept
    assert [p.name for p in (graph.path / "index").iterdir() if not p.name.endswith(".lock")] == []


def test_the_cli_says_the_disk_is_full_on_one_line(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ark.cli.main import app

    graph_dir = save_clinical_graph(tmp_path / "clinical")
    fill_disk_at_the_second_run(monkeypatch)
    from ark.index import bm25

    real_build = bm25.BM25Index.build_fielded.__func__
    monkeypatch.setattr(bm25.BM25Index, "build_fielded",
                        classmethod(lambda cls, *a, **k: real_build(cls, *a, **{**k, "chunk_size": 8})))
    result = CliRunner().invoke(app, ["ask", str(graph_dir), ONE_HOP[0], "--offline", "--top", "3"],
                                env={"COLUMNS": "2000"})
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "cannot write" in errors[0] and "the disk is full" in errors[0], result.output
    assert ".partial/" in errors[0] and "/runs/run00008.docs: " in errors[0], errors  # the half-written file


def test_a_full_disk_while_a_folder_is_saved_names_its_newest_file(tmp_path):
    target = tmp_path / "out"
    with pytest.raises(OSError) as info, atomic_directory(target) as folder:
        (folder / "a.npy").write_bytes(b"done")
        with open(folder / "b.npy", "wb") as handle:
            handle.write(b"half")
            handle.flush()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # a flush's error: no file name
    assert info.value.filename == str(target.parent / folder.name / "b.npy"), info.value
    assert "disk is full" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # neither the folder nor its temporary


def _tmpfs_works() -> bool:
    if shutil.which("unshare") is None or not sys.platform.startswith("linux"):
        return False
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _tmpfs_works(), reason="needs unshare and mount (a private size-limited tmpfs)")
def test_a_real_full_disk_during_the_index_build(tmp_path):
    """A 3 MB tmpfs holding a 4,000-node graph, filled but for 200 kB: the BM25 build's scratch runs fill it."""
    disk = tmp_path / "disk"
    disk.mkdir()
    graph = disk / "g"
    done = subprocess.run(full_disk_command(disk), capture_output=True, text=True,
                          timeout=300, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "400",
                                                      "ARK_HOME": str(tmp_path / "home")})
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert f"cannot write {graph}/index/" in errors[0] and "the disk is full" in errors[0], errors
    assert "MB free on that disk" in errors[0], errors
    assert done.stderr.rstrip().endswith("left:"), done.stderr  # no .partial folder, no half-written file
