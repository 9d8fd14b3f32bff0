"""Node embeddings that follow graph updates: a version's vectors reuse every earlier version's, embedding only the
nodes that are new or whose document changed.

Each saved embedding matrix (the ``dense`` index, :func:`~ark.index.embedders.node_embeddings`) is written with
``doc_keys.npy``: per row, a 16-byte BLAKE2b digest of the node id and its document. Building the matrix of a graph
version looks for matrices of the same cache name and settings under the graph's earlier versions (the first base,
compacted bases, update folders; newest first), takes the rows whose key is found there and embeds only the rest.
A base cache written before keys existed gets its keys computed from that base's documents. An embedder is a
function of the text, so a reused row equals the row a rebuild would embed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..arrays import F32, I64, Floats, Keys
from ..storage.cache_folder import read_manifest
from ..storage.checksums import DamagedFileError, check_files

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

KEYS_FILE = "doc_keys.npy"
VECTORS_FILE = "embeddings.npy"
KEY_BYTES = 16


def document_keys(ids: Sequence[str], documents: Sequence[str]) -> Keys:
    """Per node, a digest of its id and document (dtype ``S16``): equal keys, equal text to embed."""
    keys = np.empty(len(ids), dtype=f"S{KEY_BYTES}")
    for i, (node_id, doc) in enumerate(zip(ids, documents, strict=True)):
        digest = hashlib.blake2b(node_id.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES)
        digest.update(b"\0")
        digest.update((doc or "").encode("utf-8", "surrogatepass"))
        keys[i] = digest.digest()
    return keys


def _version_folders(root: Path) -> list[tuple[int, Path]]:
    """(version, folder) of every base and update folder of the graph at ``root``, newest first."""
    found = [(0, root)]
    for sub in ("bases", "deltas"):
        for folder in (root / sub).glob("[0-9]*") if (root / sub).is_dir() else ():
            if folder.name.isdigit():
                found.append((int(folder.name), folder))
    return sorted(found, key=lambda item: (-item[0], item[1].parent.name != "bases"))


def earlier_caches(graph: KnowledgeGraph, cache_name: str, settings: Mapping[str, object], current: Path | None
                   ) -> Iterator[tuple[Keys, Floats]]:
    """(keys, vectors) of the saved matrices named ``cache_name`` with ``settings`` under the graph's versions,
    newest first, leaving out ``current`` (the folder being built); damaged or unkeyed ones are skipped."""
    if graph.path is None or graph.info.version_segments is None:
        return
    for _version, folder in _version_folders(graph.folder()):
        directory = folder / "index" / cache_name
        if current is not None and directory.resolve() == current.resolve():
            continue
        manifest = read_manifest(directory)
        if manifest is None or manifest.get("settings") != settings:
            continue
        try:
            check_files(directory, manifest.get("files") or {}, "")
            vectors = np.load(directory / VECTORS_FILE, mmap_mode="r")
            keys = (np.load(directory / KEYS_FILE) if (directory / KEYS_FILE).is_file()
                    else _base_keys(folder, settings))
        except (DamagedFileError, OSError, ValueError):
            continue
        if keys is not None and len(keys) == len(vectors):
            yield keys, vectors


def _base_keys(folder: Path, settings: Mapping[str, object]) -> Keys | None:
    """Keys of a base's matrix saved without them, from that base's own documents (None for an update folder)."""
    if not (folder / "graph.json").is_file():
        return None
    from ..graph.storage import load_graph_directory
    from .graph_index import node_documents

    base = load_graph_directory(folder)
    fields = settings.get("fields")  # a dense index's node-type fields; none for the embeddings cache
    fields = fields if isinstance(fields, dict) and fields else None
    return document_keys(base.nodes.column("id").to_pylist(), list(node_documents(base, fields)))


def reuse_rows(keys: Keys, earlier: Iterator[tuple[Keys, Floats]], dimension: int | None
               ) -> tuple[F32 | None, I64]:
    """The rows of ``keys`` found in ``earlier`` matrices (None when none was found) and the positions still
    missing, ascending."""
    missing = np.arange(len(keys))
    out: F32 | None = None
    for old_keys, old_vectors in earlier:
        if missing.size == 0:
            break
        if out is None:
            if dimension is not None and old_vectors.shape[1] != dimension:
                continue
            out = np.zeros((len(keys), old_vectors.shape[1]), dtype=np.float32)
        elif old_vectors.shape[1] != out.shape[1]:
            continue
        if len(old_keys) == 0:
            continue
        order = np.argsort(old_keys, kind="stable")
        wanted = keys[missing]
        at = order[np.minimum(np.searchsorted(old_keys, wanted, sorter=order), len(old_keys) - 1)]
        hit = old_keys[at] == wanted
        out[missing[hit]] = old_vectors[at[hit]]
        missing = missing[~hit]
    return out, missing


def embed_following_updates(graph: KnowledgeGraph, documents: Sequence[str], cache_name: str,
                            settings: Mapping[str, object],
                            current: Path | None, embed: Callable[[Sequence[str], Path | None], Floats],
                            cache_dir: Path | None) -> tuple[F32, Keys]:
    """(vectors, keys) of the graph's node ``documents``: rows of earlier versions reused, the others embedded by
    ``embed(texts, cache_dir)`` (resumable through ``cache_dir``)."""
    ids = graph.nodes.column("id").to_pylist()
    keys = document_keys(ids, documents)
    vectors, missing = reuse_rows(keys, earlier_caches(graph, cache_name, settings, current), None)
    if vectors is None:
        return np.ascontiguousarray(embed(documents, cache_dir), dtype=np.float32), keys
    if missing.size:
        fresh = embed([documents[int(i)] for i in missing], cache_dir)
        vectors[missing] = fresh
    return vectors, keys
