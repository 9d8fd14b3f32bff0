"""Sample a benchmark of questions from a graph, with exact answers, clue nodes and anchor-disjoint splits."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..graph import KnowledgeGraph
from .phrasebook import PhraseBook, builtin_phrasebook
from .render import QuestionRenderer
from .schema_hops import nameable_mask, schema_hops
from .templates import SAMPLERS, TEMPLATES, SamplingContext, template_unavailable
from .textmatch import TypeVocabulary
from .traverse import FrontierTooLarge, resolve

# Mostly one- and two-hop relational questions with textual constraints, as in STaRK-Prime. The shipped ``hpo``
# recipe uses it too: changing it changes that benchmark.
STARK_PRIME_MIX: dict[str, float] = {
    "one_hop": 0.15,
    "one_hop_text": 0.25,
    "two_anchor": 0.15,
    "two_anchor_text": 0.10,
    "two_hop": 0.10,
    "two_hop_text": 0.25,
}
DEFAULT_MIX = STARK_PRIME_MIX


@dataclass
class QuizConfig:
    """How many questions, from which templates, and the limits on their answer sets."""

    n: int = 2000
    seed: int = 0
    mix: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    min_answers: int = 1
    max_answers: int = 20
    attempts_per_question: int = 60

    def __post_init__(self) -> None:
        unknown = sorted(set(self.mix) - set(TEMPLATES))
        if unknown:
            raise ValueError(f"unknown template(s) {unknown} in the mix; valid: {', '.join(TEMPLATES)}")
        for name, weight in self.mix.items():
            if not math.isfinite(weight) or weight < 0:
                raise ValueError(f"mix weight for {name!r} must be a finite number >= 0, got {weight}")
        total = sum(self.mix.values())
        if not 0 < total < math.inf:
            raise ValueError(f"mix weights must add up to a finite number > 0, got {total} from {self.mix}; "
                             f"give at least one of {', '.join(TEMPLATES)} a positive weight")
        if self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed}")
        if self.n < 1:
            raise ValueError(f"n must be at least 1, got {self.n}")
        if not 1 <= self.min_answers <= self.max_answers:
            raise ValueError(f"need 1 <= min_answers <= max_answers, got {self.min_answers}, {self.max_answers}")


@dataclass
class QuizResult:
    """The questions (JSON-ready dicts, in generation order), notes on skipped parts, and effort spent."""

    questions: list[dict[str, Any]]
    notes: list[str]
    attempts: int
    seconds: float


def parse_mix(text: str) -> dict[str, float]:
    """``"one_hop=0.3,two_hop_text=0.7"`` → weights; ``ValueError`` names a malformed entry."""
    mix: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, value = part.partition("=")
        try:
            if not sep:
                raise ValueError
            mix[name.strip()] = float(value)
        except ValueError:
            raise ValueError(f"bad mix entry {part!r}: expected TEMPLATE=WEIGHT; templates: "
                             f"{', '.join(TEMPLATES)}") from None
    return mix


def quotas(mix: dict[str, float], n: int) -> dict[str, int]:
    """Split ``n`` over templates in proportion to their weights (largest remainders get the leftovers)."""
    total = sum(mix.values())
    exact = {name: n * w / total for name, w in mix.items() if w > 0}
    counts = {name: int(x) for name, x in exact.items()}
    leftovers = sorted(exact, key=lambda name: (counts[name] - exact[name], TEMPLATES.index(name)))
    for name in leftovers[: n - sum(counts.values())]:
        counts[name] += 1
    return counts


def generate_quiz(graph: KnowledgeGraph, config: QuizConfig, phrases: PhraseBook | None = None) -> QuizResult:
    """Sample ``config.n`` questions (fewer, with a note, if the graph cannot supply them)."""
    started = time.perf_counter()
    phrases = phrases or builtin_phrasebook(graph.info.name or "")
    nameable = nameable_mask(graph)
    hops, notes = schema_hops(graph, nameable)
    vocabulary = TypeVocabulary(graph)
    for node_type in sorted({h.step.node_type for h in hops}):
        if not vocabulary.has_text(node_type):
            notes.append(f"node type {node_type!r} has no usable text: no textual constraints on its answers")
    ctx = SamplingContext(graph, hops, vocabulary, nameable, config.seed, max_answers=config.max_answers)

    mix = dict(config.mix)
    for name in [t for t in TEMPLATES if mix.get(t, 0) > 0]:
        reason = template_unavailable(ctx, name)
        if reason:
            notes.append(f"template {name!r} skipped: {reason}")
            mix[name] = 0.0
    if sum(mix.values()) <= 0:
        notes.append("no template can produce questions on this graph")
        return QuizResult([], notes, 0, time.perf_counter() - started)

    wanted = quotas(mix, config.n)
    rng = np.random.default_rng(config.seed)
    renderer = QuestionRenderer(graph, phrases)
    graph_name = graph.info.label()
    accepted: dict[str, list[dict[str, Any]]] = {name: [] for name in wanted}
    tried = dict.fromkeys(wanted, 0)
    budget = {name: max(200, count * config.attempts_per_question) for name, count in wanted.items()}
    seen: set[str] = set()
    while True:
        open_templates = [t for t in wanted if len(accepted[t]) < wanted[t] and tried[t] < budget[t]]
        if not open_templates:
            break
        remaining = np.asarray([wanted[t] - len(accepted[t]) for t in open_templates], float)
        name = open_templates[int(rng.choice(len(open_templates), p=remaining / remaining.sum()))]
        tried[name] += 1
        spec = SAMPLERS[name](ctx, rng)
        if spec is None:
            continue
        key = json.dumps(spec.to_params(), sort_keys=True)
        if key in seen:
            continue
        try:
            found = resolve(graph, spec, limit=ctx.frontier_limit)
        except FrontierTooLarge:
            continue
        if not config.min_answers <= len(found.answers) <= config.max_answers:
            continue
        seen.add(key)
        anchors = [graph.index_of(a) for a in spec.anchor_ids]
        accepted[name].append({
            "query": renderer.render(spec, rng),
            "answer_ids": [graph.node_id(int(i)) for i in found.answers],
            "template": name,
            "clue_ids": [graph.node_id(i) for i in anchors] + [graph.node_id(int(i)) for i in found.intermediates],
            "params": spec.to_params(),
            "split": ctx.split_of(anchors[0]),
            "anchor_names": [graph.name(i) for i in anchors],
        })

    for name, count in wanted.items():
        if len(accepted[name]) < count:
            notes.append(f"template {name!r}: only {len(accepted[name])} of {count} questions "
                         f"after {tried[name]} attempts")
    questions = _interleave(accepted, rng)
    width = len(str(len(questions)))
    for k, record in enumerate(questions):
        record_id = f"{graph_name}-quiz-s{config.seed}-{k:0{width}d}"
        questions[k] = {"id": record_id, **record}
    return QuizResult(questions, notes, sum(tried.values()), time.perf_counter() - started)


def _interleave(accepted: dict[str, list[dict[str, Any]]], rng: np.random.Generator) -> list[dict[str, Any]]:
    """All accepted questions in one seeded random order (templates mixed)."""
    everything = [record for name in TEMPLATES for record in accepted.get(name, [])]
    return [everything[i] for i in rng.permutation(len(everything)).tolist()]
