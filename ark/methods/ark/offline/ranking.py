"""The offline policy's orderings of its candidates by the scores its tool calls gathered: by anchor evidence for a
single condition or a profile, by conditions met for a few stated conditions, quoted text first. Pure reads of the
evidence; ``evidence_answers`` then orders these by the graph's evidence keys."""

from __future__ import annotations

from .conditions import (
    attribute_conditions,
    condition_weight,
    conjunctive,
    positive_conditions,
    satisfied,
    says_quoted,
)
from .context import PolicyContext
from .evidence import Evidence


def ranked_candidates(ev: Evidence) -> list[int]:
    """Candidates by their score (highest first, then by index), without the anchors."""
    anchor_ids = ev.anchor_indices()

    def key(i: int) -> tuple[float, int]:
        return (-ev.scores.score[i], i)

    return [i for i in sorted(ev.scores.score, key=key) if i not in anchor_ids]


def ranking(ctx: PolicyContext, ev: Evidence) -> list[int]:
    """The candidates in the order the gathered scores give them, of the wanted type."""
    target = ev.target
    if ev.unsupported:
        # Nothing in the schema answers the question: offer only what it names, marked as such.
        return [a.index for a in ev.positive_anchors()][: ctx.max_answers]
    if conjunctive(ctx, ev):
        return quoted_first(ctx, ev, conjunction_ranking(ctx, ev))
    ranked = single_condition_ranking(ctx, ev, target)
    if target is not None:
        # The wanted type is honoured on every path: no gene answers a question about phenotypes.
        ranked = [i for i in ranked if ctx.graph.node_type(i) == target]
    return ranked


def quoted_first(ctx: PolicyContext, ev: Evidence, ranked: list[int]) -> list[int]:
    """A quoted phrase is a textual constraint: nodes whose text says it come first."""
    says = says_quoted(ctx, ev, ranked)
    return sorted(ranked, key=lambda i: not says.get(i, False)) if says else ranked


def single_condition_ranking(ctx: PolicyContext, ev: Evidence, target: str | None) -> list[int]:
    """Candidates by anchor evidence, the verified ones by what their own neighbourhood showed; with no candidate,
    about half of the broad search's results (the paper's first strategy)."""
    if not ev.scores.score:
        broad = [n for n in ev.broad if target is None or n.type == target] or ev.broad
        return [n.index for n in broad[: max(1, (len(broad) + 1) // 2)]]
    ranked = ranked_candidates(ev)
    if ev.scores.verified:
        best = max(ev.scores.score.values()) or 1.0

        mentioned = [set(m.tokens) for m in ev.analysis.mentions if not m.negated]
        bonus = sum(ev.scores.anchor_weight.values()) / max(len(ev.scores.anchor_weight), 1)

        def named_in_question(i: int) -> float:
            name = ctx.tokens(ev.scores.names.get(i, ""))
            return bonus if name and any(m and m <= name for m in mentioned) else 0.0

        def key(i: int) -> tuple[float, float, int]:
            verified = ev.scores.verified.get(i, -1.0)
            return (-(verified + named_in_question(i)), -ev.scores.score[i] / best, ranked.index(i))

        ranked = sorted(ranked, key=key)
    # "Which *other* films ...": the named film is no answer, whatever the text search says.
    # So is a named node of the wanted type the question goes from ("actors who acted with X", X an actor).
    # And in a question naming a relation, the named node is where it starts ("Which packages does X depend on?").
    starts = (ev.excludes_named or bool(ev.analysis.schema_relations or ev.meant or ev.quoted_used)
              or (not ctx.self_linked(target) and ctx.related_to_named(ev, target)))
    excluded = ev.anchor_indices() if starts else set()
    broad_hits = [n.index for n in ev.broad if n.type == target and n.index not in ranked and n.index not in excluded]
    ranked = ranked + broad_hits[:3]
    return quoted_first(ctx, ev, ranked)


def conjunction_ranking(ctx: PolicyContext, ev: Evidence, filtered: bool = True) -> list[int]:
    """Candidates of the wanted type, those satisfying most conditions (weighted by specificity) first;
    candidates failing an attribute condition are dropped when others satisfy it."""
    target = ev.target
    anchor_ids = ev.anchor_indices()
    pool = [i for i in ev.scores.score if i not in anchor_ids
            and (target is None or ctx.graph.node_type(i) == target)]
    have = {i: satisfied(ctx, ev, i) for i in pool}
    for k in sorted(attribute_conditions(ctx, ev)) if filtered else ():
        kept = [i for i in pool if k in have[i]]
        pool = kept or pool  # a filter never empties the answer
    weight = {k: condition_weight(ev, k) for k in positive_conditions(ctx, ev)}

    def key(i: int) -> tuple[int, float, float, int]:
        return (-len(have[i]), -sum(weight.get(k, 0.0) for k in have[i]), -ev.scores.score[i], i)

    return sorted(pool, key=key)
