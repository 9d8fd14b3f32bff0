"""A graph's text embeddings as SeedER and its baselines use them (numpy only, no torch).

- :class:`GraphEmbeddings`: the embedder's node vectors (cosine = dot product) and relation-name vectors, with
  query embedding and the similarity vectors sim(q, v) and sim(q, r) that seeds and heuristic expansions use.
- :class:`NodeFeatures`: SeedER's input features (Table 7, "PCA enabled / dimension: Yes / 256"): the node
  embeddings centred, projected on their top principal axes, then L2-normalised. Fitted once per graph and
  embedder and cached beside the graph (``<graph>/index/seeder-features-<hash>/``).
"""

from __future__ import annotations

import hashlib
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ark.index.embedders import Embedder, node_embeddings, normalise_rows, open_embedder
from ark.index.graph_index import _graph_fingerprint, settings_hash
from ark.index.topk import top_k
from ark.index.versioned import index_root
from ark.storage.cache_folder import publish, valid_manifest, writable
from ark.storage.locks import build_lock

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph

DEFAULT_PCA_DIM = 256
_QUERY_MEMO = 4096


def relation_text(relation: str) -> str:
    """The text embedded for a relation type: its name with separators as spaces (``has_phenotype`` →
    ``has phenotype``)."""
    return " ".join(relation.replace("_", " ").replace("-", " ").split())


