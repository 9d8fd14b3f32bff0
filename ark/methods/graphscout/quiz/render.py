"""English for a :class:`~ark.methods.graphscout.quiz.program.Program`, from the graph's own type and relation names
through the quiz phrase book (``ark/quiz/phrases/<graph>.toml``, generic phrasing otherwise).

Each hop becomes a plural verb phrase read from the answer back to the anchor ("are associated with {anchor}");
a walk's source becomes a noun phrase ("diseases that present with Seizure"); a meet joins its sides' phrases
with "and". The opening says what is asked; openings are chosen so that a reader can tell the answer type:
"How many" (number), "Is/Are" (boolean), "Which is the only" (entity), "Which/List" + plural (set).
"""

from __future__ import annotations

import numpy as np

from ....graph import KnowledgeGraph
from ....quiz.phrasebook import PhraseBook
from .program import Anchor, Expr, Meet, Program, Walk

OPENINGS = {
    "list": ("Which {plural} {clauses}?", "List the {plural} that {clauses}.", "What are the {plural} that {clauses}?"),
    "the_one": ("Which is the only {singular} among the {plural} that {clauses}?",
                "What is the single {singular} out of the {plural} that {clauses}?"),
    "count": ("How many {plural} {clauses}?", "What is the number of {plural} that {clauses}?"),
    "exists": ("Are there any {plural} that {clauses}?",
               "Is there at least one {singular} among the {plural} that {clauses}?"),
    "contains": ("Is {candidate} one of the {plural} that {clauses}?",
                 "Is {candidate} among the {plural} that {clauses}?"),
}
# Phrases end with the anchor, so that a nested noun phrase ("diseases that ...") reads from left to right.
ANY_RELATION = ("are directly linked to {anchor}", "share an edge with {anchor}", "are adjacent to {anchor}")


class ProgramRenderer:
    """Turns programs into questions; every choice of wording comes from the generator passed in."""

    def __init__(self, graph: KnowledgeGraph, phrases: PhraseBook) -> None:
        self.graph = graph
        self.phrases = phrases

    def render(self, program: Program, rng: np.random.Generator) -> str:
        answer_type = program.answer_node_type
        clauses = self._join(self.clauses(program.target, rng))
        candidate = ""
        if program.candidate is not None:
            candidate = self.graph.name(self.graph.index_of(program.candidate))
        template = _pick(OPENINGS[program.ask], rng)
        return template.format(plural=self.phrases.plural(answer_type), singular=self.phrases.singular(answer_type),
                               clauses=clauses, candidate=candidate)

    def clauses(self, expr: Expr, rng: np.random.Generator) -> list[str]:
        """Verb phrases a node of ``expr``'s type satisfies when it belongs to ``expr`` (not for an anchor)."""
        if isinstance(expr, Meet):
            return self.clauses(expr.left, rng) + self.clauses(expr.right, rng)
        if isinstance(expr, Anchor):
            raise ValueError("an anchor is named, not described")
        phrase = self._hop_phrase(expr, rng)
        return [phrase.format(anchor=self.noun_phrase(expr.source, phrase, rng))]

    def noun_phrase(self, expr: Expr, phrase: str, rng: np.random.Generator) -> str:
        """How a hop's far end is named: the anchor's name, or "<plural> that <clauses>"."""
        if isinstance(expr, Anchor):
            index = self.graph.index_of(expr.node_id)
            name = self.graph.name(index)
            noun = self.phrases.singular(expr.node_type)
            if noun.lower() in phrase.lower() or rng.random() < 0.5:
                return name
            return f"the {noun} {name}"
        return f"{self.phrases.plural(expr.node_type)} that {self._join(self.clauses(expr, rng))}"

    def _hop_phrase(self, walk: Walk, rng: np.random.Generator) -> str:
        source_type = walk.source.node_type
        if walk.relation is None:
            return _pick(ANY_RELATION, rng)
        # "out": the edge runs from the source side to the answer side, so the answer is the edge's target.
        if walk.direction == "out":
            options = self.phrases.relation_phrases(walk.relation, source_type, walk.node_type,
                                                    answer_is_source=False)
        else:
            options = self.phrases.relation_phrases(walk.relation, walk.node_type, source_type,
                                                    answer_is_source=True)
        return _pick([p for p in options if p.endswith("{anchor}")] or options, rng)

    @staticmethod
    def _join(parts: list[str]) -> str:
        return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _pick(options: tuple[str, ...] | list[str], rng: np.random.Generator) -> str:
    return options[int(rng.integers(len(options)))]
