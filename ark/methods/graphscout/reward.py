r"""GraphScout's training reward read off one solver trajectory (GraphScout §3.4.2, Eqs. 2-5), for GRPO and for
evaluation alike.

- **Answer**: the text of the ``\answer{...}`` wrapper on the last line of the trajectory's final reply, parsed by
  :func:`ark.methods.graphscout.answer.extract_answer` (the solver's own parser). The final reply is the last
  assistant message, and only when it calls no tool (the solver's loop ends there). No wrapper, or an empty one:
  reward 0, with the reason.
- ``r_ans``: token F1 (:func:`ark.metrics.answers.token_f1`) of that text against the quiz answer, both
  normalised by the question's answer type.
- ``r_clue``: the fraction of the question's clue nodes the trajectory touched. The touched nodes are the union
  of ``node_indices`` over every tool call of every step (:class:`~ark.runtime.records.ToolCallRecord`), whether
  the call succeeded or not: GraphScout's tools put there the nodes a call was given or returned (the retriever's
  hits; the nodes a Cypher query returned or named in its parameters). Records without ``node_indices`` fall back
  on their structured result: ``result["touched"]`` and the ``index`` of each ``result["results"]`` entry.
- ``r``: :func:`ark.training.rewards.answer_clue_reward` (``delta`` 0.4; ``use_clue=False`` is the "w/o r_clue"
  ablation).

    reward = GraphScoutReward(graph)                     # or GraphScoutReward(graph, use_clue=False)
    breakdown = reward(trajectory, question)             # a Trajectory (or its dict) and a quiz question
    breakdown.reward, breakdown.case, breakdown.reason
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from ark.llm.messages import to_openai
from ark.metrics.answers import token_f1
from ark.runtime.records import Trajectory
from ark.training.rewards import DEFAULT_DELTA, AnswerClueReward, answer_clue_reward

from .answer import WRAPPER, extract_answer

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph


def final_answer(trajectory: Trajectory | Mapping[str, Any]) -> tuple[str | None, str]:
    """``(answer text, "")`` from the final reply's wrapper, or ``(None, why there is none)``."""
    messages = _messages(trajectory)
    replies = [m for m in messages if m.get("role") == "assistant"]
    if not replies:
        return None, "the trajectory has no assistant reply"
    last = replies[-1]
    if last.get("tool_calls"):
        stop = _get(trajectory, "stop_reason") or "unknown"
        return None, f"the trajectory ended on a tool call, without a final reply (stop reason: {stop})"
    text = extract_answer(last.get("content"))
    if text is None:
        return None, f"the final reply has no {WRAPPER} wrapper on its last line"
    if not text.strip():
        return None, f"the final reply's {WRAPPER} wrapper is empty"
    return text, ""


def touched_nodes(trajectory: Trajectory | Mapping[str, Any]) -> set[int]:
    """Every node index a tool call of the trajectory touched (see the module docstring)."""
    touched: set[int] = set()
    for call in _tool_calls(trajectory):
        indices = _get(call, "node_indices") or []
        if indices:
            touched.update(int(i) for i in indices)
            continue
        touched.update(_touched_in(_get(call, "result")))
    return touched


class _RecordedResult(BaseModel):
    """What the fallback reads of a call's recorded result (a dict, as records hold it), leniently."""

    model_config = ConfigDict(extra="ignore")

    touched: Any = []
    results: Any = []


def _touched_in(result: Any) -> set[int]:
    """The ints of ``result["touched"]`` and the int ``index`` of each ``result["results"]`` entry (either left
    out when it is no list)."""
    read = _RecordedResult.model_validate(result) if isinstance(result, Mapping) else _RecordedResult()
    found = {int(i) for i in (read.touched if isinstance(read.touched, list) else []) if isinstance(i, int)}
    for entry in read.results if isinstance(read.results, list) else []:
        index = entry.get("index") if isinstance(entry, Mapping) else None
        if isinstance(index, int):
            found.add(int(index))
    return found


def clue_fraction(touched: Iterable[int], clues: Iterable[int]) -> float:
    """|clues ∩ touched| / |clues|; ``ValueError`` for an empty clue set (the quiz reader refuses those)."""
    wanted = set(clues)
    if not wanted:
        raise ValueError("a question without clue nodes has no clue fraction")
    return len(wanted & set(touched)) / len(wanted)


class GraphScoutReward:
    """The reward of solver trajectories on quiz questions of one graph (clue ids map to its node indices)."""

    def __init__(self, graph: KnowledgeGraph, *, delta: float = DEFAULT_DELTA, use_clue: bool = True) -> None:
        if not (isinstance(delta, int | float) and 0 < delta <= 1):
            raise ValueError(f"delta must be in (0, 1], got {delta!r}")
        self.graph = graph
        self.delta = float(delta)
        self.use_clue = use_clue
        self._clues: dict[tuple[str, ...], frozenset[int]] = {}

    def clue_indices(self, clue_ids: Iterable[str]) -> frozenset[int]:
        key = tuple(clue_ids)
        if key not in self._clues:
            unknown = [c for c in key if not self.graph.has_node(c)]
            if unknown:
                name = self.graph.info.label("the graph")
                raise ValueError(f"clue node id(s) {unknown[:5]} are not in {name!r}; was the quiz made on another "
                                 f"graph?")
            self._clues[key] = frozenset(self.graph.index_of(c) for c in key)
        return self._clues[key]

    def __call__(self, trajectory: Trajectory | Mapping[str, Any], question: Any) -> AnswerClueReward:
        return self.score(trajectory, question)

    def score(self, trajectory: Trajectory | Mapping[str, Any], question: Any) -> AnswerClueReward:
        """The reward of ``trajectory`` on ``question`` (a
        :class:`~ark.methods.graphscout.quiz.records.GraphScoutQuestion` or a quiz record dict with ``answer``,
        ``answer_type`` and ``clue_ids``)."""
        gold, answer_type, clue_ids = (_get(question, k) for k in ("answer", "answer_type", "clue_ids"))
        if gold is None or answer_type is None or not clue_ids:
            raise ValueError(f"a GraphScout question needs 'answer', 'answer_type' and non-empty 'clue_ids'; got "
                             f"{question!r:.200}")
        text, why = final_answer(trajectory)
        clues = self.clue_indices(clue_ids)
        fraction = clue_fraction(touched_nodes(trajectory), clues)
        f1 = None if text is None else token_f1(text, gold, answer_type)
        return answer_clue_reward(f1, fraction, delta=self.delta, use_clue=self.use_clue, missing_reason=why)


def graphscout_reward(trajectory: Trajectory | Mapping[str, Any], question: Any, graph: KnowledgeGraph, *,
                      delta: float = DEFAULT_DELTA, use_clue: bool = True) -> AnswerClueReward:
    """One-off :class:`GraphScoutReward` (build the class once when scoring many trajectories)."""
    return GraphScoutReward(graph, delta=delta, use_clue=use_clue).score(trajectory, question)


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def _messages(trajectory: Trajectory | Mapping[str, Any]) -> list[dict[str, Any]]:
    """The conversation in its wire form (a record's messages, or a dict trajectory's as they are)."""
    messages = _get(trajectory, "messages")
    if messages is None:
        raise ValueError("a trajectory needs its 'messages' to read the final answer")
    return to_openai(messages)


def _tool_calls(trajectory: Trajectory | Mapping[str, Any]) -> list[Any]:
    return [call for step in (_get(trajectory, "steps") or []) for call in (_get(step, "tool_calls") or [])]
