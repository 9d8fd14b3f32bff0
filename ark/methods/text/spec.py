"""Registry entries of the text-index baselines."""

from typing import ClassVar, Literal

from pydantic import Field

from ..base import EmbedderChoice, MethodOptions
from ..registry import MethodSpec


class BM25Options(MethodOptions):
    """Okapi BM25 parameters (STaRK's baseline uses the common defaults)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = ("k1", "b", "scoring")

    k1: float = Field(default=1.5, gt=0, description="term-frequency saturation")
    b: float = Field(default=0.75, ge=0, le=1, description="document-length normalisation")
    scoring: Literal["plain", "fielded"] = Field(
        default="plain", description="plain = Okapi BM25 over the node document (the papers' baseline); fielded = "
        "ARK's global search: BM25F with the node's names weighted above its text, exact names first")


class DenseOptions(EmbedderChoice):
    """Dense retrieval by cosine similarity of text embeddings (``embedder``: any embedder spec)."""

    model: str | None = Field(default=None, description="former name of `embedder` (a sentence-transformers "
                                                         "model); kept so old configs run")


_FACTORY = "ark.methods.text.retriever:TextIndexRetriever"

METHODS = [
    MethodSpec("bm25", "BM25 over each node's text", BM25Options, _FACTORY, family="text",
               docs="docs/methods/baselines.md"),
    MethodSpec("bm25-rel", "BM25 over node text plus neighbour names by relation (STaRK's add_rel)", BM25Options,
               "ark.methods.text.retriever:relational", family="text", docs="docs/methods/baselines.md"),
    MethodSpec("dense", "cosine similarity of node-text embeddings (MiniLM, a model folder or openai:MODEL)",
               DenseOptions, _FACTORY, family="text", requires=("dense",), docs="docs/methods/baselines.md"),
]
