"""Registry entry of ``text-rag``: the graph as text chunks, the chunks most similar to the question in the prompt."""

from typing import ClassVar, Literal

from pydantic import Field

from ..base import DEFERRED_BUILD, EmbedderChoice
from ..prompting import prompting_spec


class TextRAGOptions(EmbedderChoice):
    """Dense retrieval of linearised node chunks (GraphScout Appendix A.4, TextRAG)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = ("index", "top_k", "chunk_chars", "edges_per_chunk")

    model_config = DEFERRED_BUILD

    index: Literal["dense", "bm25"] = Field(
        default="dense", description="chunk retrieval: dense by `embedder` (the paper's, Appendix A.4) or bm25 "
                                     "(no extra; a lexical variant, not the paper's)")
    top_k: int = Field(default=5, ge=1, le=50, description="chunks put in the prompt (ours; the paper gives none)")
    chunk_chars: int = Field(default=800, ge=100, description="characters kept per chunk (node text and edges)")
    edges_per_chunk: int = Field(default=15, ge=0, description="edges of the node written into its chunk")


METHODS = [
    prompting_spec(
        "text-rag",
        "the graph linearised as one text chunk per node; the top chunks by similarity to the question "
        "in the prompt (GraphScout Table 1's TextRAG; needs --model)",
        TextRAGOptions,
        "ark.methods.text_rag.method:TextRAG",
        paper="Gao et al., Retrieval-Augmented Generation for Large Language Models: A Survey (2023), as "
              "GraphScout Appendix A.4's TextRAG",
        requires=("dense",),
    ),
]
