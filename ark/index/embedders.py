"""Pluggable text embedders and a resumable on-disk cache of a graph's node embeddings.

An :class:`Embedder` turns texts into L2-normalised float32 vectors and names itself twice: ``name`` for people
(progress bars, messages) and ``identity`` for machines (cache keys, model directories): two embedders with the
same identity must give the same vectors. Two implementations:

- :class:`SentenceTransformerEmbedder`: the packaged all-MiniLM-L6-v2 (default, offline) or any
  sentence-transformers model directory; loading goes through :func:`ark.index.dense.load_encoder`.
- :class:`OpenAIEmbedder`: any OpenAI-compatible ``/v1/embeddings`` endpoint (OpenAI, vLLM, Ollama, TEI, ...)
  through the ``openai`` SDK.

:func:`open_embedder` builds one from a short spec string; :func:`node_embeddings` embeds every node document of
a graph once and caches the matrix next to the graph (``<graph>/index/embed-<hash>/``), resuming an interrupted
build. The default embedder reuses the ``dense`` text index (:func:`ark.index.open_index`), so the two never
embed the graph twice.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ark.arrays import F32, Floats, Keys
from ark.errors import ArkError
from ark.index.dense import DEFAULT_MODEL, DenseIndex, embed_texts, load_encoder
from ark.index.embedding_usage import EMBEDDING_USAGE, ENDPOINT, count_local
from ark.index.graph_index import (
    GraphTextIndex,
    _graph_fingerprint,
    node_documents,
    open_index,
    settings_hash,
)
from ark.index.sorted_encoding import supports_sorted_encoding
from ark.storage.cache_folder import open_cached

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

    from ..graph import KnowledgeGraph

DEFAULT_EMBEDDER = DEFAULT_MODEL
OPENAI_PREFIX = "openai:"
EMBEDDER_SPEC_HELP = (f"'{DEFAULT_EMBEDDER}' (packaged, offline), a sentence-transformers model directory, or "
                      f"'{OPENAI_PREFIX}MODEL' for an OpenAI-compatible /v1/embeddings endpoint")


class EmbeddingError(RuntimeError, ArkError):
    """An embedder that could not produce vectors (endpoint down, wrong model, malformed reply)."""


@runtime_checkable
class Embedder(Protocol):
    """Texts to L2-normalised float32 vectors of a fixed dimension."""

    name: str  # for people: progress bars and messages
    identity: str  # for caches and model directories: equal identities give equal vectors

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> F32:
        """Shape ``(len(texts), dimension)``, float32, each row of unit length (or zero for a zero vector)."""
        ...


def normalise_rows(vectors: npt.ArrayLike) -> F32:
    """Rows scaled to unit L2 norm (zero rows stay zero), as float32."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def _directory_digest(path: Path) -> str:
    """A cheap fingerprint of a model directory: its small config files' contents and every file's size."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        digest.update(rel.encode())
        size = file.stat().st_size
        digest.update(str(size).encode())
        if file.suffix == ".json" and size < 1_000_000:
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


class SentenceTransformerEmbedder:
    """A sentence-transformers model: the packaged all-MiniLM-L6-v2 by name, or a model directory."""

    def __init__(self, model: str | Path = DEFAULT_EMBEDDER, device: str = "cpu",
                 encoder: SentenceTransformer | None = None) -> None:
        self.model = str(model)
        self.spec = self.model  # what open_embedder takes to make this embedder again
        self.device = device
        self._encoder = encoder
        if self.model == DEFAULT_EMBEDDER:
            self.name = DEFAULT_EMBEDDER
            self.identity = f"sentence-transformers:{DEFAULT_EMBEDDER}"
        else:
            path = Path(model).expanduser()
            if not path.is_dir():
                raise ValueError(f"embedder {self.model!r} is neither {DEFAULT_EMBEDDER!r} nor a directory; "
                                 f"valid: {EMBEDDER_SPEC_HELP}")
            self.name = path.name
            self.identity = f"sentence-transformers:{path.name}:{_directory_digest(path)}"

    @property
    def encoder(self) -> SentenceTransformer:
        if self._encoder is None:
            self._encoder = load_encoder(self.model, device=self.device)
        return self._encoder

    @property
    def dimension(self) -> int:
        encoder = self.encoder
        get = getattr(encoder, "get_embedding_dimension", None) or encoder.get_sentence_embedding_dimension
        dimension = get()
        if dimension is None:
            raise ValueError(f"the sentence-transformers model {self.model!r} does not say its embedding dimension")
        return int(dimension)

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> F32:
        if len(texts) == 0:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if supports_sorted_encoding(self.encoder):  # one length sort, token-budget batches (counts its tokens)
            return embed_texts(texts, self.spec, progress=False, encoder=self.encoder)
        batch = [t or "" for t in texts]
        vectors = self.encoder.encode(batch, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True)
        count_local(self.spec, self.encoder, batch)
        return np.asarray(vectors, dtype=np.float32)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self.model!r})"


class OpenAIEmbedder:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint.

    ``base_url`` and ``api_key`` default to the SDK's own environment variables (``OPENAI_BASE_URL``,
    ``OPENAI_API_KEY``); local servers ignore the key, so a placeholder is sent when none is set. The identity
    is the model name (plus ``dimensions`` when set), not the URL: the same model served elsewhere gives the same
    vectors. Blank texts are sent as a single space (endpoints reject empty inputs).
    """

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 dimensions: int | None = None, timeout_s: float = 60.0, max_retries: int = 4) -> None:
        import os

        import openai

        if not model:
            raise ValueError("an OpenAI embedder needs a model name, e.g. 'openai:text-embedding-3-small'")
        if dimensions is not None and dimensions < 1:
            raise ValueError(f"dimensions must be a positive integer, got {dimensions}")
        self.model = model
        self.dimensions = dimensions
        self.name = self.spec = f"{OPENAI_PREFIX}{model}"
        self.identity = f"openai-embeddings:{model}" + (f":{dimensions}" if dimensions else "")
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout_s, max_retries=max_retries)
        self.base_url = str(self._client.base_url).rstrip("/")
        self._dimension = dimensions
        self.tokens = 0  # prompt tokens the endpoint reported for every text embedded so far

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.embed(["dimension probe"]).shape[1])
        return self._dimension

    def embed(self, texts: Sequence[str], batch_size: int = 64) -> F32:
        import openai

        rows: list[F32] = []
        for start in range(0, len(texts), max(1, batch_size)):
            batch = [t if t and t.strip() else " " for t in texts[start:start + batch_size]]
            extra = {"dimensions": self.dimensions} if self.dimensions else {}
            try:
                reply = self._client.embeddings.create(model=self.model, input=batch, encoding_format="float",
                                                       **extra)  # type: ignore[arg-type]
            except openai.OpenAIError as exc:
                raise EmbeddingError(f"embedding endpoint {self.base_url} failed for model {self.model!r}: "
                                     f"{exc}") from exc
            reported = _reported_tokens(getattr(reply, "usage", None))
            self.tokens += reported or 0
            EMBEDDING_USAGE.add(self.spec, len(batch), reported or 0, ENDPOINT,
                                texts_without_usage=0 if reported is not None else len(batch))
            items = sorted(reply.data, key=lambda item: item.index)
            if len(items) != len(batch):
                raise EmbeddingError(f"embedding endpoint {self.base_url} returned {len(items)} vectors for "
                                     f"{len(batch)} texts")
            rows.append(np.asarray([item.embedding for item in items], dtype=np.float32))
        if not rows:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        vectors = normalise_rows(np.concatenate(rows))
        if self._dimension is None:
            self._dimension = int(vectors.shape[1])
        elif vectors.shape[1] != self._dimension:
            raise EmbeddingError(f"embedding endpoint {self.base_url} returned {vectors.shape[1]}-dimensional "
                                 f"vectors for model {self.model!r}, expected {self._dimension}")
        return vectors

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self.model!r}, base_url={self.base_url!r})"


