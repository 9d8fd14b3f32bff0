"""Removing what no version of a graph that changes references any more (:mod:`ark.graph.versioning`), at compaction.

After a compaction to base version b, versions before b can no longer be opened, so their embedding caches (the
``dense`` index and node-embedding matrices under ``index/`` of the first base, of earlier compacted bases and of
earlier update folders) and their Cypher databases are removed. Kept: everything of versions b and later, and of
each embedding cache that no version from b on has yet, the newest earlier one (the matrix the base's cache will
take its rows from, :mod:`ark.index.reuse`); text indexes (BM25 segments) are not touched. A folder is renamed
aside before it is deleted, so a process killed meanwhile leaves either the folder whole or a ``.pruned-*``
leftover that the next compaction removes; a reader still holding an older version keeps the files it has open
(POSIX unlink).
"""

from __future__ import annotations

import shutil
from pathlib import Path

VECTORS_FILE = "embeddings.npy"  # what every node-embedding cache holds (ark.index.reuse.VECTORS_FILE)
PRUNED = ".pruned-"


def version_folders(root: Path) -> list[tuple[int, Path]]:
    """(version, folder) of the first base, compacted bases and update folders, oldest first."""
    found = [(0, root)]
    for sub in ("bases", "deltas"):
        folder = root / sub
        if folder.is_dir():
            found += [(int(p.name), p) for p in folder.iterdir() if p.name.isdigit()]
    return sorted(found, key=lambda item: (item[0], str(item[1])))


def superseded_caches(root: Path, base: int) -> list[Path]:
    """The embedding caches of versions before ``base`` that no version from ``base`` on needs: all of them where a
    version from ``base`` on has a cache of the same name, else all but the newest (the one the next build of the
    base's cache takes its rows from)."""
    older: dict[str, list[Path]] = {}
    current: set[str] = set()
    for version, folder in version_folders(root):
        for cache in embedding_caches(folder):
            if version >= base:
                current.add(cache.name)
            else:
                older.setdefault(cache.name, []).append(cache)
    return [cache for name, caches in older.items() for cache in (caches if name in current else caches[:-1])]


def embedding_caches(folder: Path) -> list[Path]:
    """The node-embedding caches (folders holding ``embeddings.npy``) under ``folder/index``."""
    index = folder / "index"
    if not index.is_dir():
        return []
    return sorted(p for p in index.iterdir() if p.is_dir() and not p.name.startswith(".")
                  and (p / VECTORS_FILE).is_file())


def cypher_databases(root: Path, base: int) -> list[Path]:
    """The Cypher database folders of versions before ``base``: ``cypher/ladybug-*`` (version 0) and
    ``cypher/versions/NNNNNN`` below ``base``."""
    found = sorted(p for p in (root / "cypher").glob("ladybug-*") if p.is_dir()) if base > 0 else []
    versions = root / "cypher" / "versions"
    if versions.is_dir():
        found += sorted(p for p in versions.iterdir() if p.name.isdigit() and int(p.name) < base)
    return found


def prune_superseded(root: str | Path, base: int) -> list[Path]:
    """Remove the embedding caches and Cypher databases of versions before version ``base`` (the manifest's base;
    see the module doc); returns the folders removed."""
    root = Path(root)
    doomed = superseded_caches(root, base) + cypher_databases(root, base)
    for folder in doomed:
        aside = folder.with_name(PRUNED + folder.name)
        shutil.rmtree(aside, ignore_errors=True)
        folder.rename(aside)
        shutil.rmtree(aside, ignore_errors=True)
    for leftover in [*root.glob(f"*/{PRUNED}*"), *root.glob(f"*/*/{PRUNED}*"), *root.glob(f"*/*/*/{PRUNED}*")]:
        shutil.rmtree(leftover, ignore_errors=True)  # from a prune that was killed
    return doomed
