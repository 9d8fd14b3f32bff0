"""Opening, saving and checking a graph folder: the one door to a graph on disk, above the store and versioning.

``load_graph(path)`` opens the graph saved at ``path``, its current version when it has been updated;
``save_graph(graph, path)`` writes a graph as a directory, atomically; ``verify_graph(path)`` hashes every file.
The layers of ``ark.graph`` import one way (pyproject.toml's import-linter contract): this module uses
:mod:`.versioning` and :mod:`.storage`; versioning uses storage; storage uses :mod:`.store`; the store (the
in-memory :class:`~ark.graph.store.KnowledgeGraph`) knows nothing of files.
"""

from __future__ import annotations

from pathlib import Path

from .storage import MANIFEST, REBUILD_HINT, load_graph_directory, save_graph, verify_graph_directory
from .store import KnowledgeGraph

__all__ = ["load_graph", "save_graph", "verify_graph"]


def load_graph(path: str | Path, mmap: bool = True, rebuild_hint: str = REBUILD_HINT) -> KnowledgeGraph:
    """Open the graph directory ``path`` written by :func:`save_graph` (its current version when it has been
    updated: :mod:`ark.graph.versioning`); arrays are memory-mapped unless ``mmap=False``.

    Raises ``FileNotFoundError`` for a folder without ``graph.json`` and
    :class:`~ark.storage.checksums.DamagedFileError` (naming the file, and ``rebuild_hint`` as the fix) when a file
    does not match its checksum.
    """
    if (Path(path) / MANIFEST).is_file():
        # Imported here for start-up time, not for a cycle (versioning imports nothing of this module): opening a
        # graph never updated does not need versioning's pyarrow.compute (~0.1 s, tests/cli/test_startup.py).
        from .versioning.versions import open_version

        return open_version(path, mmap=mmap)
    return load_graph_directory(path, mmap, rebuild_hint)


def verify_graph(path: str | Path, rebuild_hint: str = REBUILD_HINT) -> int:
    """Hash every file of the graph at ``path`` in full (its base, its updates and the current version's content
    against its recorded fingerprint); the number of files checked (0 for a graph saved before checksums).
    Raises :class:`~ark.storage.checksums.DamagedFileError` naming the first damaged file."""
    count = verify_graph_directory(path, rebuild_hint)
    if not (Path(path) / MANIFEST).is_file():
        return count
    from .versioning.versions import verify_versions  # start-up, as in load_graph

    return count + verify_versions(path)