def _reported_tokens(usage: object) -> int | None:
    """The tokens an embeddings reply's ``usage`` reports (``prompt_tokens``, else ``total_tokens``), or None when
    it reports none (some local servers send no usage)."""
    for key in ("prompt_tokens", "total_tokens"):
        value = getattr(usage, key, None)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def open_embedder(spec: str | Path | None = None, *, base_url: str | None = None, api_key: str | None = None,
                  dimensions: int | None = None, device: str = "cpu") -> Embedder:
    """The embedder named by ``spec`` (see :data:`EMBEDDER_SPEC_HELP`); ``None`` means the packaged default."""
    spec = str(spec or DEFAULT_EMBEDDER).strip()
    if spec.startswith(OPENAI_PREFIX):
        return OpenAIEmbedder(spec[len(OPENAI_PREFIX):], base_url=base_url, api_key=api_key, dimensions=dimensions)
    if base_url or api_key or dimensions:
        raise ValueError(f"base_url, api_key and dimensions only apply to '{OPENAI_PREFIX}MODEL' embedders, "
                         f"not {spec!r}")
    return SentenceTransformerEmbedder(spec, device=device)


class _EncoderAdapter:
    """Lets :func:`ark.index.dense.embed_texts` (block-wise, resumable) drive any :class:`Embedder`."""

    def __init__(self, embedder: Embedder, batch_size: int) -> None:
        self.embedder = embedder
        self.batch_size = batch_size

    def get_embedding_dimension(self) -> int:
        return self.embedder.dimension

    def encode(self, texts: Sequence[str], **_: object) -> F32:
        return self.embedder.embed(texts, batch_size=self.batch_size)


