"""The offline policy's phases, in order: anchor, expand, page, second hop, verify, answer, finish.

Each phase has a pure ``plan`` (the tool calls it would make from the evidence so far, and a note; no calls when it
has nothing to do, and the policy moves on to the next phase) and an ``absorb`` that reads the results of the calls
it made into the evidence. Planning never writes the evidence, so a replay may plan as often as it needs."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Mapping, Set
from typing import ClassVar, NamedTuple

from ....llm.messages import ToolCall as MadeCall
from ....question import identifiers
from ....runtime.tools import arguments_of
from ..tools import ADD_TO_ANSWER, FINISH, SEARCH_IN_GRAPH, SEARCH_IN_NEIGHBORHOOD
from .anchoring import MAX_CLAUSES, MAX_MENTIONS, absorb_searches
from .candidates import (
    absorb_candidates,
    absorb_condition_check,
    absorb_expansion,
    absorb_verification,
    along_hierarchy,
    two_levels,
)
from .conditions import (
    MAX_CONJUNCTION,
    conjunctive,
    other_conditions_query,
    positive_conditions,
    relation_of_another_condition,
)
from .conditions import satisfied as satisfied_conditions
from .context import PolicyContext
from .direction import asked_side_empty
from .evidence import Evidence, SeenNode
from .evidence_answers import answers
from .evidence_rank import explain
from .quoted import described_phrases
from .ranking import conjunction_ranking, ranked_candidates
from .reasons import confidence, reason

PAGE_LIMIT = 200  # neighbours read per anchor when several conditions must be intersected (10 pages of 20)
# or when the question names many (a profile): the candidates then come from every anchor's neighbourhood, not
# from each one's first page ranked by text, and are scored across the anchors (see candidates.absorb_candidates)
ToolCall = tuple[str, dict[str, object]]
Results = list[tuple[MadeCall, object]]  # each call of a step with its tool's typed result (see listings)


class Plan(NamedTuple):
    """A phase's tool calls (tool name, arguments) and the note the assistant message carries."""

    calls: list[ToolCall]
    note: str


NOTHING = Plan([], "")


class Phase:
    """One step of the offline policy: ``plan`` reads the evidence, ``absorb`` adds what its calls returned."""

    name: ClassVar[str]

    def __init__(self, ctx: PolicyContext) -> None:
        self.ctx = ctx

    def plan(self, ev: Evidence, tool_names: Set[str]) -> Plan:
        raise NotImplementedError

    def absorb(self, ev: Evidence, results: Results) -> None:
        """Read the results of this phase's calls into ``ev`` (nothing to read by default)."""
        return None

    def _listings(self, results: Results) -> Iterator[tuple[dict[str, object], object, list[SeenNode], int]]:
        """Each neighbourhood call's arguments, centre, listed nodes and total."""
        for call, data in results:
            nodes = self.ctx.nodes(data)
            args = arguments_of(call)
            total = self.ctx.total(data)
            yield args, args.get("node_index"), nodes, len(nodes) if total is None else total


def _offset(args: Mapping[str, object]) -> int:
    """The page offset a neighbourhood call asked for (0 when none)."""
    offset = args.get("offset")
    return int(offset) if isinstance(offset, int | float) else 0


class AnchorPhase(Phase):
    """Search the graph for each entity mention, clause, the name asked about and the whole question."""

    name = "anchor"

    def plan(self, ev: Evidence, tool_names: Set[str]) -> Plan:
        a = ev.analysis
        calls: list[ToolCall] = [(SEARCH_IN_GRAPH, {"query": m.text, "size": 20}) for m in a.mentions[:MAX_MENTIONS]]
        calls += [(SEARCH_IN_GRAPH, {"query": word, "size": 5}) for word in identifiers(a.question)[:8]]
        calls += [(SEARCH_IN_GRAPH, {"query": c.text, "size": 20}) for c in a.clauses[:MAX_CLAUSES]]
        searched = {args["query"] for _, args in calls}
        if a.named_phrase and a.named_phrase not in searched:
            # "What is the term for X?": the node named X is wanted; search its name on its own.
            calls.append((SEARCH_IN_GRAPH, {"query": a.named_phrase, "size": 20}))
        # A long quoted phrase may describe the node the question goes from ("the package described as "..."").
        calls += [(SEARCH_IN_GRAPH, {"query": q, "size": 5}) for q in described_phrases(a) if q not in searched]
        if a.question.strip():
            calls.append((SEARCH_IN_GRAPH, {"query": a.question, "size": 30}))
        return Plan(calls, "Search the graph for each entity the question mentions, and for the question as a whole.")

    def absorb(self, ev: Evidence, results: Results) -> None:
        absorb_searches(self.ctx, ev, results)


