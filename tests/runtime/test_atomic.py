"""ark.storage.atomic: a write replaces the target completely or leaves it as it was, with no temp left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ark.storage.atomic
from ark.storage.atomic import atomic_directory, atomic_file, atomic_write_bytes, atomic_write_text


class Boom(Exception):
    pass


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# ------------------------------------------------------------------------------------------------ files
def test_write_text_creates_missing_file_and_folders(tmp_path):
    target = tmp_path / "a" / "b" / "out.txt"
    assert atomic_write_text(target, "héllo\n") == target
    assert target.read_text(encoding="utf-8") == "héllo\n"
    assert names(target.parent) == ["out.txt"]


def test_write_replaces_existing_file(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    atomic_write_bytes(target, b"new content")
    assert target.read_bytes() == b"new content"
    assert names(tmp_path) == ["out.bin"]


def test_failure_midway_keeps_old_file_and_removes_temp(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    with pytest.raises(Boom), atomic_file(target) as handle:
        handle.write("half of the new")
        handle.flush()
        raise Boom
    assert target.read_text() == "old\n"
    assert names(tmp_path) == ["out.jsonl"]


def test_failure_on_missing_target_leaves_nothing(tmp_path):
    target = tmp_path / "never.txt"
    with pytest.raises(Boom), atomic_file(target, "wb") as handle:
        handle.write(b"x")
        raise Boom
    assert names(tmp_path) == []


def test_unknown_mode_names_the_valid_ones(tmp_path):
    with pytest.raises(ValueError, match=r"'a'.*w, wb"), atomic_file(tmp_path / "x", "a"):
        pass
    assert names(tmp_path) == []


# ------------------------------------------------------------------------------------------ directories
@pytest.fixture(params=["exchange", "two renames"])
def swap(request, monkeypatch):
    """Run directory tests through the atomic swap (where the platform has it) and through the fallback."""
    if request.param == "exchange":
        if ark.storage.atomic._renameat2 is None:
            pytest.skip("no renameat2 on this platform")
    else:
        monkeypatch.setattr(ark.storage.atomic, "_renameat2", None)
    return request.param


def test_directory_created_when_target_missing(tmp_path, swap):
    target = tmp_path / "nested" / "index"
    with atomic_directory(target) as tmp:
        assert tmp.parent == target.parent and tmp.is_dir() and not target.exists()
        (tmp / "data.txt").write_text("new")
    assert names(target) == ["data.txt"]
    assert names(target.parent) == ["index"]


def test_directory_replaces_old_one_completely(tmp_path, swap):
    target = tmp_path / "index"
    target.mkdir()
    (target / "stale.txt").write_text("old")
    with atomic_directory(target) as tmp:
        (tmp / "data.txt").write_text("new")
    assert names(target) == ["data.txt"]
    assert (target / "data.txt").read_text() == "new"
    assert names(tmp_path) == ["index"]


def test_directory_failure_midway_keeps_old_one(tmp_path, swap):
    target = tmp_path / "index"
    target.mkdir()
    (target / "data.txt").write_text("old")
    with pytest.raises(Boom), atomic_directory(target) as tmp:
        (tmp / "data.txt").write_text("half")
        raise Boom
    assert (target / "data.txt").read_text() == "old"
    assert names(tmp_path) == ["index"]


def test_directory_failure_on_missing_target_leaves_nothing(tmp_path):
    with pytest.raises(Boom), atomic_directory(tmp_path / "index") as tmp:
        (tmp / "data.txt").write_text("half")
        raise Boom
    assert names(tmp_path) == []


def test_directory_prepared_elsewhere_can_be_published(tmp_path, swap):
    """The documented hand-over: remove the yielded folder and rename a prepared sibling onto its path."""
    target = tmp_path / "processed"
    target.mkdir()
    prepared = tmp_path / ".unpacked"
    prepared.mkdir()
    (prepared / "node_info.pkl").write_bytes(b"\x80")
    with atomic_directory(target) as staging:
        staging.rmdir()
        prepared.rename(staging)
    assert names(target) == ["node_info.pkl"]
    assert names(tmp_path) == ["processed"]


def test_exchange_swaps_two_directories_where_supported(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "from_a").touch()
    if not ark.storage.atomic._exchange(a, b):
        pytest.skip("this platform or filesystem cannot swap atomically (the two-rename fallback is used)")
    assert names(a) == [] and names(b) == ["from_a"]


# ------------------------------------------------------------------------------------------- permissions
WRITE_BOTH = """
import stat, sys
import os
import subprocess
import sys
from pathlib import Path
from ark.storage.atomic import atomic_directory, atomic_write_text
root = Path(sys.argv[1])
atomic_write_text(root / "file.txt", "x")
with atomic_directory(root / "folder") as tmp:
    (tmp / "inner.txt").write_text("y")