@dataclass
class GraphEmbeddings:
    """Node and relation embeddings of one graph under one embedder."""

    embedder: Embedder
    nodes: np.ndarray  # (num_nodes, dim), unit rows
    relations: np.ndarray  # (num_relations, dim), unit rows, in graph.relation_types order
    _memo: dict[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def dimension(self) -> int:
        return int(self.nodes.shape[1])

    def query(self, text: str) -> np.ndarray:
        """The query's unit vector (memoised)."""
        if not isinstance(text, str):
            raise TypeError(f"query must be a string, got {type(text).__name__}")
        vector = self._memo.get(text)
        if vector is None:
            vector = self.embedder.embed([text])[0].astype(np.float32)
            if len(self._memo) >= _QUERY_MEMO:
                self._memo.clear()
            self._memo[text] = vector
        return vector

    def queries(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Unit vectors of many queries at once (for training sets)."""
        return self.embedder.embed(texts, batch_size=batch_size).astype(np.float32)

    def node_similarities(self, query_vector: np.ndarray) -> np.ndarray:
        """sim(q, v) for every node, float32."""
        return np.asarray(self.nodes @ query_vector, dtype=np.float32)

    def relation_similarities(self, query_vector: np.ndarray) -> np.ndarray:
        """sim(q, r) for every relation type, float32."""
        return np.asarray(self.relations @ query_vector, dtype=np.float32)

    def seeds(self, similarities: np.ndarray, k: int) -> np.ndarray:
        """The ``k`` nodes most similar to the query (ties by lower index): the dense seeds V_0."""
        ids, _ = top_k(np.arange(len(similarities)), similarities, k)
        return ids


_OPENED: weakref.WeakKeyDictionary[Any, dict[str, GraphEmbeddings]] = weakref.WeakKeyDictionary()


def open_graph_embeddings(graph: KnowledgeGraph, embedder: Embedder | str | None = None, progress: bool = True
                          ) -> GraphEmbeddings:
    """The graph's embeddings under ``embedder`` (a spec string or an :class:`Embedder`; None = the packaged
    default), built or read from the on-disk cache once per process and graph."""
    if not isinstance(embedder, Embedder):
        embedder = open_embedder(embedder)
    per_graph = _OPENED.setdefault(graph, {})
    found = per_graph.get(embedder.identity)
    if found is not None:
        return found
    nodes = node_embeddings(graph, embedder, progress=progress)
    relations = embedder.embed([relation_text(r) for r in graph.relation_types]) if graph.relation_types else \
        np.zeros((0, nodes.shape[1]), dtype=np.float32)
    if relations.shape[1:] != nodes.shape[1:]:
        raise ValueError(f"embedder {embedder.name} gave {relations.shape[1]}-dimensional relation vectors but the "
                         f"cached node vectors have {nodes.shape[1]} dimensions; delete the stale cache")
    opened = GraphEmbeddings(embedder, nodes, np.asarray(relations, dtype=np.float32))
    per_graph[embedder.identity] = opened
    return opened


@dataclass
class PCA:
    """A fitted projection: ``(x - mean) @ components.T`` then L2 normalisation."""

    mean: np.ndarray  # (input_dim,)
    components: np.ndarray  # (output_dim, input_dim), orthonormal rows

    @property
    def output_dim(self) -> int:
        return int(self.components.shape[0])

    def transform(self, vectors: np.ndarray) -> np.ndarray:
        """Project and L2-normalise; works on one vector or a matrix of rows."""
        vectors = np.asarray(vectors, dtype=np.float32)
        return normalise_rows((vectors - self.mean) @ self.components.T)

    def digest(self) -> str:
        digest = hashlib.sha256(np.ascontiguousarray(self.mean, dtype=np.float32).tobytes())
        digest.update(np.ascontiguousarray(self.components, dtype=np.float32).tobytes())
        return digest.hexdigest()[:16]


def fit_pca(vectors: np.ndarray, dim: int = DEFAULT_PCA_DIM, block: int = 65536) -> PCA:
    """Principal axes of ``vectors`` (rows), at most ``dim`` of them, by an eigen-decomposition of the covariance.

    numpy's ``eigh`` on the (input_dim × input_dim) covariance is exact and needs one pass over the rows
    (accumulated in blocks, so memory-mapped matrices are never copied whole). Each axis's sign is fixed so that
    its largest-magnitude entry is positive, which makes the fit deterministic.
    """
    n, width = vectors.shape
    if n == 0:
        raise ValueError("cannot fit a PCA on zero vectors")
    dim = max(1, min(dim, width))
    total = np.zeros(width, dtype=np.float64)
    scatter = np.zeros((width, width), dtype=np.float64)
    for start in range(0, n, block):
        chunk = np.asarray(vectors[start:start + block], dtype=np.float64)
        total += chunk.sum(axis=0)
        scatter += chunk.T @ chunk
    mean = total / n
    covariance = scatter / n - np.outer(mean, mean)
    values, axes = np.linalg.eigh(covariance)
    order = np.argsort(values)[::-1][:dim]
    components = axes[:, order].T
    signs = np.sign(components[np.arange(dim), np.abs(components).argmax(axis=1)])
    components *= np.where(signs == 0, 1.0, signs)[:, None]
    return PCA(mean.astype(np.float32), components.astype(np.float32))


@dataclass
class NodeFeatures:
    """SeedER's node input features and the PCA that made them (apply ``pca.transform`` to queries)."""

    pca: PCA
    nodes: np.ndarray  # (num_nodes, pca.output_dim), unit rows

    def query(self, query_vector: np.ndarray) -> np.ndarray:
        return self.pca.transform(query_vector)


def _cached_features(directory: Path, identity: dict[str, Any], pca: PCA | None) -> NodeFeatures | None:
    """The features cached in ``directory`` for ``identity`` (and ``pca``, when given), checksums checked."""
    manifest = valid_manifest(directory, identity)
    if manifest is None or (pca is not None and manifest.get("pca") != pca.digest()):
        return None
    with np.load(directory / "pca.npz") as saved:
        cached_pca = PCA(saved["mean"], saved["components"])
    return NodeFeatures(cached_pca, np.load(directory / "features.npy", mmap_mode="r"))


def open_node_features(graph: KnowledgeGraph, embeddings: GraphEmbeddings, dim: int = DEFAULT_PCA_DIM,
                       pca: PCA | None = None,
                       ) -> NodeFeatures:
    """PCA features of the graph's nodes: fitted on first use and cached with the graph, or computed with a given
    ``pca`` (a trained model's own), reusing the cache when it holds that very projection."""
    settings = {"kind": "seeder-features", "identity": embeddings.embedder.identity, "dim": dim}
    fingerprint = _graph_fingerprint(graph)
    graph_path = getattr(graph, "path", None)
    directory = None if graph_path is None or fingerprint is None else \
        index_root(graph) / "index" / f"seeder-features-{settings_hash(settings)}"
    identity = {"fingerprint": fingerprint, "settings": settings}
    if directory is not None:
        cached = _cached_features(directory, identity, pca)
        if cached is not None:
            return cached
    fitted = pca or fit_pca(embeddings.nodes, dim)
    features = np.ascontiguousarray(fitted.transform(embeddings.nodes))
    if directory is None or not writable(directory.parent) or pca is not None:
        return NodeFeatures(fitted, features)
    with build_lock(directory):  # one builder; the others wait, then open what it wrote
        cached = _cached_features(directory, identity, pca)
        if cached is not None:
            return cached

        def write(folder: Path) -> None:
            np.save(folder / "features.npy", features)
            np.savez(folder / "pca.npz", mean=fitted.mean, components=fitted.components)

        try:
            publish(directory, {**identity, "pca": fitted.digest()}, write)
        except OSError:  # a full or read-only disk: the features stay in memory (nothing half-written is left)
            return NodeFeatures(fitted, features)
    return NodeFeatures(fitted, np.load(directory / "features.npy", mmap_mode="r"))
