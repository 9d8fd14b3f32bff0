"""``ark train avatar``: AvaTaR's optimisation of the actor's instructions (Wu et al. 2024).

The instructions are first scored on the evaluation questions (MRR). Each round then: a seeded batch of training
questions is run by the actor under the best instructions so far; the batch is split into positive and negative
questions (:func:`.actor.split_examples`); the comparator model contrasts them and proposes changes; an update call
folds that feedback into new instructions; the new instructions are scored on the evaluation questions and kept
when their MRR beats the best (ties keep the old ones). Training stops after ``rounds`` rounds or when ``patience``
rounds in a row brought no improvement. The state is written after every round (``OUT/training/state.json``), so
an interrupted run resumes at the next round with the same batches (each round's sample is seeded by the seed and
the round); the model file ``OUT/avatar.json`` is written last.

Budgets: batch 20, Hit@5 threshold 0.5, 10 positives and 10 negatives at most, evaluation on 100 questions,
patience 10 and MRR as the selection metric are zou-group/avatar's STaRK settings; 10 rounds is the DSPy
``AvatarOptimizer`` example's ``max_iters``; the actor's 20 steps are ours (ARK's budget).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from ark.errors import ArkError

from ..base import MethodContext
from ..model_folder import write_model_file
from ..prompting import PromptSession
from . import prompts
from .actor import Actor, Attempt, example_block, mean_of, split_examples

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph

FORMAT = "ark-avatar-prompts"
VERSION = 1
MODEL_FILE = "avatar.json"
STATE_FILE = "training/state.json"


class AvatarSettings(BaseModel):
    """The optimisation's budgets (the module docstring says where each default comes from)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rounds: int = Field(default=10, ge=1, description="comparator rounds at most (DSPy example: max_iters 10)")
    batch_size: int = Field(default=20, ge=2, description="training questions run per round (zou-group/avatar)")
    threshold: float = Field(default=0.5, ge=0, le=1, description="a question is positive when its Hit@5 is above")
    max_positives: int = Field(default=10, ge=1, description="positive questions shown to the comparator")
    max_negatives: int = Field(default=10, ge=1, description="negative questions shown to the comparator")
    eval_questions: int = Field(default=100, ge=1, description="evaluation questions scoring each instruction set")
    patience: int = Field(default=10, ge=1, description="stop after this many rounds without a better MRR")
    max_steps: int = Field(default=20, ge=1, description="actor steps per question (ours: ARK's T_max)")
    call_chars: int = Field(default=200, ge=20, description="characters of each tool call's arguments shown")
    seed: int = Field(default=0, ge=0, description="seed of the batches and the evaluation sample")


@dataclass(frozen=True)
class TrainQuestion:
    id: str
    text: str
    answers: list[str]


class AvatarTrainingError(ValueError, ArkError):
    """Training that cannot start or go on (no questions, a state of other settings)."""


def read_questions(path: Path, graph: KnowledgeGraph) -> list[TrainQuestion]:
    """Questions of a JSONL query file with at least one answer in ``graph``."""
    from ark.loaders.queries import read_query_jsonl

    if not path.is_file():
        raise AvatarTrainingError(f"no query file at {path}")
    found = [TrainQuestion(q.id, q.query, [a for a in q.answer_ids if graph.has_node(a)])
             for q in read_query_jsonl(path)]
    kept = [q for q in found if q.answers]
    if not kept:
        raise AvatarTrainingError(f"{path}: none of its {len(found)} questions has an answer in this graph")
    return kept