print(oct(stat.S_IMODE((root / "file.txt").stat().st_mode)), oct(stat.S_IMODE((root / "folder").stat().st_mode)))
"""


@pytest.mark.parametrize(("umask", "file_mode", "dir_mode"), [(0o022, 0o644, 0o755), (0o027, 0o640, 0o750)])
def test_written_paths_get_the_modes_the_umask_allows(tmp_path, umask, file_mode, dir_mode):
    """Like open()/mkdir(), not mkstemp/mkdtemp's owner-only 0600/0700 (a fresh process reads the umask)."""
    previous = os.umask(umask)
    try:
        done = subprocess.run([sys.executable, "-c", WRITE_BOTH, str(tmp_path)], capture_output=True, text=True,
                              check=True, cwd=Path(ark.storage.atomic.__file__).parents[2])
    finally:
        os.umask(previous)
    assert done.stdout.split() == [oct(file_mode), oct(dir_mode)]


# ------------------------------------------------------------------------------------------------ killed saves
def test_a_save_killed_midway_leaves_a_folder_the_next_save_removes(tmp_path):
    target = tmp_path / "graphs" / "hpo"
    script = (f"import os, time; from ark.storage.atomic import atomic_directory\n"
              f"with atomic_directory({str(target)!r}) as tmp:\n"
              f"    (tmp / 'part').write_text('half'); print(tmp, flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    left = Path(child.stdout.readline().strip())
    assert left.name.startswith(f".hpo.tmp-{child.pid}-")
    assert ark.storage.atomic.remove_stale_temporaries(target) == []  # its writer still runs: kept
    child.kill()
    child.wait()
    assert left.is_dir()  # a kill runs no clean-up
    with atomic_directory(target) as tmp:
        (tmp / "graph.json").write_text("{}")
    assert names(target.parent) == ["hpo"]


def test_temporaries_from_before_process_ids_are_removed_once_old(tmp_path):
    target = tmp_path / "hpo"
    legacy = tmp_path / ".hpo.tmp-k2j4_x9a"
    legacy.mkdir()
    fresh = tmp_path / ".hpo.tmp-zz81qq0b"
    fresh.mkdir()
    other = tmp_path / ".hpo2.tmp-999999999-abc"
    other.mkdir()
    os.utime(legacy, (1, 1))
    assert ark.storage.atomic.remove_stale_temporaries(target) == [legacy]
    assert names(tmp_path) == [".hpo.tmp-zz81qq0b", ".hpo2.tmp-999999999-abc"]


def test_opening_a_built_in_graph_removes_a_killed_build(tmp_path, monkeypatch):
    from ark.loaders import registry
    from tests.support.graphs import build_small_graph

    monkeypatch.setenv("ARK_HOME", str(tmp_path))
    monkeypatch.setitem(registry.BUILDERS, "small", build_small_graph)
    registry.build_named_graph("small")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    killed = tmp_path / "graphs" / f".small.tmp-{dead.pid}-abcd1234"
    killed.mkdir()
    registry.open_graph("small")
    assert names(tmp_path / "graphs") == ["small"]


def test_probe_writable_names_the_offending_path(tmp_path):
    from ark.storage.atomic import probe_writable

    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError) as info:
        probe_writable(tmp_path / "file" / "sub" / "out.jsonl")
    assert info.value.filename == str(tmp_path / "file")
    with pytest.raises(IsADirectoryError):
        probe_writable(tmp_path)
    probe_writable(tmp_path / "new" / "out.jsonl")
    assert names(tmp_path) == ["file"]  # nothing created by a check
