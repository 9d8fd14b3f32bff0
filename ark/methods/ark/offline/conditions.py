"""The question's conditions as the offline policy weighs them: which ones the answers must meet, whether they are
few enough to intersect, which relation each one says, and which a candidate satisfies. Pure reads of the evidence."""

from __future__ import annotations

import re

from ....question import name_tokens
from .context import PolicyContext
from .evidence import Evidence
from .spans import says

MAX_CONJUNCTION = 4  # at most this many conditions are intersected; more are a profile, weighed (see conjunctive)


def positive_conditions(ctx: PolicyContext, ev: Evidence) -> list[int]:
    """Positions of the conditions the answers must satisfy (not the findings said to be absent)."""
    live = [k for k, c in enumerate(ev.conditions) if not c.negated and c.members]
    words = {k: ctx.tokens(ev.conditions[k].label) for k in live}
    # A name inside a longer anchored name ("Sex reversal" in "46, XY sex reversal 11") is that name's word,
    # not a condition of its own.
    return [k for k in live if not any(j != k and words[k] < words[j] for j in live)]


def conjunctive(ctx: PolicyContext, ev: Evidence) -> bool:
    """Whether the question states a few conditions that every answer should meet ("A and B"). A long list of
    findings (a patient's profile) is not: rare diseases show their features with incomplete penetrance, so
    no answer is expected to have them all, and evidence is weighed instead."""
    return 2 <= len(positive_conditions(ctx, ev)) <= MAX_CONJUNCTION


def is_negated(ev: Evidence, anchor: int) -> bool:
    """Whether the anchor stands for a condition the question says is absent."""
    position = ev.condition_of.get(anchor)
    return position is not None and ev.conditions[position].negated


def names_relation(ctx: PolicyContext, ev: Evidence, position: int, relation: str) -> bool:
    """Whether the label of condition ``position`` says the relation ("... *inheritance*" ~ has_inheritance)."""
    words = ctx.reader.relation_words.get(relation, set())
    label = set(name_tokens(ev.conditions[position].label))
    return any(w in label or any(len(w) >= 5 and x[:5] == w[:5] for x in label) for w in words)


def relation_of_another_condition(ctx: PolicyContext, ev: Evidence, anchor: int, relation: str) -> bool:
    """Whether a relation the question names is said by the label of a condition other than the anchor's own
    (or by none, when the anchor stands for no condition but another condition says it)."""
    own = ev.condition_of.get(anchor)
    if own is not None and names_relation(ctx, ev, own, relation):
        return False
    return any(names_relation(ctx, ev, k, relation) for k in positive_conditions(ctx, ev) if k != own)


def other_conditions_query(ctx: PolicyContext, ev: Evidence, anchor: int) -> str:
    """The labels of the conditions other than the anchor's own: a subquery ranking the anchor's neighbours."""
    own = ev.condition_of.get(anchor)
    return " ".join(ev.conditions[k].label for k in positive_conditions(ctx, ev) if k != own)[:400]


def satisfied(ctx: PolicyContext, ev: Evidence, index: int) -> set[int]:
    """Conditions a candidate satisfies: reached from them, seen in its neighbourhood, or named in its text."""
    have = set(ev.satisfied.get(index, ()))
    graph = ctx.graph
    text = ctx.text_of(index).lower()
    lines = [ctx.tokens(line) for line in text.splitlines()]
    for k in positive_conditions(ctx, ev):
        if k in have:
            continue
        for member in ev.conditions[k].members[:3]:
            name = ctx.tokens(graph.name(member))
            # The text names the member, or a short line of it holds all its words ("Inheritance: X-linked
            # recessive inheritance" for "X-linked inheritance": a narrower term).
            if says(text, graph.name(member)) or any(
                    name and name <= line and len(line) <= len(name) + 4 for line in lines):
                have.add(k)
                break
    return have


def condition_weight(ev: Evidence, k: int) -> float:
    """How specific condition ``k`` is: the largest weight of its anchors (1 when none was weighed)."""
    weights = [ev.scores.anchor_weight.get(m, 0.0) for m in ev.conditions[k].members]
    return max(weights, default=0.0) or 1.0


def attribute_conditions(ctx: PolicyContext, ev: Evidence) -> set[int]:
    """Conditions linked to the answers by a minor relation of the schema between their types (e.g. a mode
    of inheritance, ``has_inheritance`` beside the far larger ``has_phenotype``): they filter, not only rank."""
    out = set()
    target = ev.target
    for k in positive_conditions(ctx, ev):
        members = ev.conditions[k].members
        seen = set().union(*(ev.anchor_relations.get(m, set()) for m in members))
        main = ctx.main_relations.get((ctx.graph.node_type(members[0]), target)) if target is not None else None
        if seen and main and main not in seen:
            out.add(k)
    return out


def says_quoted(ctx: PolicyContext, ev: Evidence, ranked: list[int]) -> dict[int, bool]:
    """Which nodes' text says every quoted phrase of the question (a textual condition)."""
    quoted = [q for q in ev.analysis.quoted if q not in ev.quoted_used]  # a description of an anchor aside
    if not quoted:
        return {}
    phrases = [re.compile(rf"\b{re.escape(q.lower())}", re.IGNORECASE) for q in quoted]
    text = ctx.graph.text
    return {i: all(p.search(text(i)) for p in phrases) for i in ranked if ctx.graph.is_valid_index(i)}
