"""What neighbourhood listings say about the offline policy's candidates: scores by anchor specificity, the
intermediate nodes of a second hop, the anchors a candidate's own neighbourhood shows (verification) and the
conditions it satisfies. The expand, page, second-hop and verify phases' ``absorb`` call these."""

from __future__ import annotations

import math

from ....graph import normalize_name
from ....question import TAXONOMY_RELATIONS
from .conditions import is_negated, positive_conditions
from .context import PolicyContext
from .direction import along_direction
from .evidence import Evidence, SeenNode


def along_hierarchy(ctx: PolicyContext, ev: Evidence, nodes: list[SeenNode], strict: bool = False) -> list[SeenNode]:
    """When the question looks up or down an is-a relation, keep the neighbors on that side of the centre (all of
    them when none is on it, unless ``strict``: a step of a two-level walk)."""
    direction = ctx.hierarchy(ev.analysis, ev.anchors)
    if not direction:
        return nodes

    def taxonomic(relations: tuple[str, ...]) -> bool:
        return any(normalize_name(r) in TAXONOMY_RELATIONS for r in relations)

    if direction == "broader":
        kept = [n for n in nodes if taxonomic(n.out_relations)]
    else:
        kept = [n for n in nodes if taxonomic(n.in_relations)]
    return kept if kept or strict else nodes


def two_levels(ctx: PolicyContext, ev: Evidence) -> bool:
    """Whether the question asks two steps along the hierarchy ("the grandparent class of X", "two levels below
    X"): the anchor's neighbours on that side are stops on the way, their own neighbours on it the answers."""
    return ev.analysis.hierarchy_steps == 2 and ctx.hierarchy(ev.analysis, ev.anchors) is not None


def absorb_expansion(ctx: PolicyContext, ev: Evidence, center: object, nodes: list[SeenNode], total: int,
                     offset: int = 0) -> None:
    """An anchor's neighbourhood (one page): intermediate nodes towards the wanted type, and candidates of it."""
    target = ev.target
    if center in ev.expansions.via_middle:
        route = ev.shared
        stops = [n for n in nodes if route is None or route.shared(n)]
        if route is None and isinstance(center, int) and ev.direction is not None:
            # A first hop along a relation linking the anchor's type to itself: its asked side only.
            own = ctx.graph.node_type(center)
            stops = [n for n in stops if n.type != own] + along_direction(ev, center, [n for n in stops
                                                                                   if n.type == own])
        _stops(ctx, ev, stops, total)
        return
    if two_levels(ctx, ev):
        _stops(ctx, ev, along_hierarchy(ctx, ev, nodes, strict=True), total)
        return
    nodes = along_direction(ev, center, along_hierarchy(ctx, ev, nodes))
    _stops(ctx, ev, [n for n in nodes if target is not None and n.type != target], total)
    matching = [n for n in nodes if target is None or n.type == target]
    if isinstance(center, int) and center in ev.condition_of:
        condition = ev.condition_of[center]
        for node in matching:
            ev.satisfied[node.index].add(condition)
            ev.anchor_relations[center].update(node.out_relations + node.in_relations)
    absorb_candidates(ctx, ev, center, matching, total, weight=1.0, offset=offset)


def _stops(ctx: PolicyContext, ev: Evidence, nodes: list[SeenNode], total: int) -> None:
    """Score the listed nodes as stops on the way to the answers: the rarer their type among a neighbourhood of
    ``total``, the more a stop says (an IDF, as for candidates)."""
    for node in nodes:
        ev.scores.intermediates[node.index] += math.log1p(ctx.type_sizes.get(node.type, 1) / max(total, 1))
        ev.scores.intermediate_types[node.index] = node.type


def absorb_candidates(ctx: PolicyContext, ev: Evidence, center: object, nodes: list[SeenNode], total: int,
                      weight: float, offset: int = 0) -> None:
    """Score the listed candidates: by the centre's specificity, less for those listed lower."""
    if not nodes:
        return
    node_type = nodes[0].type
    # An anchor shared by few nodes of the wanted type says more than one shared by thousands (an IDF).
    specificity = math.log1p(ctx.type_sizes.get(node_type, 1) / max(total, 1))
    if isinstance(center, int):
        ev.scores.anchor_weight[center] = specificity
    anchor = isinstance(center, int) and center in ev.condition_of and not is_negated(ev, center)
    for rank, node in enumerate(nodes):
        if anchor and isinstance(center, int):
            ev.scores.record_support(node.index, center, node.out_relations + node.in_relations)
        position = (offset + rank) / (len(nodes) + offset)
        ev.scores.score[node.index] += weight * specificity * (1.0 - 0.25 * position)
        ev.scores.hits[node.index].add(center if isinstance(center, int) else -1)
        ev.scores.names[node.index] = node.name


def absorb_verification(ctx: PolicyContext, ev: Evidence, center: int, nodes: list[SeenNode], total: int) -> None:
    """A candidate's own neighbourhood: the anchors it shows (weighted by their specificity) verify it."""
    tokens = ctx.tokens
    listed = {n.index for n in nodes}
    mention_tokens = [set(m.tokens) for m in ev.analysis.mentions]
    score = ev.scores.verified.get(center, 0.0)
    for anchor in ev.anchors:
        named = tokens(anchor.name)
        present = anchor.index in listed or any(tokens(n.name) == named for n in nodes)
        if present and not anchor.negated and anchor.index in listed:
            node = next(n for n in nodes if n.index == anchor.index)
            ev.scores.record_support(center, anchor.index, node.out_relations + node.in_relations)
        if present and not anchor.negated:
            # Absent findings are not counted against a candidate: rare diseases show their features with
            # incomplete penetrance, so an absent feature is weak evidence either way.
            score += ev.scores.anchor_weight.get(anchor.index, 1.0)
    anchor_ids = ev.anchor_indices()
    for node in nodes:
        names = tokens(node.name)
        if names and node.index not in anchor_ids and any(names <= m for m in mention_tokens):
            score += 0.25
    # Candidates with very large neighborhoods match many mentions by chance.
    ev.scores.verified[center] = score / (1.0 + 0.1 * math.log1p(total))


def absorb_condition_check(ctx: PolicyContext, ev: Evidence, center: int, args: dict,
                           nodes: list[SeenNode]) -> None:
    """A candidate's neighbourhood searched for one condition: satisfied when a member is listed, or a node
    below it (its name holds the member's whole name, e.g. "Horizontal nystagmus" for "Nystagmus")."""
    ev.checked.add(center)
    label = args.get("query")
    for k in positive_conditions(ctx, ev):
        condition = ev.conditions[k]
        if condition.label != label:
            continue
        members = set(condition.members)
        names = [ctx.tokens(ctx.graph.name(m)) for m in condition.members]
        for node in nodes:
            tokens = ctx.tokens(node.name)
            if node.index in members or any(n and n <= tokens for n in names):
                ev.satisfied[center].add(k)
                if node.index in members:
                    ev.scores.record_support(center, node.index, node.out_relations + node.in_relations)
                break
