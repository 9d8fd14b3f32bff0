"""Readable English for a :class:`QuestionSpec`, with several phrasings per relation and per question form."""

from __future__ import annotations

import numpy as np

from ..graph import KnowledgeGraph
from .phrasebook import PhraseBook
from .spec import Constraint, QuestionSpec, Step

OPENERS = (
    "Which {answers} {clauses}?",
    "List the {answers} that {clauses}.",
    "Find all {answers} that {clauses}.",
    "What {answers} {clauses}?",
    "Can you name the {answers} that {clauses}?",
)
TEXT_CLAUSES = (
    "mention '{phrase}' in their description",
    "have '{phrase}' in their description",
    "are described with the term '{phrase}'",
)


class QuestionRenderer:
    """Turns specs into questions; every choice of wording is drawn from the generator passed in."""

    def __init__(self, graph: KnowledgeGraph, phrases: PhraseBook) -> None:
        self.graph = graph
        self.phrases = phrases

    def render(self, spec: QuestionSpec, rng: np.random.Generator) -> str:
        clauses = [self._constraint(c, rng) for c in spec.constraints]
        if spec.text_phrase:
            clauses.append(_pick(TEXT_CLAUSES, rng).format(phrase=spec.text_phrase))
        joined = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + " and " + clauses[-1]
        return _pick(OPENERS, rng).format(answers=self.phrases.plural(spec.answer_type), clauses=joined)

    def _constraint(self, constraint: Constraint, rng: np.random.Generator) -> str:
        """A verb phrase for the path, read from the answer back to the anchor."""
        anchor = self.graph.index_of(constraint.anchor_id)
        from_type = self.graph.node_type(anchor)
        phrase = self._step_phrase(from_type, constraint.path[0], rng)
        described = phrase.format(anchor=self._anchor_name(anchor, phrase, rng))
        for previous, step in zip(constraint.path, constraint.path[1:], strict=False):
            phrase = self._step_phrase(previous.node_type, step, rng)
            described = phrase.format(anchor=f"{self.phrases.plural(previous.node_type)} that {described}")
        return described

    def _step_phrase(self, from_type: str, step: Step, rng: np.random.Generator) -> str:
        # "out": the edge runs from the anchor side to the answer side, so the answer is the edge's target.
        if step.direction == "out":
            options = self.phrases.relation_phrases(step.relation, from_type, step.node_type, answer_is_source=False)
        else:
            options = self.phrases.relation_phrases(step.relation, step.node_type, from_type, answer_is_source=True)
        return _pick(options, rng)

    def _anchor_name(self, anchor: int, phrase: str, rng: np.random.Generator) -> str:
        name = self.graph.name(anchor)
        noun = self.phrases.singular(self.graph.node_type(anchor))
        if noun.lower() in phrase.lower() or rng.random() < 0.5:
            return name
        return f"the {noun} {name}"


def _pick(options: tuple[str, ...] | list[str], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]