class ExpandPhase(Phase):
    """Explore each anchor's neighbourhood filtered to the wanted type (or to a type the question goes through)."""

    name = "expand"

    def plan(self, ev: Evidence, tool_names: Set[str]) -> Plan:
        ctx, a = self.ctx, ev.analysis
        if SEARCH_IN_NEIGHBORHOOD not in tool_names or ev.unsupported:
            return NOTHING
        calls: list[ToolCall] = []
        query = expansion_query(ev)
        conjunction = conjunctive(ctx, ev)
        for anchor in ev.positive_anchors():
            if ev.shared is not None and anchor.index != ev.shared.anchor:
                continue  # "... share an ingredient with Z": the other names say what is shared, Z starts
            hop_type, via_middle = ctx.hop_type(anchor.type, ev)
            # With several conditions, rank each anchor's neighbours by the others: answers whose own text
            # states another condition (e.g. a mode of inheritance) come first.
            own_query = other_conditions_query(ctx, ev, anchor.index) if conjunction and not via_middle else query
            args: dict[str, object] = {"node_index": anchor.index, "query": own_query or query}
            if hop_type:
                args["node_types"] = [hop_type]
            if via_middle and hop_type:
                # A relation the question names belongs to the hop it fits; the last hop when it fits both.
                relation = ctx.relation_hint(anchor.type, hop_type, a, exclude=(hop_type, str(ev.target)),
                                             anchors=ev.anchors, meant=ev.meant)
            else:
                relation = ctx.relation_hint(anchor.type, hop_type, a, anchors=ev.anchors, meant=ev.meant)
                if relation and conjunction and relation_of_another_condition(ctx, ev, anchor.index, relation):
                    # With several conditions a relation the question names belongs to the condition that
                    # says it ("autosomal recessive *inheritance*"), not to every anchor; one that no
                    # condition says ("the age of *onset* of A and of B") links the answers to each.
                    relation = None
            if ev.shared is not None:
                relation = ev.shared.relation
            if relation:
                args["edge_types"] = [relation]
            calls.append((SEARCH_IN_NEIGHBORHOOD, args))
        return Plan(calls, "Explore the neighborhoods of the anchored entities, filtered to the type asked for.")

    def absorb(self, ev: Evidence, results: Results) -> None:
        # The anchors explored towards a named intermediate type: what they list are intermediates, not answers.
        ev.expansions.via_middle.update(anchor.index for anchor in ev.positive_anchors()
                                        if self.ctx.hop_type(anchor.type, ev)[1])
        for args, center, nodes, total in self._listings(results):
            if center not in ev.expansions.via_middle and total > len(nodes):
                ev.expansions.calls.append(({k: v for k, v in args.items() if k != "offset"}, len(nodes)))
            if isinstance(center, int):
                ev.expansions.totals[center] = total
            if total == 0 and args.get("edge_types"):
                ev.expansions.filtered_out.append(args)
            absorb_expansion(self.ctx, ev, center, nodes, total, _offset(args))


def expansion_query(ev: Evidence) -> str:
    """The subquery that ranks a neighborhood: the question without the findings it says are absent; agents
    after the first put the quoted text constraints first, then the named entities in a shuffled order (seeded
    per question and agent), so their candidate pools differ where a neighborhood is larger than the budget."""
    a = ev.analysis
    base = a.question_without_negations or a.question
    if ev.agent_index == 0:
        return base
    named = [m.text for m in a.mentions if not m.negated]
    random.Random(ev.seed).shuffle(named)
    return " ".join([*a.quoted, *named])[:400] or base


