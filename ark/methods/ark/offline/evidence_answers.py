"""The offline policy's answers as the graph's evidence ranks them: evidence keys per candidate, tie groups, and
the keys a replayed conversation states for the vote fusion. The ordering and grouping themselves are the pure
functions of ``evidence_rank``."""

from __future__ import annotations

from .conditions import conjunctive, positive_conditions, satisfied, says_quoted
from .context import PolicyContext
from .evidence import Evidence
from .evidence_rank import EvidenceKey, RankedAnswer, evidence_key, order_by_evidence, tie_groups
from .ranking import ranking


def answers(ctx: PolicyContext, ev: Evidence) -> list[RankedAnswer]:
    """The answers ordered by the graph's evidence (weaker signals within equal evidence), in tie groups."""
    ranked = ranking(ctx, ev)
    if ev.named:
        # The question asks what a name stands for: the nodes bearing it answer, before anything reached.
        ranked = ev.named + [i for i in ranked if i not in ev.named]
    elif ev.described:
        # The question describes a node: the search of the whole description found it, before anything reached.
        ranked = ev.described + [i for i in ranked if i not in ev.described]
        return tie_groups(ranked[: ctx.max_answers], {})
    if ev.unsupported or not ev.scores.score and not ev.named:
        return tie_groups(ranked[: ctx.max_answers], {})  # nothing weighed: no evidence to compare
    keys = evidence_keys_of(ctx, ev, ranked)
    ranked = order_by_evidence(ranked, keys.__getitem__)[: ctx.max_answers]
    return tie_groups(ranked, keys)


def evidence_keys_of(ctx: PolicyContext, ev: Evidence, ranked: list[int]) -> dict[int, EvidenceKey]:
    """Each candidate's evidence key (see evidence_rank.evidence_key)."""
    positive = set(positive_conditions(ctx, ev))
    conjunction = conjunctive(ctx, ev)
    says = says_quoted(ctx, ev, ranked)
    g, scores = ctx.graph, ev.scores
    # Nodes between the anchors and the answers (a second hop); a way back to an anchor is no evidence for it.
    middle = set(scores.intermediates)
    anchors = ev.anchor_indices()
    principal = {a.index: {t: ctx.main_relations.get((a.type, t)) for t in g.node_types} for a in ev.anchors}
    return {i: evidence_key(named=i in ev.named, says_quoted=says.get(i, False), support=scores.support.get(i, {}),
                            conditions_met=len(satisfied(ctx, ev, i) & positive) if conjunction else 0,
                            principal={a: principal.get(a, {}).get(g.node_type(i)) for a in scores.support.get(i, {})},
                            paths=0 if i in anchors else len(scores.hits.get(i, set()) & middle))
            for i in ranked}
