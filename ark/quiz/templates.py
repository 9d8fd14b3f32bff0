"""Question templates: each samples one candidate :class:`QuestionSpec` from the schema, or gives up (None).

Templates are generic over any schema. ``one_hop``: answers linked by one relation to a named anchor.
``two_anchor``: linked to two anchors (an intersection). ``two_hop``: linked by one relation to some node that is
linked by another to the anchor. ``*_text`` variants add a word taken from the answers' own text, chosen so that
neither the structure nor the word alone pins down the answers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..graph import KnowledgeGraph
from .schema_hops import Hop
from .spec import Constraint, QuestionSpec, Step
from .splits import anchor_split
from .textmatch import TypeVocabulary, words
from .traverse import FrontierTooLarge, follow

TEMPLATES = ("one_hop", "one_hop_text", "two_anchor", "two_anchor_text", "two_hop", "two_hop_text")


@dataclass
class SamplingContext:
    """What templates sample from: the graph, its hops, its vocabulary and the limits."""

    graph: KnowledgeGraph
    hops: list[Hop]
    vocabulary: TypeVocabulary
    nameable: np.ndarray
    seed: int
    max_answers: int = 20
    frontier_limit: int = 5000
    phrase_tries: int = 12

    def __post_init__(self) -> None:
        self.anchor_hops = [h for h in self.hops if len(h.starts)]
        self.hops_into: dict[str, list[Hop]] = {}
        for hop in self.hops:
            self.hops_into.setdefault(hop.step.node_type, []).append(hop)
        self.hops_from: dict[str, list[Hop]] = {}
        for hop in self.hops:
            self.hops_from.setdefault(hop.from_type, []).append(hop)
        self.chain_starts = [h for h in self.anchor_hops if self.hops_from.get(h.step.node_type)]
        # Anchored hops are drawn in proportion to the square root of their number of anchors, so that big
        # relations dominate without drowning the small ones.
        self.anchor_weights = _weights(self.anchor_hops)
        self.chain_weights = _weights(self.chain_starts)

    def split_of(self, node: int) -> str:
        return anchor_split(self.graph.node_id(node), self.seed)


Template = Callable[[SamplingContext, np.random.Generator], QuestionSpec | None]


def _choice(rng: np.random.Generator, items, weights: np.ndarray | None = None):
    if weights is None:
        return items[int(rng.integers(len(items)))]
    return items[int(rng.choice(len(items), p=weights))]


def _weights(hops: list[Hop]) -> np.ndarray:
    raw = np.sqrt(np.asarray([len(h.starts) for h in hops], float))
    return raw / raw.sum() if len(hops) else raw


def _one_hop(ctx: SamplingContext, rng: np.random.Generator, text: bool) -> QuestionSpec | None:
    if not ctx.anchor_hops:
        return None
    hop = _choice(rng, ctx.anchor_hops, ctx.anchor_weights)
    if text and not ctx.vocabulary.has_text(hop.step.node_type):
        return None
    anchor = int(_choice(rng, hop.starts))
    spec = QuestionSpec(hop.step.node_type, (Constraint(ctx.graph.node_id(anchor), (hop.step,)),))
    if not text:
        return spec
    related = _without(follow(ctx.graph, np.asarray([anchor], np.int32), hop.step), [anchor])
    return _add_phrase(ctx, rng, spec, related)


def _two_anchor(ctx: SamplingContext, rng: np.random.Generator, text: bool) -> QuestionSpec | None:
    if not ctx.anchor_hops:
        return None
    first = _choice(rng, ctx.anchor_hops, ctx.anchor_weights)
    answer_type = first.step.node_type
    if text and not ctx.vocabulary.has_text(answer_type):
        return None
    a1 = int(_choice(rng, first.starts))
    related = _without(follow(ctx.graph, np.asarray([a1], np.int32), first.step), [a1])
    if len(related) < 2:
        return None
    pivot = int(_choice(rng, related))
    second = _choice(rng, [h for h in ctx.hops_into[answer_type] if len(h.starts)])
    back = Step(second.step.relation, "in" if second.step.direction == "out" else "out", second.from_type)
    split = ctx.split_of(a1)
    options = [int(a) for a in follow(ctx.graph, np.asarray([pivot], np.int32), back)
               if a != a1 and ctx.nameable[a] and ctx.split_of(int(a)) == split]
    if not options:
        return None
    a2 = _choice(rng, options)
    spec = QuestionSpec(answer_type, (Constraint(ctx.graph.node_id(a1), (first.step,)),
                                      Constraint(ctx.graph.node_id(a2), (second.step,))))
    if first.key == second.key and a2 < a1:  # the same question with the anchors swapped: keep one order
        spec = QuestionSpec(answer_type, spec.constraints[::-1])
    both = np.intersect1d(related, follow(ctx.graph, np.asarray([a2], np.int32), second.step))
    both = _without(both, [a1, a2])
    if len(both) >= len(related):  # the second anchor must narrow the answers
        return None
    return _add_phrase(ctx, rng, spec, both) if text else spec


def _two_hop(ctx: SamplingContext, rng: np.random.Generator, text: bool) -> QuestionSpec | None:
    if not ctx.chain_starts:
        return None
    first = _choice(rng, ctx.chain_starts, ctx.chain_weights)
    second = _choice(rng, ctx.hops_from[first.step.node_type])
    if text and not ctx.vocabulary.has_text(second.step.node_type):
        return None
    anchor = int(_choice(rng, first.starts))
    spec = QuestionSpec(second.step.node_type, (Constraint(ctx.graph.node_id(anchor), (first.step, second.step)),))
    if not text:
        return spec
    middle = follow(ctx.graph, np.asarray([anchor], np.int32), first.step, ctx.frontier_limit)
    related = _without(follow(ctx.graph, middle, second.step, ctx.frontier_limit), [anchor])
    return _add_phrase(ctx, rng, spec, related)


def _add_phrase(ctx: SamplingContext, rng: np.random.Generator, spec: QuestionSpec,
                related: np.ndarray) -> QuestionSpec | None:
    """Add a word from some answer's text that keeps 1..max answers, fewer than without it and than it alone."""
    if len(related) < 2:
        return None
    excluded = {w for a in spec.anchor_ids for w in words(ctx.graph.name(ctx.graph.index_of(a)))}
    for _ in range(3):
        sample = int(_choice(rng, related))
        candidates = [w for w in ctx.vocabulary.candidate_words(spec.answer_type, sample) if w not in excluded]
        order = rng.permutation(len(candidates))[: ctx.phrase_tries]
        for k in order.tolist():
            word = candidates[k]
            having = ctx.vocabulary.nodes_with(spec.answer_type, word)
            kept = np.intersect1d(related, having, assume_unique=True)
            if 1 <= len(kept) <= ctx.max_answers and len(kept) < len(related) and len(having) > len(kept):
                return QuestionSpec(spec.answer_type, spec.constraints, word)
    return None