def pages_anchors(ctx: PolicyContext, ev: Evidence) -> bool:
    """Whether the anchors' neighbourhoods are read past their first page: with a few conditions to intersect,
    and with many named entities (more than are intersected: a profile), where the answer is the node that
    shares the most specific of them, and a first page ranked by the question's text leaves it out."""
    return conjunctive(ctx, ev) or len(positive_conditions(ctx, ev)) > MAX_CONJUNCTION


class PagePhase(Phase):
    """With several conditions or many anchors, read the next pages of each anchor's neighbourhood (up to
    ``PAGE_LIMIT``) so that candidates reached from every anchor are seen; or retry expansions a relation filter
    left empty."""

    name = "page"

    def plan(self, ev: Evidence, tool_names: Set[str]) -> Plan:
        if SEARCH_IN_NEIGHBORHOOD not in tool_names:
            return NOTHING
        note = "Read further pages of the anchors' neighbours to intersect them."
        if ev.expansions.filtered_out and not ev.scores.score and not ev.scores.intermediates:
            # The relation the question seemed to name linked no anchor to anything (a word inside a finding's
            # name, "focal-onset", is no request for onsets): a filter never empties the answer.
            return Plan([(SEARCH_IN_NEIGHBORHOOD, {k: v for k, v in call.items() if k != "edge_types"})
                         for call in ev.expansions.filtered_out], note)
        if not pages_anchors(self.ctx, ev) and not asked_side_empty(ev):  # (the asked side may be further on)
            return Plan([], note)
        calls: list[ToolCall] = []
        for call, page in ev.expansions.calls:
            total = ev.expansions.totals.get(call["node_index"], 0)
            for offset in range(page, min(total, PAGE_LIMIT), max(page, 1)):
                calls.append((SEARCH_IN_NEIGHBORHOOD, {**call, "offset": offset}))
        return Plan(calls, note)

    def absorb(self, ev: Evidence, results: Results) -> None:
        for args, center, nodes, total in self._listings(results):
            if isinstance(center, int):
                ev.expansions.totals[center] = total
            absorb_expansion(self.ctx, ev, center, nodes, total, _offset(args))


class SecondHopPhase(Phase):
    """Follow the best intermediate nodes one more hop to the wanted type."""

    name = "second_hop"

    def plan(self, ev: Evidence, tool_names: Set[str]) -> Plan:
        a = ev.analysis
        if ev.unsupported or not ev.scores.intermediates or SEARCH_IN_NEIGHBORHOOD not in tool_names:
            return NOTHING
        best = sorted(ev.scores.intermediates, key=lambda i: -ev.scores.intermediates[i])[:8]
        calls: list[ToolCall] = []
        for index in best:
            args: dict[str, object] = {"node_index": index, "query": a.question}
            if ev.target:
                args["node_types"] = [ev.target]
                middle_type = ev.scores.intermediate_types.get(index)
                relation = (self.ctx.relation_hint(middle_type, ev.target, a, anchors=ev.anchors, meant=ev.meant)
                            if middle_type else None)
                if ev.shared is not None:
                    relation = ev.shared.relation
                if relation:
                    args["edge_types"] = [relation]
            calls.append((SEARCH_IN_NEIGHBORHOOD, args))
        return Plan(calls, "Follow the intermediate entities one more hop to the type asked for.")

    def absorb(self, ev: Evidence, results: Results) -> None:
        route, anchors = ev.shared, ev.anchor_indices()
        for _args, center, nodes, total in self._listings(results):
            if route is not None:  # linked to the shared node as the anchor is; the anchor itself left out
                nodes = [n for n in nodes if route.sharing(n) and n.index not in anchors]
            kept = along_hierarchy(self.ctx, ev, nodes, strict=two_levels(self.ctx, ev))
            weight = ev.scores.intermediates.get(center, 1.0) if isinstance(center, int) else 1.0
            absorb_candidates(self.ctx, ev, center, kept, total, weight=weight)


