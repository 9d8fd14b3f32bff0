"""AvaTaR's actor: one ARK agent (ARK's global search, neighbourhood exploration, add-to-answer and finish tools
through the method registry, so no import of the ``ark`` family) whose system prompt carries the instructions being
optimised. The actor for given instructions is built once and reused."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ark.metrics.ranking import query_metrics

from ..base import MethodContext, MethodOutput
from ..graph_text import clip, schema_lines
from . import prompts

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph
    from ark.llm import ChatPolicy


@dataclass
class Attempt:
    """One training question run by the actor: its metrics and the tool calls it made."""

    question: str
    metrics: dict[str, float]
    calls: list[str]
    error: str | None = None


class Actor:
    """The ARK agent under ``instructions`` (one agent, ``max_steps`` steps)."""

    def __init__(self, graph: KnowledgeGraph, llm: ChatPolicy, instructions: str, max_steps: int,
                 context: MethodContext) -> None:
        from ..registry import build_method

        self.graph, self.instructions = graph, instructions
        system = prompts.actor_system(", ".join(graph.node_types), schema_lines(graph), instructions, max_steps)
        actor_context = MethodContext(llm=llm, candidate_types=context.candidate_types, progress=context.progress,
                                      seed=context.seed)
        self.retriever = build_method("ark", graph, {"n_agents": 1, "max_steps": max_steps, "system_prompt": system},
                                      actor_context)

    async def answer(self, question: str, k: int) -> MethodOutput:
        return await self.retriever.aretrieve(question, k)

    async def attempt(self, question: str, answer_ids: list[str], call_chars: int) -> Attempt:
        """Run ``question`` and score the ranking against ``answer_ids``; a failed run scores zero with its error
        (the comparator sees it as a negative)."""
        try:
            output = await self.answer(question, 100)
        except Exception as exc:  # noqa: BLE001 - an endpoint failure is one negative example, stated
            return Attempt(question, query_metrics([], answer_ids), [], f"{type(exc).__name__}: {clip(exc, 200)}")
        ranked = [self.graph.node_id(i) for i in output.indices]
        return Attempt(question, query_metrics(ranked, answer_ids), tool_calls(output, call_chars))


def tool_calls(output: MethodOutput, chars: int) -> list[str]:
    """The actor's tool calls as ``name(arguments)`` lines, arguments clipped to ``chars``."""
    return [f"{call.name}({clip(call.arguments or '', chars)})"
            for trajectory in output.trajectories or [] for call in trajectory.tool_calls()]


def example_block(attempt: Attempt, number: int) -> str:
    """One question for the comparator: text, metrics and tool calls."""
    m = attempt.metrics
    calls = "; ".join(attempt.calls) or (f"none (the run failed: {attempt.error})" if attempt.error else "none")
    return (f"Question {number}: {attempt.question}\n  Hit@1 {m['hit@1']:.2f}, Hit@5 {m['hit@5']:.2f}, Recall@20 "
            f"{m['recall@20']:.2f}, MRR {m['mrr']:.3f}\n  Tool calls: {calls}")


def split_examples(attempts: list[Attempt], threshold: float, max_positives: int,
                   max_negatives: int) -> tuple[list[Attempt], list[Attempt]]:
    """AvaTaR's positive and negative queries: sorted by MRR, positive when Hit@5 is above ``threshold``; the best
    ``max_positives`` positives and the worst ``max_negatives`` negatives. When one side is empty the sorted batch
    is cut in halves, the better half positive (zou-group/avatar's ``construct_pos_neg_queries``)."""
    ranked = sorted(attempts, key=lambda a: -a.metrics["mrr"])
    positives = [a for a in ranked if a.metrics["hit@5"] > threshold]
    negatives = [a for a in ranked if a.metrics["hit@5"] <= threshold]
    if positives and negatives:
        return positives[:max_positives], negatives[-max_negatives:]
    half = len(ranked) // 2
    return ranked[:half][:max_positives], ranked[half:][-max_negatives:]


def mean_of(attempts: list[Attempt]) -> dict[str, Any]:
    """Mean metrics over attempts (zeros when there are none)."""
    keys = ("hit@1", "hit@5", "recall@20", "mrr")
    if not attempts:
        return dict.fromkeys(keys, 0.0)
    return {key: float(sum(a.metrics[key] for a in attempts)) / len(attempts) for key in keys}
