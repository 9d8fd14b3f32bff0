"""The options of the ``graphscout`` method (:class:`GraphScoutOptions`): the solver's turn budget, its two tools
(GraphScout §3.2, Appendix B.4.1) and the sandbox limits of the code interpreter.

This module is what ``ark methods`` and option validation import: it holds no implementation.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from ..base import DEFERRED_BUILD, EmbedderChoice, MethodOptions, omit_recorded_defaults
from ..presets import Preset, PresetSetting

RETRIEVER_INDEXES = ("bm25", "dense")
RETRIEVER_FIELDS = ("name", "text")


class RetrieverConfig(EmbedderChoice):
    """``node_id_retriever(queries, topk)``: semantic search from mentions to node ids (§3.2.2)."""

    # per request: not the embedder nor its endpoint
    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        "index", "fields", "default_topk", "max_topk", "max_queries")

    model_config = DEFERRED_BUILD

    index: Literal["bm25", "dense"] = Field(
        default="bm25", description="bm25: BM25 (no extra, built in about a second); dense: MiniLM embeddings, the "
                                    "paper's semantic search (§3.2.2: FAISS) with `embedder`, needs the dense extra")
    fields: Literal["name", "text"] = Field(
        default="name", description="what is indexed per node: its name (entity grounding, as in the paper's "
                                    "example) or its whole text")
    default_topk: int = Field(default=2, ge=1, description="nodes per query when the model gives no topk "
                                                          "(Appendix B.4.1: default 2)")
    max_topk: int = Field(default=20, ge=1, description="largest topk a call may ask for")
    max_queries: int = Field(default=10, ge=1, description="queries per call (the rest are refused, with a note)")


class SandboxConfig(MethodOptions):
    """``code_interpreter(code)``: limits of the sandboxed Python worker (one per trajectory)."""

    model_config = DEFERRED_BUILD

    timeout_s: float = Field(default=20.0, gt=0, description="wall clock of one code call, seconds")
    memory_mb: int = Field(default=1024, ge=64, description="address space of the worker's Python, MiB")
    output_chars: int = Field(default=8000, ge=200, description="printed output kept per call")
    cypher_timeout_s: float = Field(default=10.0, gt=0, description="time limit of one cypher() query, seconds")
    cypher_max_rows: int = Field(default=1000, ge=1, description="rows one cypher() query may return")
    isolation: Literal["auto", "bwrap", "rlimit"] = Field(
        default="auto", description="auto/bwrap: bubblewrap, the question fails without it (the error names the "
                                    "fix); rlimit: rlimits only, no file system or network isolation (weaker, "
                                    "warns)")


class GraphScoutOptions(MethodOptions):
    """How the GraphScout solver explores (GraphScout §3.2, §3.4.1, Appendix B.4)."""

    # per request: not the sandbox (isolation and limits), nor the system prompt
    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        "max_turns", "code_interpreter", "tool_choice", "examples", "retriever", "allow_unseen_answers")

    model_config = DEFERRED_BUILD

    max_turns: int = Field(default=10, ge=1, description="model turns per trajectory, the fixed interaction budget "
                                                         "(§3.4.1; the quizzer's T = 10 tool calls, §3.3.2)")
    code_interpreter: bool = Field(default=True, description="offer code_interpreter; false = the retriever-only "
                                                             "ablation (Table 2, 'w/o A_code')")
    tool_choice: Literal["auto", "required"] = Field(
        default="auto", description="the chat API's tool_choice (auto: the final turn answers in text)")
    system_prompt: str | None = Field(default=None, description="a custom system prompt (default: rendered from "
                                                                "the graph's schema, Appendix B.4.2)")
    examples: int = Field(default=6, ge=0, description="relations illustrated by Cypher examples in the prompt")
    retriever: RetrieverConfig = Field(default_factory=RetrieverConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    allow_unseen_answers: bool = Field(
        default=False, description="rank as answer nodes the touched nodes the answer names even when no observation "
        "showed them (a node only given to a query, never printed); by default they rank with the other touched "
        "nodes and the solution lists them as unseen")

    @model_serializer(mode="wrap")
    def _recorded(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The options as recorded: ``allow_unseen_answers`` only when set (earlier run folders compare equal)."""
        return omit_recorded_defaults(handler(self), {"allow_unseen_answers": False})


# ``--preset paper``: GraphScout as Ying et al. state it (ark.methods.presets; checked against the paper's text by
# tests/methods/test_paper_preset.py). The embedder stays ours (the paper's Qwen3-text-embedding-v4 is a hosted
# model; set retriever.embedder=openai:MODEL for it).
PAPER_PRESET = Preset("paper", "GraphScout (Ying et al.)", (
    PresetSetting("retriever.index", "dense", "Section 3.2.2",
                  "The Node Retriever is implemented as a FAISS-based vector search module"),
    PresetSetting("retriever.default_topk", 2, "Appendix B.4.1", "Number of retrieved nodes per query. Default is 2."),
    PresetSetting("max_turns", 10, "Section 3.3.2", "a fixed budget of tool calls (we use $T=10$ )"),
))
