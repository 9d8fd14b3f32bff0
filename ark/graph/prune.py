"""Removing what no version of a graph that changes references any more (:mod:`ark.graph.versions`), at compaction.

After a compaction to base version b, versions before b can no longer be opened, so their embedding caches (the
``dense`` index and node-embedding matrices under ``index/`` of the first base, of earlier compacted bases and of
earlier update folders) and their Cypher databases are removed. Kept: everything of versions b and later, including
the caches in update folder b (the matrices a new base's caches reuse rows from) and every text index (BM25 segments
are not embedding caches). A folder is renamed aside before it is deleted, so a process killed meanwhile leaves
either the folder whole or a ``.pruned-*`` leftover that the next compaction removes; a reader still holding an
older version keeps the files it has open (POSIX unlink).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

VECTORS_FILE = "embeddings.npy"  # what every node-embedding cache holds (ark.index.reuse.VECTORS_FILE)
PRUNED = ".pruned-"


def superseded_folders(root: Path, base: int) -> list[Path]:
    """The version folders (first base, compacted bases, update folders) of versions before ``base``."""
    found = [root] if base > 0 else []
    for sub in ("bases", "deltas"):
        folder = root / sub
        if folder.is_dir():
            found += sorted(p for p in folder.iterdir() if p.name.isdigit() and int(p.name) < base)
    return found


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


def prune_superseded(root: str | Path, manifest: dict[str, Any]) -> list[Path]:
    """Remove the embedding caches and Cypher databases of versions before the manifest's base (see the module
    doc); returns the folders removed."""
    root = Path(root)
    base = int(manifest["base"]["version"])
    doomed = [cache for folder in superseded_folders(root, base) for cache in embedding_caches(folder)]
    doomed += cypher_databases(root, base)
    for folder in doomed:
        aside = folder.with_name(PRUNED + folder.name)
        shutil.rmtree(aside, ignore_errors=True)
        folder.rename(aside)
        shutil.rmtree(aside, ignore_errors=True)
    for leftover in [*root.glob(f"*/{PRUNED}*"), *root.glob(f"*/*/{PRUNED}*"), *root.glob(f"*/*/*/{PRUNED}*")]:
        shutil.rmtree(leftover, ignore_errors=True)  # from a prune that was killed
    return doomed