class VerifyPhase(Phase):
    """Check the strongest candidates: look in their own neighbourhood for the question's anchors, or, with a few
    stated conditions, for each condition not yet seen satisfied."""

    name = "verify"

    def plan(self, ev: Evidence, tool_names: Set[str]) -> Plan:
        if ev.unsupported:
            return NOTHING
        if conjunctive(self.ctx, ev):
            return Plan(self._condition_checks(ev, tool_names),
                        "Check the strongest candidates against each condition of the question.")
        anchors = ev.positive_anchors()
        if len(anchors) < 2 or not ev.scores.score or SEARCH_IN_NEIGHBORHOOD not in tool_names:
            return NOTHING
        anchor_types = sorted({anchor.type for anchor in anchors})
        count = self.ctx.verify + 10 * (ev.agent_index % 3)  # later agents check more candidates
        calls: list[ToolCall] = []
        for index in ranked_candidates(ev)[: max(count, 1)]:
            for anchor_type in anchor_types:
                args: dict[str, object] = {"node_index": index, "query": " ".join(m.text for m in ev.analysis.mentions)}
                args["node_types"] = [anchor_type]
                calls.append((SEARCH_IN_NEIGHBORHOOD, args))
        return Plan(calls, "Check the strongest candidates: which of the question's entities are their neighbors?")

    def _condition_checks(self, ev: Evidence, tool_names: Set[str]) -> list[ToolCall]:
        """For the best candidates, look in their own neighbourhood for each condition not yet seen satisfied."""
        ctx = self.ctx
        if SEARCH_IN_NEIGHBORHOOD not in tool_names or not ev.scores.score:
            return []
        count = ctx.verify + 10 * (ev.agent_index % 3)  # later agents check more candidates
        calls: list[ToolCall] = []
        # Take candidates in turn from each group of conditions already met, so that the candidates of every
        # condition get checked, not only those of the most specific one.
        groups: dict[frozenset[int], list[int]] = {}
        for index in conjunction_ranking(ctx, ev, filtered=False):
            groups.setdefault(frozenset(satisfied_conditions(ctx, ev, index)), []).append(index)
        ordered = [i for round_ in itertools.zip_longest(*groups.values()) for i in round_ if i is not None]
        for index in ordered[:count]:
            have = satisfied_conditions(ctx, ev, index)
            for k in positive_conditions(ctx, ev):
                if k in have:
                    continue
                condition = ev.conditions[k]
                member_type = ctx.graph.node_type(condition.members[0])
                calls.append((SEARCH_IN_NEIGHBORHOOD, {"node_index": index, "query": condition.label,
                                                       "node_types": [member_type]}))
        return calls

    def absorb(self, ev: Evidence, results: Results) -> None:
        checking_conditions = conjunctive(self.ctx, ev)  # a verify step does not change the conditions
        for args, center, nodes, total in self._listings(results):
            if not isinstance(center, int):
                continue
            if checking_conditions:
                absorb_condition_check(self.ctx, ev, center, args, nodes)
            else:
                absorb_verification(self.ctx, ev, center, nodes, total)


class AnswerPhase(Phase):
    """Add the best-supported nodes to the answer, each with its reason and evidence."""

    name = "answer"

    def plan(self, ev: Evidence, tool_names: Set[str]) -> Plan:
        ranked = answers(self.ctx, ev)
        if not ranked:
            return NOTHING
        nodes = [{"node_index": a.index, "reasoning": explain(reason(self.ctx, ev, a.index), a)} for a in ranked]
        return Plan([(ADD_TO_ANSWER, {"answer_nodes": nodes})], "Add the best-supported nodes to the answer.")


class FinishPhase(Phase):
    """Finish, saying how sure the answer is and why."""

    name = "finish"

    def plan(self, ev: Evidence, tool_names: Set[str]) -> Plan:
        level, why = confidence(self.ctx, ev)
        return Plan([(FINISH, {"comment": "Answer complete.", "confidence": level, "reason": why})], "Done.")


PHASES: tuple[type[Phase], ...] = (AnchorPhase, ExpandPhase, PagePhase, SecondHopPhase, VerifyPhase, AnswerPhase,
                                   FinishPhase)
