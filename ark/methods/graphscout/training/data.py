"""GraphScout quiz questions as GRPO prompts, and the scripted solver's trajectories as SFT warm-start samples.

A prompt is what the solver's own loop starts with (:mod:`ark.methods.graphscout.solver`): the system prompt and
``Question: ...``; the row also carries what the reward needs (``answer``, ``answer_type``, ``clue_ids``). Warm-start
samples are the scripted solver's trajectories on the same questions with the same system prompt and the tool
schemas TRL shows during GRPO, so the warm-started model sees at GRPO time the context it was fine-tuned on.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ark.errors import ArkError
from ark.llm.messages import SystemMessage, UserMessage, to_openai
from ark.methods.graphscout.quiz import GraphScoutQuestion, read_graphscout_quiz
from ark.training.datasets import tools_json

from ..solver import FIRST_USER_MESSAGE

if TYPE_CHECKING:
    from ....graph import KnowledgeGraph


class QuizError(ValueError, ArkError):
    """A quiz file or selection GRPO cannot train on."""


def training_questions(path: str | Path, graph: KnowledgeGraph, *, split: str | None = "train",
                       limit: int | None = None,
                       seed: int = 0) -> list[GraphScoutQuestion]:
    """The questions of quiz ``path`` to train on: those of ``split`` (a file without any split is used whole),
    at most ``limit`` of them drawn with ``seed`` (file order kept)."""
    try:
        questions = read_graphscout_quiz(path, graph)
    except ValueError as exc:
        raise QuizError(str(exc)) from exc
    if split is not None and any(q.split for q in questions):
        kept = [q for q in questions if q.split == split]
        if not kept:
            found = sorted({str(q.split) for q in questions})
            raise QuizError(f"quiz file {path} has no {split!r} questions; its splits: {', '.join(found)} "
                            f"(--set split=NAME, or split=null for all)")
        questions = kept
    if limit is not None and len(questions) > limit:
        chosen = set(random.Random(seed).sample(range(len(questions)), limit))
        questions = [q for i, q in enumerate(questions) if i in chosen]
    return questions


def prompt_messages(system_prompt: str, question: str) -> list[dict[str, Any]]:
    """The solver's first two messages for ``question``."""
    return to_openai([SystemMessage(system_prompt), UserMessage(FIRST_USER_MESSAGE.format(question=question))])


def grpo_rows(questions: Sequence[GraphScoutQuestion], system_prompt: str) -> list[dict[str, Any]]:
    """One dataset row per question: ``prompt`` (messages) plus the fields the reward reads."""
    return [{"prompt": prompt_messages(system_prompt, q.query), "id": q.id, "query": q.query, "answer": q.answer,
             "answer_type": q.answer_type, "clue_ids": list(q.clue_ids)} for q in questions]


def warm_start_samples(world: Any, questions: Sequence[GraphScoutQuestion]) -> list[dict[str, Any]]:
    """Chat samples (``{"messages", "tools"}``) of the scripted solver on ``questions``, rendered with the GRPO
    system prompt and tool schemas; trajectories without a final answer are skipped."""
    from ..solver import GraphScout

    solver = GraphScout(world.graph, options=world.options, engine=world.engine, index=world.index)
    tools = tools_json(world.tool_schemas())
    samples = []
    try:
        for question in questions:
            trajectory = solver.solve(question.query).trajectory
            if trajectory.stop_reason != "answer":
                continue
            later = [m.to_openai() for m in trajectory.messages[2:]]
            samples.append({"messages": prompt_messages(world.system_prompt, question.query) + later,
                            "tools": tools})
    finally:
        solver.close()
    return samples