def embeddings_of(index: GraphTextIndex) -> Floats:
    """The node vectors (row ``i`` = node ``i``) of a dense :class:`GraphTextIndex` (``open_index(kind="dense")``,
    :func:`open_embedding_index`); a TypeError naming the index it wraps otherwise."""
    if not isinstance(index.index, DenseIndex):
        raise TypeError(f"{index!r} has no node embeddings: it wraps a {type(index.index).__name__}, not a DenseIndex")
    return np.asarray(index.index.embeddings)


def _is_packaged_default(embedder: Embedder) -> bool:
    return embedder.identity == f"sentence-transformers:{DEFAULT_EMBEDDER}"


def node_embeddings(graph: KnowledgeGraph, embedder: Embedder, progress: bool = True, batch_size: int = 64,
                    block: int = 512) -> Floats:
    """Every node document's embedding, shape ``(graph.num_nodes, embedder.dimension)``, row ``i`` = node ``i``.

    Cached in ``<graph.path>/index/embed-<hash of the identity>/`` (for an updated graph, in its newest update's
    folder) with the graph's fingerprint, and rebuilt only when either changes, reusing the rows of earlier versions
    whose node and document are unchanged (:mod:`ark.index.reuse`); an interrupted build resumes at the first
    unfinished block of ``block`` texts. Graphs without a folder (or fingerprint), or whose folder is read-only, are
    embedded in memory. For a graph on disk the
    packaged default embedder reads (or builds) the ``dense`` text index instead, which holds the same vectors.
    """
    fingerprint = _graph_fingerprint(graph)
    graph_path = getattr(graph, "path", None)
    if _is_packaged_default(embedder) and graph_path is not None and fingerprint is not None:
        return embeddings_of(open_index(graph, "dense", progress=progress))

    from ark.index.reuse import KEYS_FILE, embed_following_updates
    from ark.index.versioned import index_root

    settings = {"kind": "embeddings", "identity": embedder.identity, "documents": "node_documents"}
    adapter = _EncoderAdapter(embedder, batch_size)
    name = f"embed-{settings_hash(settings)}"
    directory = None if graph_path is None or fingerprint is None else index_root(graph) / "index" / name
    keys: list[Keys] = []

    def embed(texts: Sequence[str], work: Path | None) -> F32:
        return embed_texts(texts, embedder.identity, cache_dir=work, progress=progress, block=block, encoder=adapter)

    def build(cache_dir: Path | None) -> F32:
        vectors, doc_keys = embed_following_updates(graph, list(node_documents(graph)), name, settings, directory,
                                                    embed, cache_dir)
        keys.append(doc_keys)
        return np.ascontiguousarray(vectors)

    def save(vectors: F32, folder: Path) -> None:
        np.save(folder / "embeddings.npy", vectors)
        np.save(folder / KEYS_FILE, keys[-1])  # what a later version of the graph reuses rows by

    if directory is None:
        return build(None)
    return open_cached(directory, {"fingerprint": fingerprint, "settings": settings}, build, write=save,
                       load=_load_vectors, what="node embeddings")


