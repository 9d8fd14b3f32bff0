"""An LLM judge of answer correctness (the paper's QwenScore, with any configured chat model). Off by default:
nothing calls a model unless a judge is built and asked, and its figures are labelled :data:`JUDGE_LABEL`.

The judge sees the question, the reference answer and the candidate, and must reply ``CORRECT`` or ``INCORRECT``;
any other reply (or a failed request) leaves the verdict undecided (``None``) and out of the accuracy.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ark.llm.messages import Message, SystemMessage, UserMessage

JUDGE_LABEL = "LLM judge accuracy (model-graded, off by default)"

SYSTEM_PROMPT = """You check answers to questions about a knowledge graph.
You get a question, the reference answer and a candidate answer. The candidate is CORRECT when it names the same
entity, the same number, the same yes/no, or the same set of items as the reference, even if worded, ordered or
formatted differently. It is INCORRECT when it is wrong, partial, vague or adds wrong items.
Reply with one word: CORRECT or INCORRECT."""

_VERDICT = re.compile(r"\b(incorrect|correct)\b", re.IGNORECASE)


@dataclass
class JudgeVerdict:
    """``correct`` is None when the judge's reply could not be read or the request failed (``error``)."""

    correct: bool | None
    reply: str = ""
    error: str | None = None


def parse_verdict(reply: str | None) -> bool | None:
    found = _VERDICT.search(reply or "")
    if found is None:
        return None
    return found.group(1).lower() == "correct"


class AnswerJudge:
    """Grades answers with a :class:`~ark.llm.ChatPolicy` (e.g. ``OpenAIChatClient``); use a deterministic one."""

    label = JUDGE_LABEL

    def __init__(self, policy: Any) -> None:
        self.policy = policy

    @staticmethod
    def messages(question: str, prediction: str, gold: Any, answer_type: str | None = None) -> list[Message]:
        gold_text = ", ".join(map(str, gold)) if isinstance(gold, list | tuple | set) else str(gold)
        kind = f" (answer type: {answer_type})" if answer_type else ""
        user = (f"Question: {question}\nReference answer{kind}: {gold_text}\nCandidate answer: {prediction}\n"
                "Is the candidate CORRECT or INCORRECT?")
        return [SystemMessage(SYSTEM_PROMPT), UserMessage(user)]

    async def ajudge(self, question: str, prediction: str | None, gold: Any,
                     answer_type: str | None = None) -> JudgeVerdict:
        if prediction is None or not str(prediction).strip():
            return JudgeVerdict(False, "", None)  # no answer is never correct; no need to ask
        try:
            reply = await self.policy.next_message(self.messages(question, str(prediction), gold, answer_type), [])
        except Exception as exc:  # a failed request leaves this answer unjudged, it does not stop an evaluation
            return JudgeVerdict(None, "", f"{type(exc).__name__}: {exc}")
        text = reply.message.content or ""
        verdict = parse_verdict(text)
        reply.accept()
        return JudgeVerdict(verdict, text)

    async def ajudge_many(self, items: Iterable[Sequence[Any]]) -> list[JudgeVerdict]:
        """Judge ``(question, prediction, gold[, answer_type])`` tuples concurrently (the client limits
        concurrency)."""
        return list(await asyncio.gather(*(self.ajudge(*item) for item in items)))

    def judge_many(self, items: Iterable[Sequence[Any]]) -> list[JudgeVerdict]:
        return asyncio.run(self.ajudge_many(list(items)))


def judge_accuracy(verdicts: Iterable[JudgeVerdict]) -> dict[str, float]:
    """Share of decided verdicts that are correct, with the counts of decided and undecided ones."""
    verdicts = list(verdicts)
    decided = [v.correct for v in verdicts if v.correct is not None]
    accuracy = sum(decided) / len(decided) if decided else 0.0
    return {"judge_accuracy": accuracy, "judged": float(len(decided)),
            "unjudged": float(len(verdicts) - len(decided))}


def make_judge(**overrides: Any) -> AnswerJudge:
    """A judge over the configured OpenAI-compatible model (see :func:`ark.llm.resolve_settings`), temperature 0
    unless overridden."""
    from ark.llm import OpenAIChatClient, resolve_settings

    overrides.setdefault("temperature", 0.0)
    return AnswerJudge(OpenAIChatClient(resolve_settings(**overrides)))
