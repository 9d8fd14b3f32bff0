"""What the prompting baselines of GraphScout's Table 1 (``base-llm``, ``text-rag``, ``graph-rag``, ``cypher``,
``graph-cot``, ``polyg``, ``graph-counselor``) genuinely share: they need a chat model (no offline policy), ask it in
plain text (no tool schemas: the papers' prompting protocols), read a final ``Answer:`` line, and return that answer
with the nodes they used. Each family keeps its own prompts and algorithm in its own folder.

A :class:`PromptSession` is one question's conversation record: every call's stage, the messages sent, the reply and
its token usage, and every failure (malformed output, a bad query) as a line a person can read. A model's bad output
never raises: it becomes an observation for the model or a recorded failure with an empty answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from ark.llm.messages import Message, SystemMessage, UserMessage, to_openai

from .base import Answer, EmbedderChoice, MethodContext, MethodOptions, MethodOutput, type_mask
from .presets import Preset, PresetSetting
from .records import DetailsRecord
from .registry import MethodError, MethodSpec, needs_model_message

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..llm import ChatPolicy

ANSWER_LINE = re.compile(r"^\s*(?:\*\*)?(?:final\s+)?answer(?:\*\*)?\s*[:：]\s*(?:\*\*)?\s*(.*?)\s*(?:\*\*)?\s*$",
                         re.IGNORECASE)
ANSWER_INSTRUCTIONS = ("Finish with one last line of the form `Answer: <answer>`: a name for one thing, names "
                       "separated by commas for several, a number for a count, yes or no for a yes/no question.")


def prompting_spec(name: str, summary: str, options: type[MethodOptions], factory: str, paper: str,
                   requires: tuple[str, ...] = ()) -> MethodSpec:
    """The registry entry of a prompting baseline: an LLM method with no offline policy, in the family folder its
    factory names, documented in ``docs/methods/<name>.md``; one that grounds nodes (:class:`NodeRetrievalOptions`)
    has GraphScout's ``--preset paper`` (:data:`BASELINE_PAPER_PRESET`)."""
    family = factory.split(":")[0].split(".")[2]
    presets = (BASELINE_PAPER_PRESET,) if issubclass(options, NodeRetrievalOptions) else ()
    return MethodSpec(name=name, summary=summary, options=options, factory=factory, family=family, uses_llm=True,
                      offline=False, requires=requires, docs=f"docs/methods/{name}.md", paper=paper, presets=presets)


def require_model(context: MethodContext, method: str) -> ChatPolicy:
    """The context's chat model; :class:`MethodError` naming the fix when none is configured."""
    if context.llm is None:
        raise MethodError(needs_model_message(method))
    return context.llm


class NodeRetrievalOptions(EmbedderChoice):
    """How a baseline grounds the question's entities in the graph (the node retrieval step GraphScout added to
    Cypher and PolyG, Appendix A.4, and Graph-CoT's RetrieveNode)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = ("node_index",)

    node_index: Literal["bm25", "dense"] = Field(
        default="bm25", description="index of node names: bm25 (no extra, fast to build) or dense by `embedder` "
                                    "(the paper's vector retrieval, Appendix A.4; the dense extra)")


class GraphFunctionOptions(NodeRetrievalOptions):
    """What Graph-CoT's graph functions show (``graph-cot`` and ``graph-counselor`` call the same ones)."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = (
        *NodeRetrievalOptions.REQUEST_OPTIONS, "neighbour_limit", "feature_chars")

    neighbour_limit: int = Field(default=30, ge=1, description="neighbours NeighbourCheck lists (the rest counted)")
    feature_chars: int = Field(default=500, ge=50, description="characters of a feature NodeFeature shows")


# ``--preset paper`` of GraphScout's Table 1 baselines that ground nodes (graph-rag, cypher, graph-cot, polyg,
# graph-counselor): their node retrieval by vector search, as the paper ran them (text-rag's chunks are dense
# already). The embedder stays ours (the paper's Qwen3-text-embedding-v4 is hosted: embedder=openai:MODEL).
BASELINE_PAPER_PRESET = Preset("paper", "GraphScout (Ying et al.), Table 1 baselines", (
    PresetSetting("node_index", "dense", "Appendix A.4",
                  "for all methods that require vector retrieval, we use Qwen3-text-embedding-v4"),
))