def _load_vectors(folder: Path) -> F32:  # as saved
    return np.load(folder / "embeddings.npy", mmap_mode="r")


class CachedQueryEncoder(_EncoderAdapter):
    """Query embeddings of a remote embedder kept on disk, one file per (embedder identity, text), so a rerun sends
    no query it sent before (node embeddings have their own cache: :func:`node_embeddings`)."""

    def __init__(self, embedder: Embedder, cache_dir: Path) -> None:
        from ark.llm.cache import ResponseCache

        super().__init__(embedder, batch_size=64)
        self.cache = ResponseCache(cache_dir)

    def key(self, text: str) -> str:
        from ark.llm.cache import request_key

        return request_key({"embedder": self.embedder.identity, "text": text})

    def encode(self, texts: Sequence[str], **_: object) -> F32:
        found = {i: self.cache.get(self.key(t)) for i, t in enumerate(texts)}
        missing = [i for i, entry in found.items() if entry is None]
        fresh = self.embedder.embed([texts[i] for i in missing]) if missing else None
        rows = []
        for i, text in enumerate(texts):
            entry = found[i]
            if entry is None:
                assert fresh is not None  # every missing text was embedded above
                vector = fresh[missing.index(i)]
                self.cache.put(self.key(text), {"vector": vector.tolist()})
            else:
                vector = np.asarray(entry["vector"], dtype=np.float32)
            rows.append(vector)
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)


def query_cache_dir() -> Path:
    """Where remote embedders' query embeddings are kept: ``$ARK_HOME/embedding-cache``."""
    from ark.config import ark_home

    return ark_home() / "embedding-cache"


def open_embedding_index(graph: KnowledgeGraph, spec: str | Path | None = None, *, base_url: str | None = None,
                         fields: dict[str, list[str]] | None = None, progress: bool = False) -> GraphTextIndex:
    """A dense relevance index of ``graph`` by the embedder named by ``spec`` (:data:`EMBEDDER_SPEC_HELP`).

    The packaged default and sentence-transformers directories are the ``dense`` index kind (cached with the
    graph); any other embedder (``openai:MODEL``) embeds the node documents once through :func:`node_embeddings`
    (cached, resumable) and its queries through the same embedder (cached on disk, :class:`CachedQueryEncoder`), so
    rankings match the endpoint's vectors.
    ``fields`` restricts the documents (e.g. names only); those are embedded in memory for remote embedders.
    """
    from ark.index.dense import DenseIndex

    spec = str(spec or DEFAULT_EMBEDDER).strip()
    if not spec.startswith(OPENAI_PREFIX):
        if base_url:
            raise ValueError(f"embedder_base_url applies to '{OPENAI_PREFIX}MODEL' embedders only, not {spec!r}")
        return open_index(graph, kind="dense", model=spec, fields=fields, progress=progress)
    embedder = open_embedder(spec, base_url=base_url)
    if fields is None:
        vectors = node_embeddings(graph, embedder, progress=progress)
    else:
        vectors = embedder.embed(list(node_documents(graph, fields)))
    index = DenseIndex(np.asarray(vectors), embedder.identity, encoder=CachedQueryEncoder(embedder, query_cache_dir()),
                       ann="exact")
    return GraphTextIndex(graph, index)


NODE_INDEX_KINDS = ("bm25", "dense")


def open_node_index(graph: KnowledgeGraph, kind: str = "bm25", *, names_only: bool = True, embedder: str | None = None,
                    embedder_base_url: str | None = None, progress: bool = False) -> GraphTextIndex:
    """The index a method grounds question mentions with: ``bm25`` or ``dense`` (by ``embedder``), over node names
    (``names_only``) or whole node documents."""
    if kind not in NODE_INDEX_KINDS:
        raise ValueError(f"unknown node index {kind!r}; valid: {', '.join(NODE_INDEX_KINDS)}")
    fields = {node_type: ["name"] for node_type in graph.node_types} if names_only else None
    if kind == "dense":
        return open_embedding_index(graph, embedder, base_url=embedder_base_url, fields=fields, progress=progress)
    return open_index(graph, kind="bm25", fields=fields, progress=progress)