def _without(nodes: np.ndarray, drop: list[int]) -> np.ndarray:
    return np.setdiff1d(nodes, np.asarray(drop, np.int32)).astype(np.int32)


def _guarded(template: Callable[..., QuestionSpec | None], text: bool) -> Template:
    def sample(ctx: SamplingContext, rng: np.random.Generator) -> QuestionSpec | None:
        try:
            return template(ctx, rng, text)
        except FrontierTooLarge:
            return None

    return sample


SAMPLERS: dict[str, Template] = {
    "one_hop": _guarded(_one_hop, False),
    "one_hop_text": _guarded(_one_hop, True),
    "two_anchor": _guarded(_two_anchor, False),
    "two_anchor_text": _guarded(_two_anchor, True),
    "two_hop": _guarded(_two_hop, False),
    "two_hop_text": _guarded(_two_hop, True),
}


def template_unavailable(ctx: SamplingContext, name: str) -> str | None:
    """Why ``name`` cannot produce questions on this graph, or None if it can."""
    if not ctx.anchor_hops:
        return "no relation has a uniquely named anchor"
    if name.startswith("two_hop") and not ctx.chain_starts:
        return "the schema has no two-step path"
    if name.endswith("_text"):
        answer_types = {h.step.node_type for h in ctx.hops}
        if not any(ctx.vocabulary.has_text(t) for t in answer_types):
            return "no answer type has text to take a phrase from"
    return None