def open_names(graph: KnowledgeGraph, options: NodeRetrievalOptions, context: MethodContext) -> Any:
    """The node-name index ``options`` name."""
    from ..index.embedders import open_node_index

    return open_node_index(graph, options.node_index, names_only=True, embedder=options.embedder,
                           embedder_base_url=options.embedder_base_url, progress=context.progress)


def open_graph_functions(graph: KnowledgeGraph, options: GraphFunctionOptions, context: MethodContext) -> Any:
    """Graph-CoT's graph functions over ``graph`` with the node retrieval and limits ``options`` name."""
    from .graph_text import GraphFunctions

    return GraphFunctions(graph, open_names(graph, options, context), options.neighbour_limit,
                          options.feature_chars)


def final_answer(text: str | None) -> str | None:
    """The text of the last ``Answer:`` line of a reply (markdown bold allowed), or None when there is none."""
    for line in reversed((text or "").splitlines()):
        found = ANSWER_LINE.match(line)
        if found and found.group(1).strip():
            return found.group(1).strip().strip("`").strip()
    return None


def fenced_block(text: str | None, language: str) -> str | None:
    """The body of the last ```language fenced block, else of the last fenced block of any label, or None."""
    blocks = [(label.lower(), body.strip()) for label, body in re.findall(r"```([A-Za-z]*)[^\n]*\n(.*?)```",
                                                                           text or "", re.DOTALL) if body.strip()]
    labelled = [body for label, body in blocks if label == language]
    return (labelled or [body for _, body in blocks] or [None])[-1]


@dataclass
class PromptSession:
    """One question's calls to the chat model and what went wrong, for the run record."""

    llm: ChatPolicy
    method: str
    calls: list[dict[str, Any]] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    async def ask(self, stage: str, messages: Sequence[Message]) -> str:
        """Send ``messages`` (no tools), record the call under ``stage`` and return the reply's text ("" if none)."""
        reply = await self.llm.next_message(messages, [], tool_choice="auto")
        text = reply.message.content or ""
        self.calls.append({"stage": stage, "messages": to_openai(messages), "reply": text,
                           "usage": reply.usage.to_dict(), "cached": reply.cached})
        if not text.strip():
            self.fail(f"{stage}: the model replied with no text")
        return text

    async def ask_once(self, stage: str, system: str, user: str) -> str:
        """One system + user exchange."""
        return await self.ask(stage, [SystemMessage(system), UserMessage(user)])

    def fail(self, problem: str) -> None:
        self.failures.append(problem)


def answer_output(graph: KnowledgeGraph, session: PromptSession, question: str, answer: str | None,
                  used: list[int], context: MethodContext, k: int, extra: dict[str, Any] | None = None
                  ) -> MethodOutput:
    """The method's output: the answer (empty and a recorded failure when the model gave none) and the nodes it
    used, those named in the answer first, restricted to the candidate types."""
    from ..metrics.answers import infer_answer_type, normalize_text, split_items

    if answer is None:
        session.fail("no `Answer:` line in the final reply; recorded an empty answer")
    text = answer or ""
    named = set(split_items(text)) | {normalize_text(text)}
    unique = list(dict.fromkeys(int(i) for i in used if graph.is_valid_index(int(i))))
    ranked = sorted(unique, key=lambda i: normalize_text(graph.name(i)) not in named)  # stable: answer nodes first
    mask = type_mask(graph, context.candidate_types)
    ranked = [i for i in ranked if mask is None or mask[i]][:k]
    kind = infer_answer_type(text) if "," not in text else "set"
    record = {"question": question, "method": session.method, "answer": text, "calls": session.calls,
              "failures": session.failures, "nodes_used": [graph.node_id(i) for i in unique[:200]],
              "usage": _total_usage(session.calls), **(extra or {})}
    # No agent trajectories (an empty list), so that the runner keeps the record, calls and failures included, in
    # the run's trajectories.jsonl.
    return MethodOutput(indices=ranked, scores=[1.0 / (rank + 1) for rank in range(len(ranked))], trajectories=[],
                        record=DetailsRecord(record), answer=Answer(text, kind))  # type: ignore[arg-type]


def _total_usage(calls: list[dict[str, Any]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for call in calls:
        for key, value in call["usage"].items():
            total[key] = total.get(key, 0) + int(value)
    return total