class Optimiser:
    """One training run's state and steps."""

    def __init__(self, graph: KnowledgeGraph, llm: Any, settings: AvatarSettings, out: Path, context: MethodContext,
                 log: Callable[[str], None]) -> None:
        self.graph, self.llm, self.settings, self.out, self.context, self.log = graph, llm, settings, out, context, log
        self.actors: dict[str, Actor] = {}
        self.state: dict[str, Any] = {}

    def actor(self, instructions: str) -> Actor:
        if instructions not in self.actors:
            self.actors[instructions] = Actor(self.graph, self.llm, instructions, self.settings.max_steps,
                                              self.context)
        return self.actors[instructions]

    async def run(self, questions: list[TrainQuestion], instructions: str) -> list[Attempt]:
        actor = self.actor(instructions)
        return list(await asyncio.gather(*(actor.attempt(q.text, q.answers, self.settings.call_chars)
                                           for q in questions)))

    def save(self) -> None:
        from ark.storage.atomic import atomic_write_text

        (self.out / STATE_FILE).parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(self.out / STATE_FILE, json.dumps(self.state, indent=1))

    def load(self) -> bool:
        """Resume from a saved state of the same settings; False when there is none."""
        path = self.out / STATE_FILE
        if not path.is_file():
            return False
        state = json.loads(path.read_text(encoding="utf-8"))
        if state.get("settings") != self.settings.model_dump():
            raise AvatarTrainingError(f"{path} holds a run with other settings ({state.get('settings')}); use "
                                      "the same settings to resume or another --out")
        self.state = state
        return True

    async def start(self, evaluation: list[TrainQuestion]) -> None:
        scored = mean_of(await self.run(evaluation, prompts.INITIAL_INSTRUCTIONS))
        self.state = {"settings": self.settings.model_dump(), "round": 0, "gap": 0, "stop": None,
                      "best": {"instructions": prompts.INITIAL_INSTRUCTIONS, "eval": scored, "round": 0},
                      "history": [{"round": 0, "instructions": prompts.INITIAL_INSTRUCTIONS, "eval": scored,
                                   "accepted": True}]}
        self.save()
        self.log(f"round 0: initial instructions, evaluation MRR {scored['mrr']:.3f}")

    async def round(self, train: list[TrainQuestion], evaluation: list[TrainQuestion]) -> None:
        """One comparator round (see the module docstring)."""
        s, state = self.settings, self.state
        number = state["round"] + 1
        best = state["best"]
        batch = random.Random(f"{s.seed}:{number}").sample(train, min(s.batch_size, len(train)))
        attempts = await self.run(batch, best["instructions"])
        positives, negatives = split_examples(attempts, s.threshold, s.max_positives, s.max_negatives)
        session = PromptSession(self.llm, "avatar")
        feedback = await session.ask_once("comparator", prompts.COMPARATOR_SYSTEM, prompts.comparator_user(
            best["instructions"], [example_block(a, i) for i, a in enumerate(positives, 1)],
            [example_block(a, i) for i, a in enumerate(negatives, len(positives) + 1)]))
        new = None
        if feedback.strip():
            new = prompts.read_instructions(await session.ask_once(
                "update", prompts.UPDATE_SYSTEM, prompts.update_user(best["instructions"], feedback)))
            if new is None:
                session.fail("update: no usable instructions in the reply (empty or over "
                             f"{prompts.MAX_INSTRUCTION_CHARS} characters); kept the previous ones")
        scored = mean_of(await self.run(evaluation, new)) if new is not None else None
        accepted = bool(scored is not None and scored["mrr"] > best["eval"]["mrr"])
        if accepted:
            state["best"] = {"instructions": new, "eval": scored, "round": number}
        state["gap"] = 0 if accepted else state["gap"] + 1
        state["round"] = number
        state["history"].append({
            "round": number, "batch": [q.id for q in batch], "batch_mrr": mean_of(attempts)["mrr"],
            "positives": [a.question for a in positives], "negatives": [a.question for a in negatives],
            "feedback": feedback, "instructions": new, "eval": scored, "accepted": accepted,
            "failures": session.failures, "usage": [c["usage"] for c in session.calls]})
        self.save()
        outcome = "no new instructions" if scored is None else \
            f"evaluation MRR {scored['mrr']:.3f} ({'kept' if accepted else 'not better'})"
        self.log(f"round {number}/{s.rounds}: batch MRR {mean_of(attempts)['mrr']:.3f}, {len(positives)} positive "
                 f"and {len(negatives)} negative questions, {outcome}; best {state['best']['eval']['mrr']:.3f}")

    def stop_reason(self) -> str | None:
        if self.state["gap"] >= self.settings.patience:
            return f"no better MRR in {self.settings.patience} rounds"
        if self.state["round"] >= self.settings.rounds:
            return f"{self.settings.rounds} rounds"
        return None


async def optimise(graph: KnowledgeGraph, llm: Any, train: list[TrainQuestion], evaluation: list[TrainQuestion],
                   out: Path,
                   settings: AvatarSettings, context: MethodContext, model_name: str,
                   log: Callable[[str], None]) -> dict[str, Any]:
    """Optimise the actor's instructions and write the model folder; returns the model file's content."""
    optimiser = Optimiser(graph, llm, settings, out, context, log)
    try:
        if optimiser.load():
            log(f"resuming after round {optimiser.state['round']} ({out / STATE_FILE})")
        else:
            await optimiser.start(evaluation)
        while (reason := optimiser.stop_reason()) is None:
            await optimiser.round(train, evaluation)
    finally:
        await llm.aclose()
    state = optimiser.state
    body = {"instructions": state["best"]["instructions"], "chosen_round": state["best"]["round"],
            "evaluation": state["best"]["eval"], "rounds": state["round"], "stop": reason,
            "settings": settings.model_dump(), "chat_model": model_name, "train_questions": len(train),
            "eval_questions": len(evaluation)}
    write_model_file(out, MODEL_FILE, FORMAT, VERSION, graph, body)
    return body


def evaluation_sample(questions: list[TrainQuestion], settings: AvatarSettings) -> list[TrainQuestion]:
    """The seeded evaluation sample (``eval_questions`` of them, in file order)."""
    if len(questions) <= settings.eval_questions:
        return questions
    chosen = random.Random(f"{settings.seed}:eval").sample(range(len(questions)), settings.eval_questions)
    return [questions[i] for i in sorted(chosen)]
