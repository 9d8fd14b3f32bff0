"""The offline policy: a deterministic stand-in for the model that drives ARK's tools like an agent would.

It follows the seed paper's strategies with real tool calls and reads only what its tool calls return (the tools'
structured results, never their text) plus the graph's schema, names and node text, which every agent may see
through the tools:

1. *anchor* — global search for each entity mention in the question; a hit becomes an anchor only when convincing
   (its name is contained in the mention, or a short mention is contained in the node's text);
2. *expand* — explore each anchor's neighborhood filtered to the wanted node type (from the question and the
   schema), with the question as ranking subquery; when the schema has no direct link from the anchor's type to
   the wanted type, hop through an intermediate type first (*second hop*);
3. *verify* — for the best candidates reached from several anchors, look at their own neighborhood for the other
   anchors (the agent checking its answer);
4. *answer* — add candidates ranked by anchor evidence, each anchor weighted by how specific it is
   (``log(1 + |type| / |neighborhood|)``), then *finish*. With no convincing anchor it falls back to one broad
   search of the whole question and adds about half of the results (the paper's first strategy).

Each agent (``agent_index``) makes different, seeded choices — which anchors to keep, how many candidates to verify —
so that voting across agents helps. The policy is a pure function of the conversation: replaying the same messages
gives the same next call. It is a baseline and a teacher for tests, not a language model.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import math
import random
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ....graph import KnowledgeGraph, normalize_name
from ....llm.policy import PolicyReply, Usage
from ....question import (
    QUESTION_WORDS,
    TAXONOMY_RELATIONS,
    Mention,
    QuestionAnalysis,
    QuestionReader,
    identifiers,
    name_tokens,
)
from ....runtime.tools import arguments_of
from ..tools import ADD_TO_ANSWER, FINISH, SEARCH_IN_GRAPH, SEARCH_IN_NEIGHBORHOOD
from .evidence_answers import EvidenceAnswers
from .evidence_rank import doubted, explain, top_tie
from .messages import assistant_message, question_of
from .spans import find_run, find_runs, listed_names, longest_common_run, says, surface, word_at
from .wording import named_by_stems, said_with_content

MAX_MENTIONS = 24
MAX_CLAUSES = 8
MAX_CONJUNCTION = 4  # at most this many conditions are intersected; more are a profile, weighed (see _conjunctive)
PAGE_LIMIT = 200  # neighbours read per anchor when several conditions must be intersected (10 pages of 20)
FAMILY_SIZE = 10  # nodes kept when a mention names a family of nodes rather than one
_RELATIVE_CLAUSE = re.compile(r"\s+(?:that|which|whose|who|where)\b")
SEEN_RESULTS_KEPT = 512  # tool results whose nodes are kept for the next replays (a few questions' worth)
# The tool loop runs at most a policy's ``max_tool_calls_per_turn`` calls of one reply: a guard against a model's
# runaway reply (32 by default). This policy is no model: each step's calls are bounded by its own constants
# (MAX_MENTIONS, verify, PAGE_LIMIT, FAMILY_SIZE) and its replay reads every one of them as evidence (the verify
# step checks 40 to 60 candidates per anchor type), so the loop runs them all: the most the [llm] setting allows.
PLANNED_CALLS_PER_STEP = 10_000
PHASES = ("anchor", "expand", "page", "second_hop", "verify", "answer", "finish")


@dataclass(frozen=True)
class SeenNode:
    """A node a tool call returned, with the relations that link it to the call's centre (neighbourhoods)."""

    index: int
    name: str
    type: str
    out_relations: tuple[str, ...] = ()
    in_relations: tuple[str, ...] = ()


@dataclass
class Condition:
    """One thing the answers must satisfy: a node the question names (``named``), a family of nodes whose names
    all contain the question's words when none bears them alone (``family``), or a node whose text the question
    paraphrases (``described``, e.g. a finding given by its definition)."""

    label: str
    members: list[int]
    kind: str = "named"
    negated: bool = False


@dataclass
class Evidence:
    """What the agent has learnt so far, rebuilt from the observations in the conversation."""

    analysis: QuestionAnalysis
    rng: random.Random
    agent_index: int = 0
    anchors: list[tuple[int, str, str, bool]] = field(default_factory=list)  # (index, name, type, negated)
    broad: list[SeenNode] = field(default_factory=list)
    candidate_score: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    candidate_hits: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    candidate_names: dict[int, str] = field(default_factory=dict)
    intermediates: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    verified: dict[int, float] = field(default_factory=dict)
    anchor_weight: dict[int, float] = field(default_factory=dict)
    via_middle: set[int] = field(default_factory=set)  # anchors explored towards a named intermediate type
    intermediate_types: dict[int, str] = field(default_factory=dict)
    conditions: list[Condition] = field(default_factory=list)
    condition_of: dict[int, int] = field(default_factory=dict)  # anchor index -> position in ``conditions``
    satisfied: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # candidate -> conditions
    checked: set[int] = field(default_factory=set)  # candidates whose own neighbourhood was looked at
    expansion_total: dict[int, int] = field(default_factory=dict)  # anchor -> neighbours of the wanted type
    anchor_relations: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    pending: list[tuple[Mention, list[SeenNode]]] = field(default_factory=list)  # mentions with no named node
    expansion_calls: list[tuple[dict, int]] = field(default_factory=list)  # (arguments, page size) to page on
    named: list[int] = field(default_factory=list)  # nodes bearing the name the question asks about (named_phrase)
    # candidate -> anchor -> relations linking them: the graph's evidence for a candidate (see evidence_rank)
    support: dict[int, dict[int, set[str]]] = field(default_factory=lambda: defaultdict(dict))
    filtered_out: list[dict] = field(default_factory=list)  # expansions a relation filter left empty
    unread: list[str] = field(default_factory=list)  # parts of the question that stated something no anchor used


class OfflinePolicy(EvidenceAnswers):
    """A :class:`~ark.llm.ChatPolicy` that needs no model: ``OfflinePolicy(graph)``.

    It reads the graph's schema and node text; all searching goes through the tool calls it emits.
    """

    name = "offline"
    max_tool_calls_per_turn = PLANNED_CALLS_PER_STEP  # read by the tool loop (see PLANNED_CALLS_PER_STEP)

    def __init__(self, graph: KnowledgeGraph, verify: int = 40, max_answers: int = 20) -> None:
        self.graph = graph
        self._seen_results: dict[int, tuple[dict[str, Any], list[SeenNode]]] = {}  # see _nodes
        self._tokens = functools.lru_cache(maxsize=200_000)(lambda text: frozenset(name_tokens(text)))
        self.reader = QuestionReader(graph)
        # The reading of a question: every step of every agent replays it; an analysis is never modified.
        self._analysis = functools.lru_cache(maxsize=SEEN_RESULTS_KEPT)(self.reader.read)
        # Words that say what is asked rather than name an entity: interrogatives, auxiliaries, type names.
        self._question_words = frozenset({"what", "which", "who", "are", "is", "was", "were", "do", "does", "can",
                                          "associated", "linked", "related", "have", "has", "show", "shows",
                                          "present", "presents", "list", "name", "find", "give", "all"}
                                         | set().union(*self.reader.type_words.values()))
        # Words that say how a question asks, not what the answers must meet (see _note_unread).
        relation_words = set().union(*self.reader.relation_words.values(), *self.reader.relation_vocabulary.values())
        self._ignorable = self._question_words | QUESTION_WORDS | self.reader.frame_words | relation_words
        self.verify = verify
        self.max_answers = max_answers
        self.type_sizes = graph.type_counts()
        self.links = {(t.source_type, t.target_type) for t in graph.schema}
        self.links |= {(b, a) for a, b in self.links}
        # The relation that links most pairs of two types (per source type, towards the wanted type at use).
        counts: dict[tuple[str, str], tuple[int, str]] = {}
        for t in graph.schema:
            for pair in ((t.source_type, t.target_type), (t.target_type, t.source_type)):
                counts[pair] = max(counts.get(pair, (0, "")), (t.count, t.relation))
        self.main_relations = {pair: relation for pair, (_, relation) in counts.items()}
        self.relations_between: dict[tuple[str, str], set[str]] = defaultdict(set)
        for t in graph.schema:
            self.relations_between[(t.source_type, t.target_type)].add(t.relation)
            self.relations_between[(t.target_type, t.source_type)].add(t.relation)

    async def aclose(self) -> None:
        return None

    def _nodes(self, data: dict[str, Any]) -> list[SeenNode]:
        """The nodes a tool call returned, in its order, from its structured result. Each step replays the whole
        history, so a result is read once and kept (by identity: the history holds the same result objects) for
        the replays of the steps after it."""
        key = id(data)
        seen = self._seen_results.get(key)
        if seen is not None and seen[0] is data:
            return list(seen[1])
        g = self.graph
        nodes = [SeenNode(r["index"], g.name(r["index"]), g.node_type(r["index"]), tuple(r.get("out", ())),
                          tuple(r.get("in", ())))
                 for r in data.get("results", ()) if g.is_valid_index(r.get("index", -1))]
        if len(self._seen_results) >= SEEN_RESULTS_KEPT:
            self._seen_results.clear()
        self._seen_results[key] = (data, nodes)
        return list(nodes)

    async def next_message(self, messages: list[dict], tools: list[dict], *, agent_index: int = 0,
                           tool_choice: str = "required") -> PolicyReply:
        tool_names = {t["function"]["name"] for t in tools}
        evidence, phase_index = self._replay(messages, agent_index, tool_names)
        calls: list[tuple[str, dict[str, Any]]] = []
        while not calls:
            phase = PHASES[min(phase_index, len(PHASES) - 1)]
            calls, note = self._plan(phase, evidence, tool_names)
            phase_index += 1
        return PolicyReply(message=assistant_message(note, calls, len(messages)), usage=Usage())

    # ---------------------------------------------------------------- replay
    def _replay(self, messages: list[dict], agent_index: int, tool_names: set[str]) -> tuple[Evidence, int]:
        question = question_of(messages)
        seed = int(hashlib.sha256(f"{question}|{agent_index}".encode()).hexdigest()[:12], 16)
        evidence = Evidence(self._analysis(question), random.Random(seed), agent_index)
        results_by_call = {m.get("tool_call_id"): m.get("data") or {} for m in messages if m.get("role") == "tool"}
        phase_index = 0
        for message in messages:
            if message.get("role") != "assistant" or not message.get("tool_calls"):
                continue
            phase = PHASES[min(phase_index, len(PHASES) - 1)]
            # Recompute what this step planned so skipped phases line up with the live run.
            planned, _ = self._plan(phase, evidence, tool_names)
            while not planned and phase_index < len(PHASES) - 1:
                phase_index += 1
                phase = PHASES[phase_index]
                planned, _ = self._plan(phase, evidence, tool_names)
            results = [(call, results_by_call.get(call.get("id"), {})) for call in message["tool_calls"]]
            self._absorb(phase, evidence, results)
            phase_index += 1
        return evidence, phase_index

    # ---------------------------------------------------------------- planning
    def _plan(self, phase: str, ev: Evidence, tool_names: set[str]) -> tuple[list[tuple[str, dict]], str]:
        a = ev.analysis
        if phase == "anchor":
            calls = [(SEARCH_IN_GRAPH, {"query": m.text, "size": 20}) for m in a.mentions[:MAX_MENTIONS]]
            calls += [(SEARCH_IN_GRAPH, {"query": word, "size": 5}) for word in identifiers(a.question)[:8]]
            calls += [(SEARCH_IN_GRAPH, {"query": c.text, "size": 20}) for c in a.clauses[:MAX_CLAUSES]]
            searched = {args["query"] for _, args in calls}
            if a.named_phrase and a.named_phrase not in searched:
                # "What is the term for X?": the node named X is wanted; search its name on its own.
                calls.append((SEARCH_IN_GRAPH, {"query": a.named_phrase, "size": 20}))
            if a.question.strip():
                calls.append((SEARCH_IN_GRAPH, {"query": a.question, "size": 30}))
            return calls, "Search the graph for each entity the question mentions, and for the question as a whole."
        if phase == "expand":
            if SEARCH_IN_NEIGHBORHOOD not in tool_names or a.unsupported:
                return [], ""
            calls = []
            query = self._expansion_query(ev)
            conjunction = self._conjunctive(ev)
            for index, _name, node_type, _negated in self._positive_anchors(ev):
                hop_type, via_middle = self._hop_type(node_type, a, ev)
                # With several conditions, rank each anchor's neighbours by the others: answers whose own text
                # states another condition (e.g. a mode of inheritance) come first.
                own_query = self._other_conditions_query(ev, index) if conjunction and not via_middle else query
                args: dict[str, Any] = {"node_index": index, "query": own_query or query}
                if hop_type:
                    args["node_types"] = [hop_type]
                if via_middle:
                    ev.via_middle.add(index)
                    # A relation the question names belongs to the hop it fits; the last hop when it fits both.
                    relation = self._relation_hint(node_type, hop_type, a, exclude=(hop_type, a.target_types[0]),
                                                   anchors=ev.anchors)
                else:
                    relation = self._relation_hint(node_type, hop_type, a, anchors=ev.anchors)
                    if relation and conjunction and self._relation_of_another_condition(ev, index, relation):
                        # With several conditions a relation the question names belongs to the condition that
                        # says it ("autosomal recessive *inheritance*"), not to every anchor; one that no
                        # condition says ("the age of *onset* of A and of B") links the answers to each.
                        relation = None
                if relation:
                    args["edge_types"] = [relation]
                calls.append((SEARCH_IN_NEIGHBORHOOD, args))
            return calls, "Explore the neighborhoods of the anchored entities, filtered to the type asked for."
        if phase == "page":
            return self._plan_pages(ev, tool_names), "Read further pages of the anchors' neighbours to intersect them."
        if phase == "second_hop":
            if a.unsupported or not ev.intermediates or SEARCH_IN_NEIGHBORHOOD not in tool_names:
                return [], ""
            best = sorted(ev.intermediates, key=lambda i: -ev.intermediates[i])[:8]
            calls = []
            for index in best:
                args = {"node_index": index, "query": a.question}
                if a.target_types:
                    args["node_types"] = [a.target_types[0]]
                    middle_type = ev.intermediate_types.get(index)
                    relation = (self._relation_hint(middle_type, a.target_types[0], a, anchors=ev.anchors)
                                if middle_type else None)
                    if relation:
                        args["edge_types"] = [relation]
                calls.append((SEARCH_IN_NEIGHBORHOOD, args))
            return calls, "Follow the intermediate entities one more hop to the type asked for."
        if phase == "verify":
            if a.unsupported:
                return [], ""
            if self._conjunctive(ev):
                return (self._plan_condition_checks(ev, tool_names),
                        "Check the strongest candidates against each condition of the question.")
            anchors = self._positive_anchors(ev)
            if len(anchors) < 2 or not ev.candidate_score or SEARCH_IN_NEIGHBORHOOD not in tool_names:
                return [], ""
            anchor_types = sorted({t for _, _, t, _ in anchors})
            count = self.verify + 10 * (ev.agent_index % 3)  # later agents check more candidates
            calls = []
            for index in self._ranked_candidates(ev)[: max(count, 1)]:
                for anchor_type in anchor_types:
                    args = {"node_index": index, "query": " ".join(m.text for m in ev.analysis.mentions)}
                    args["node_types"] = [anchor_type]
                    calls.append((SEARCH_IN_NEIGHBORHOOD, args))
            return calls, "Check the strongest candidates: which of the question's entities are their neighbors?"
        if phase == "answer":
            answers = self._answers(ev)
            if not answers:
                return [], ""
            nodes = [{"node_index": a.index, "reasoning": explain(self._reason(ev, a.index), a)} for a in answers]
            return [(ADD_TO_ANSWER, {"answer_nodes": nodes})], "Add the best-supported nodes to the answer."
        confidence, reason = self._confidence(ev)
        return [(FINISH, {"comment": "Answer complete.", "confidence": confidence, "reason": reason})], "Done."

    def _positive_conditions(self, ev: Evidence) -> list[int]:
        """Positions of the conditions the answers must satisfy (not the findings said to be absent)."""
        live = [k for k, c in enumerate(ev.conditions) if not c.negated and c.members]
        words = {k: self._tokens(ev.conditions[k].label) for k in live}
        # A name inside a longer anchored name ("Sex reversal" in "46, XY sex reversal 11") is that name's word,
        # not a condition of its own.
        return [k for k in live if not any(j != k and words[k] < words[j] for j in live)]

    def _conjunctive(self, ev: Evidence) -> bool:
        """Whether the question states a few conditions that every answer should meet ("A and B"). A long list of
        findings (a patient's profile) is not: rare diseases show their features with incomplete penetrance, so
        no answer is expected to have them all, and evidence is weighed instead."""
        return 2 <= len(self._positive_conditions(ev)) <= MAX_CONJUNCTION

    def _names_relation(self, ev: Evidence, position: int, relation: str) -> bool:
        """Whether the label of condition ``position`` says the relation ("... *inheritance*" ~ has_inheritance)."""
        words = self.reader.relation_words.get(relation, set())
        label = set(name_tokens(ev.conditions[position].label))
        return any(w in label or any(len(w) >= 5 and x[:5] == w[:5] for x in label) for w in words)

    def _relation_of_another_condition(self, ev: Evidence, anchor: int, relation: str) -> bool:
        """Whether a relation the question names is said by the label of a condition other than the anchor's own
        (or by none, when the anchor stands for no condition but another condition says it)."""
        own = ev.condition_of.get(anchor)
        if own is not None and self._names_relation(ev, own, relation):
            return False
        return any(self._names_relation(ev, k, relation) for k in self._positive_conditions(ev) if k != own)

    def _other_conditions_query(self, ev: Evidence, anchor: int) -> str:
        own = ev.condition_of.get(anchor)
        return " ".join(ev.conditions[k].label for k in self._positive_conditions(ev) if k != own)[:400]

    def _plan_pages(self, ev: Evidence, tool_names: set[str]) -> list[tuple[str, dict]]:
        """With several conditions, the next pages of each anchor's neighbourhood (up to ``PAGE_LIMIT``) so that
        candidates reached from every condition are seen, not only the first page of each."""
        if SEARCH_IN_NEIGHBORHOOD not in tool_names:
            return []
        if ev.filtered_out and not ev.candidate_score and not ev.intermediates:
            # The relation the question seemed to name linked no anchor to anything (a word inside a finding's
            # name, "focal-onset", is no request for onsets): a filter never empties the answer.
            return [(SEARCH_IN_NEIGHBORHOOD, {k: v for k, v in call.items() if k != "edge_types"})
                    for call in ev.filtered_out]
        if not self._conjunctive(ev):
            return []
        calls = []
        for call, page in ev.expansion_calls:
            total = ev.expansion_total.get(call["node_index"], 0)
            for offset in range(page, min(total, PAGE_LIMIT), max(page, 1)):
                calls.append((SEARCH_IN_NEIGHBORHOOD, {**call, "offset": offset}))
        return calls

    def _plan_condition_checks(self, ev: Evidence, tool_names: set[str]) -> list[tuple[str, dict]]:
        """For the best candidates, look in their own neighbourhood for each condition not yet seen satisfied."""
        if SEARCH_IN_NEIGHBORHOOD not in tool_names or not ev.candidate_score:
            return []
        count = self.verify + 10 * (ev.agent_index % 3)  # later agents check more candidates
        calls = []
        # Take candidates in turn from each group of conditions already met, so that the candidates of every
        # condition get checked, not only those of the most specific one.
        groups: dict[frozenset[int], list[int]] = {}
        for index in self._conjunction_ranking(ev, filtered=False):
            groups.setdefault(frozenset(self._satisfied(ev, index)), []).append(index)
        ordered = [i for round_ in itertools.zip_longest(*groups.values()) for i in round_ if i is not None]
        for index in ordered[:count]:
            have = self._satisfied(ev, index)
            for k in self._positive_conditions(ev):
                if k in have:
                    continue
                condition = ev.conditions[k]
                member_type = self.graph.node_type(condition.members[0])
                calls.append((SEARCH_IN_NEIGHBORHOOD, {"node_index": index, "query": condition.label,
                                                       "node_types": [member_type]}))
        return calls

    def _satisfied(self, ev: Evidence, index: int) -> set[int]:
        """Conditions a candidate satisfies: reached from them, seen in its neighbourhood, or named in its text."""
        have = set(ev.satisfied.get(index, ()))
        text = self.graph.text(index).lower() if self.graph.is_valid_index(index) else ""
        lines = [self._tokens(line) for line in text.splitlines()]
        for k in self._positive_conditions(ev):
            if k in have:
                continue
            for member in ev.conditions[k].members[:3]:
                name = self._tokens(self.graph.name(member))
                # The text names the member, or a short line of it holds all its words ("Inheritance: X-linked
                # recessive inheritance" for "X-linked inheritance": a narrower term).
                if says(text, self.graph.name(member)) or any(
                        name and name <= line and len(line) <= len(name) + 4 for line in lines):
                    have.add(k)
                    break
        return have

    def _condition_weight(self, ev: Evidence, k: int) -> float:
        weights = [ev.anchor_weight.get(m, 0.0) for m in ev.conditions[k].members]
        return max(weights, default=0.0) or 1.0

    def _attribute_conditions(self, ev: Evidence) -> set[int]:
        """Conditions linked to the answers by a minor relation of the schema between their types (e.g. a mode
        of inheritance, ``has_inheritance`` beside the far larger ``has_phenotype``): they filter, not only rank."""
        out = set()
        for k in self._positive_conditions(ev):
            members = ev.conditions[k].members
            seen = set().union(*(ev.anchor_relations.get(m, set()) for m in members))
            target = ev.analysis.target_types[0] if ev.analysis.target_types else None
            main = self.main_relations.get((self.graph.node_type(members[0]), target))
            if seen and main and main not in seen:
                out.add(k)
        return out

    def _conjunction_ranking(self, ev: Evidence, filtered: bool = True) -> list[int]:
        """Candidates of the wanted type, those satisfying most conditions (weighted by specificity) first;
        candidates failing an attribute condition are dropped when others satisfy it."""
        target = ev.analysis.target_types[0] if ev.analysis.target_types else None
        anchor_ids = {a[0] for a in ev.anchors}
        pool = [i for i in ev.candidate_score if i not in anchor_ids
                and (target is None or self.graph.node_type(i) == target)]
        have = {i: self._satisfied(ev, i) for i in pool}
        for k in sorted(self._attribute_conditions(ev)) if filtered else ():
            kept = [i for i in pool if k in have[i]]
            pool = kept or pool  # a filter never empties the answer
        weight = {k: self._condition_weight(ev, k) for k in self._positive_conditions(ev)}

        def key(i: int) -> tuple[int, float, float, int]:
            return (-len(have[i]), -sum(weight.get(k, 0.0) for k in have[i]), -ev.candidate_score[i], i)

        return sorted(pool, key=key)

    def _confidence(self, ev: Evidence) -> tuple[str, str]:
        """How sure the answer is and why, in one line: the evidence's level, lowered by doubts (see doubted)."""
        level, reason = self._evidence_confidence(ev)
        answers = self._answers(ev)
        first = answers[0].index if answers else None
        unsaid = list(ev.analysis.quoted) if first is not None and not self._says_quoted(ev, [first]).get(first) else []
        return doubted(level, reason, tied=top_tie(answers), unread=ev.unread, unsaid=unsaid,
                       profile=len(self._positive_conditions(ev)) > MAX_CONJUNCTION)

    def _evidence_confidence(self, ev: Evidence) -> tuple[str, str]:
        """How sure the answer is and why, in one line, from what the tools returned."""
        a = ev.analysis
        g = self.graph
        if ev.named:
            names = "; ".join(g.name(i) for i in ev.named[:3])
            return "high", f"'{a.named_phrase or a.question}' is a name or synonym of {names}."
        if a.unsupported:
            relations = ", ".join(g.relation_types)
            return "low", (f"The graph has no node type or relation for '{a.unsupported}' (it holds "
                           f"{', '.join(g.node_types)}, linked by {relations}).")
        positive = self._positive_conditions(ev)
        target = a.target_types[0] if a.target_types else None
        ranked = self._final_ranking(ev)
        if not ranked:
            wanted = f" of type {target}" if target else ""
            return "low", f"No node{wanted} was found for the question's entities."
        if not positive:
            return "low", "No entity of the question was found by name; the answers are the closest text matches."
        labels = [ev.conditions[k].label for k in positive]
        if len(positive) > MAX_CONJUNCTION:
            return "medium", (f"Ranked by how strongly the {len(positive)} stated findings point at each answer; "
                              "no answer is expected to have them all.")
        inexact = [ev.conditions[k] for k in positive if ev.conditions[k].kind != "named"]
        if self._conjunctive(ev):
            best = self._satisfied(ev, ranked[0])
            if len(best & set(positive)) < len(positive):
                return "medium", ("No answer was found to satisfy every condition ("
                                  + "; ".join(labels) + "); the best partial matches are shown.")
        if inexact:
            notes = []
            for c in inexact:
                if c.kind == "family":
                    notes.append(f"no node is named '{c.label}'; used the {len(c.members)} nodes whose names "
                                 f"contain it")
                else:
                    notes.append(f"'{c.label}' was found by its description")
            line = "; ".join(notes)
            return "medium", line[:1].upper() + line[1:] + "."
        return "high", "Answers are linked to " + " and ".join(labels)[:200] + "."

    def _is_negated(self, ev: Evidence, anchor: int) -> bool:
        position = ev.condition_of.get(anchor)
        return position is not None and ev.conditions[position].negated

    def _positive_anchors(self, ev: Evidence) -> list[tuple[int, str, str, bool]]:
        return [a for a in ev.anchors if not a[3]]

    def _expansion_query(self, ev: Evidence) -> str:
        """The subquery that ranks a neighborhood: the question without the findings it says are absent; agents
        after the first put the quoted text constraints first, then the named entities in a shuffled order, so
        their candidate pools differ where a neighborhood is larger than the budget."""
        a = ev.analysis
        base = a.question_without_negations or a.question
        if ev.agent_index == 0:
            return base
        named = [m.text for m in a.mentions if not m.negated]
        ev.rng.shuffle(named)
        return " ".join([*a.quoted, *named])[:400] or base

    def _hop_type(self, anchor_type: str, a: QuestionAnalysis, ev: Evidence) -> tuple[str | None, bool]:
        """The type to explore from an anchor, and whether it is an intermediate stop: a type the question names
        between the wanted type and the anchor ("genes linked to *diseases* that have phenotype X"), else the wanted
        type if the schema links it directly, else a type that links both."""
        if not a.target_types:
            return None, False
        target = a.target_types[0]
        middle = self._named_intermediate(a, ev)
        if middle and (anchor_type, middle) in self.links and (middle, target) in self.links:
            return middle, True
        if (anchor_type, target) in self.links:
            return target, False
        middles = [t for t in self.graph.node_types if (anchor_type, t) in self.links and (t, target) in self.links]
        return (middles[0] if middles else target), False

    def _named_intermediate(self, a: QuestionAnalysis, ev: Evidence) -> str | None:
        """A node type mentioned after the wanted type that does not label an anchor ("the phenotype X")."""
        lower = a.question.lower()
        anchor_starts = [lower.find(name.lower()) for _, name, _, _ in ev.anchors]
        mentions = a.type_mentions
        target_at = next((pos for pos, t in mentions if t == a.target_types[0]), None)
        if target_at is None:
            return None
        for pos, node_type in mentions:
            if pos <= target_at:
                continue
            labels_anchor = any(0 <= start - pos <= len(node_type) + 12 for start in anchor_starts if start >= 0)
            # An intermediate opens a relative clause ("... diseases that have ..."); a bare repeat of a type
            # ("... and are phenotypes annotated to X") is a conjunct about the answers themselves.
            opens_clause = _RELATIVE_CLAUSE.match(lower, pos + len(word_at(lower, pos)))
            if not labels_anchor and opens_clause:
                return node_type
        return None

    def _hierarchy(self, a: QuestionAnalysis, anchors: list | tuple) -> str | None:
        """The way along the hierarchy the question looks, unless the words that said so lie inside the name of a
        node it names ("bilateral tonic-clonic seizure with *generalized* onset" asks for nothing broader)."""
        if not a.hierarchy:
            return None
        said = set(name_tokens(a.hierarchy_phrase))
        return None if any(said <= self._tokens(name) for _, name, _, _ in anchors) else a.hierarchy

    def _relation_hint(self, anchor_type: str, other: str | None, a: QuestionAnalysis,
                       exclude: tuple[str, str] | None = None, anchors: list | tuple = ()) -> str | None:
        if other is None:
            return None
        between = self.relations_between.get((anchor_type, other), set())
        if exclude is not None:
            between = between - self.relations_between.get(exclude, set())
        if self._hierarchy(a, anchors):
            taxonomy = [r for r in between if normalize_name(r) in TAXONOMY_RELATIONS]
            if len(taxonomy) == 1:
                return taxonomy[0]
        hinted = [r for r in a.relation_hints if r in between]
        return hinted[0] if len(hinted) == 1 and len(between) > 1 else None

    # ---------------------------------------------------------------- absorbing
    def _absorb(self, phase: str, ev: Evidence, results: list[tuple[dict, dict]]) -> None:
        if phase == "anchor":
            mentions = ev.analysis.mentions[:MAX_MENTIONS]
            clauses = {c.text: c for c in ev.analysis.clauses[:MAX_CLAUSES]}
            target = ev.analysis.target_types[0] if ev.analysis.target_types else None
            listings = [self._nodes(data) for _call, data in results]
            inside_a_name = self._inside_names_stated_in_full(ev, listings)
            for position, ((_call, _data), nodes) in enumerate(zip(results, listings, strict=True)):
                query = arguments_of(_call).get("query")
                clause = clauses.get(query) if position >= len(mentions) and query != ev.analysis.question else None
                if position < len(mentions) or clause is not None:
                    mention = mentions[position] if clause is None else clause
                    if inside_a_name(tuple(mention.tokens)):
                        # A piece of a name the question states in full, cut off at a comma or a connective
                        # ("Deafness, aminoglycoside-induced"; "... neuropathy with spastic paraplegia"): the whole
                        # name anchors it, the piece names nothing of its own.
                        continue
                    convincing = [n for n in self._convincing(mention, nodes, target, family_first=clause is not None)
                                  if not inside_a_name(name_tokens(n.name))]
                    for anchor in convincing:
                        if anchor.type == target and not mention.negated and not self._related_to_named(ev, target):
                            # The question names a node of the very type it asks for: a candidate, not a hop.
                            ev.candidate_score[anchor.index] += 1.0
                            ev.candidate_names[anchor.index] = anchor.name
                        else:
                            self._add_anchor(ev, anchor, mention.negated)
                    if not convincing:
                        ev.pending.append((mention, nodes))
                elif arguments_of(_call).get("query") == ev.analysis.question:
                    ev.broad = nodes
            self._anchor_whole_question(ev, listings, target)
            if ev.analysis.named_phrase:
                ev.named = self._named_by(ev.analysis.named_phrase, listings, target)
            read: set[str] = set()
            for mention, nodes in ev.pending:
                before = len(ev.conditions)
                self._anchor_family_or_description(ev, mention, nodes, target)
                if len(ev.conditions) > before:
                    read.add(mention.text)
            self._note_unread(ev, read)
            if not ev.analysis.target_types and not ev.named:
                # A question that is only a name: the node bearing it answers first, then its neighbourhood.
                asked = name_tokens(ev.analysis.question)
                ev.named = [a[0] for a in ev.anchors if not a[3] and name_tokens(a[1]) == asked]
            return
        for call, data in results:
            nodes = self._nodes(data)
            total = int(data.get("total", len(nodes)))
            args = arguments_of(call)
            center = args.get("node_index")
            if phase in ("expand", "page"):
                offset = int(args.get("offset") or 0)
                if phase == "expand" and center not in ev.via_middle and total > len(nodes):
                    ev.expansion_calls.append(({k: v for k, v in args.items() if k != "offset"}, len(nodes)))
                if isinstance(center, int):
                    ev.expansion_total[center] = total
                if phase == "expand" and total == 0 and args.get("edge_types"):
                    ev.filtered_out.append(args)
                self._absorb_expansion(ev, center, nodes, total, offset)
            elif phase == "verify" and isinstance(center, int) and self._conjunctive(ev):
                self._absorb_condition_check(ev, center, args, nodes)
            elif phase == "second_hop":
                nodes = self._along_hierarchy(ev, nodes)
                self._absorb_candidates(ev, center, nodes, total, weight=ev.intermediates.get(center, 1.0))
            elif phase == "verify" and isinstance(center, int):
                self._absorb_verification(ev, center, nodes, total)

    def _along_hierarchy(self, ev: Evidence, nodes: list[SeenNode]) -> list[SeenNode]:
        """When the question looks up or down an is-a relation, keep the neighbors on that side of the centre."""
        direction = self._hierarchy(ev.analysis, ev.anchors)
        if not direction:
            return nodes

        def taxonomic(relations: tuple[str, ...]) -> bool:
            return any(normalize_name(r) in TAXONOMY_RELATIONS for r in relations)

        if direction == "broader":
            kept = [n for n in nodes if taxonomic(n.out_relations)]
        else:
            kept = [n for n in nodes if taxonomic(n.in_relations)]
        return kept or nodes

    def _absorb_condition_check(self, ev: Evidence, center: int, args: dict, nodes: list[SeenNode]) -> None:
        """A candidate's neighbourhood searched for one condition: satisfied when a member is listed, or a node
        below it (its name holds the member's whole name, e.g. "Horizontal nystagmus" for "Nystagmus")."""
        ev.checked.add(center)
        label = args.get("query")
        for k in self._positive_conditions(ev):
            condition = ev.conditions[k]
            if condition.label != label:
                continue
            members = set(condition.members)
            names = [self._tokens(self.graph.name(m)) for m in condition.members]
            for node in nodes:
                tokens = self._tokens(node.name)
                if node.index in members or any(n and n <= tokens for n in names):
                    ev.satisfied[center].add(k)
                    if node.index in members:
                        _record_support(ev, center, node.index, node.out_relations + node.in_relations)
                    break

    def _absorb_expansion(self, ev: Evidence, center: Any, nodes: list[SeenNode], total: int,
                          offset: int = 0) -> None:
        target = ev.analysis.target_types[0] if ev.analysis.target_types else None
        if center in ev.via_middle:
            for node in nodes:
                ev.intermediates[node.index] += math.log1p(self.type_sizes.get(node.type, 1) / max(total, 1))
                ev.intermediate_types[node.index] = node.type
            return
        nodes = self._along_hierarchy(ev, nodes)
        for node in nodes:
            if target is not None and node.type != target:
                specificity = math.log1p(self.type_sizes.get(node.type, 1) / max(total, 1))
                ev.intermediates[node.index] += specificity
                ev.intermediate_types[node.index] = node.type
        matching = [n for n in nodes if target is None or n.type == target]
        if isinstance(center, int) and center in ev.condition_of:
            condition = ev.condition_of[center]
            for node in matching:
                ev.satisfied[node.index].add(condition)
                ev.anchor_relations[center].update(node.out_relations + node.in_relations)
        self._absorb_candidates(ev, center, matching, total, weight=1.0, offset=offset)

    def _absorb_candidates(self, ev: Evidence, center: Any, nodes: list[SeenNode], total: int,
                           weight: float, offset: int = 0) -> None:
        if not nodes:
            return
        node_type = nodes[0].type
        # An anchor shared by few nodes of the wanted type says more than one shared by thousands (an IDF).
        specificity = math.log1p(self.type_sizes.get(node_type, 1) / max(total, 1))
        if isinstance(center, int):
            ev.anchor_weight[center] = specificity
        anchor = isinstance(center, int) and center in ev.condition_of and not self._is_negated(ev, center)
        for rank, node in enumerate(nodes):
            if anchor:
                _record_support(ev, node.index, center, node.out_relations + node.in_relations)
            position = (offset + rank) / (len(nodes) + offset)
            ev.candidate_score[node.index] += weight * specificity * (1.0 - 0.25 * position)
            ev.candidate_hits[node.index].add(center if isinstance(center, int) else -1)
            ev.candidate_names[node.index] = node.name

    def _absorb_verification(self, ev: Evidence, center: int, nodes: list[SeenNode], total: int) -> None:
        listed = {n.index for n in nodes}
        mention_tokens = [set(m.tokens) for m in ev.analysis.mentions]
        score = ev.verified.get(center, 0.0)
        for index, name, _type, negated in ev.anchors:
            named = self._tokens(name)
            present = index in listed or any(self._tokens(n.name) == named for n in nodes)
            if present and not negated and index in listed:
                node = next(n for n in nodes if n.index == index)
                _record_support(ev, center, index, node.out_relations + node.in_relations)
            if present and not negated:
                # Absent findings are not counted against a candidate: rare diseases show their features with
                # incomplete penetrance, so an absent feature is weak evidence either way.
                score += ev.anchor_weight.get(index, 1.0)
        for node in nodes:
            tokens = self._tokens(node.name)
            if tokens and node.index not in {a[0] for a in ev.anchors} and any(tokens <= m for m in mention_tokens):
                score += 0.25
        # Candidates with very large neighborhoods match many mentions by chance.
        ev.verified[center] = score / (1.0 + 0.1 * math.log1p(total))

    # ---------------------------------------------------------------- ranking
    def _convincing(self, mention: Mention, nodes: list[SeenNode], target: str | None,
                    family_first: bool = False) -> list[SeenNode]:
        """Results that the mention names: those whose whole name lies within the mention, longest names first
        (several when equally named, e.g. one entity from two sources; on a tie of length, not of the wanted type,
        as mentions usually name other entities). Failing that, for a short mention, the first result whose text
        holds every word of the mention and whose name shares one of them."""
        words = set(mention.tokens)
        named = [n for n in nodes if self._tokens(n.name) and self._tokens(n.name) <= words]
        if named:
            best = max(len(self._tokens(n.name)) for n in named)
            longest = [n for n in named if len(self._tokens(n.name)) == best]
            others = [n for n in longest if n.type != target]
            chosen = others or longest
            direct = [n for n in longest if n.type == target] if others else []
            return chosen[:3] + direct[:3]
        stemmed = [n for n in nodes[:10] if named_by_stems(self._tokens(n.name), words)
                   and said_with_content(self._tokens(n.name), words, self._ignorable)]
        if stemmed:  # "passed on in an autosomal dominant inherited pattern": a name with one word inflected
            best = max(len(self._tokens(n.name)) for n in stemmed)
            return [n for n in stemmed if len(self._tokens(n.name)) == best][:3]
        if family_first and len(words) >= 2 and sum(words <= self._tokens(n.name) for n in nodes) >= 2:
            return []  # several nodes bear the mention within their names: a family, not one of them
        if len(words) <= 5:
            for node in nodes[:3]:
                if not self.graph.is_valid_index(node.index) or not (self._tokens(node.name) & words):
                    continue
                if words <= self._tokens(self.graph.text(node.index)):
                    return [node]
        return []

    def _named_by(self, phrase: str, listings: list[list[SeenNode]], target: str | None) -> list[int]:
        """Nodes the searches returned that bear ``phrase`` as their name or as one of the names their text lists
        (a synonym, "Synonyms: a; b"), of the wanted type when the question says one."""
        wanted = name_tokens(phrase)
        out: list[int] = []
        for node in (n for listing in listings for n in listing):
            if node.index in out or (target is not None and node.type != target):
                continue
            if name_tokens(node.name) == wanted or any(name_tokens(name) == wanted
                                                       for name in listed_names(self.graph.text(node.index))):
                out.append(node.index)
        return out

    def _inside_names_stated_in_full(self, ev: Evidence,
                                     listings: list[list[SeenNode]]) -> Callable[[tuple[str, ...]], bool]:
        """A test of a run of words: does the question say it only inside longer names that it states word for word
        and that the searches found ("Nystagmus" in "Nystagmus 2, congenital")?"""
        question = name_tokens(ev.analysis.question_without_negations or ev.analysis.question)
        spans = []
        for words in {name_tokens(n.name) for listing in listings for n in listing}:
            if len(words) >= 2:
                spans += [(start, start + len(words)) for start in find_runs(question, words)]

        def inside(run: tuple[str, ...]) -> bool:
            starts = find_runs(question, run)
            return bool(starts) and all(any(s <= start and start + len(run) <= e and e - s > len(run)
                                            for s, e in spans) for start in starts)

        return inside

    def _anchor_whole_question(self, ev: Evidence, listings: list[list[SeenNode]], target: str | None) -> None:
        """Names that occur word for word in the question (even across the commas a mention split cut) anchor too,
        unless a longer anchored name already covers them."""
        question = name_tokens(ev.analysis.question_without_negations or ev.analysis.question)
        spans: list[tuple[int, int, SeenNode]] = []
        seen: set[int] = set()
        symbols = {w.lower() for w in identifiers(ev.analysis.question)}
        for node in (n for listing in listings for n in listing):
            words = name_tokens(node.name)
            if node.index in seen or not words or (len(words) < 2 and words[0] not in symbols):
                continue
            seen.add(node.index)
            start = find_run(question, words)
            if start >= 0:
                spans.append((start, start + len(words), node))
        known = {a[0] for a in ev.anchors}
        for start, end, node in sorted(spans, key=lambda x: x[0] - x[1]):
            covered = any(s <= start and end <= e and (e - s) > (end - start) for s, e, _ in spans)
            if covered or node.index in known:
                continue
            if node.type == target and not self._related_to_named(ev, target):
                ev.candidate_score[node.index] += 1.0
                ev.candidate_names[node.index] = node.name
            else:
                self._add_anchor(ev, node, False)
                known.add(node.index)

    def _add_anchor(self, ev: Evidence, node: SeenNode, negated: bool, condition: Condition | None = None) -> None:
        """Record an anchor and the condition it stands for (equally named anchors share one condition)."""
        if node.index in ev.condition_of:
            return
        ev.anchors.append((node.index, node.name, node.type, negated))
        if condition is None:
            key = normalize_name(node.name)
            position = next((k for k, c in enumerate(ev.conditions) if c.kind == "named" and c.negated == negated
                             and normalize_name(c.label) == key), None)
            if position is None:
                ev.conditions.append(Condition(node.name, [], "named", negated))
                position = len(ev.conditions) - 1
        else:
            position = ev.conditions.index(condition)
        ev.conditions[position].members.append(node.index)
        ev.condition_of[node.index] = position

    def _anchor_family_or_description(self, ev: Evidence, mention: Mention, nodes: list[SeenNode],
                                      target: str | None) -> None:
        """A mention no node is named after may still name a *family* (several results whose names all hold the
        same run of the mention's words, e.g. the subtypes of a syndrome) or *describe* one node (most of the
        mention's words are in the first result's text, e.g. a finding given by its definition)."""
        anchored = [self._tokens(name) for _, name, _, _ in ev.anchors]
        mention_words = tuple(w for w in mention.tokens)
        others = [n for n in nodes if n.type != target or self._self_linked(target)]
        runs: dict[tuple[str, ...], list[SeenNode]] = defaultdict(list)
        for node in others:
            run = longest_common_run(name_tokens(node.name), mention_words)
            if len(run) >= 2 and not any(set(run) <= names for names in anchored):
                runs[run].append(node)
        shared = [(run, found) for run, found in runs.items() if len(found) >= 2]
        content = [w for w in mention.tokens if w not in self._question_words]
        family = max(shared, key=lambda item: (len(item[1]) >= 3, len(item[0]), len(item[1])), default=None)
        # A family must be most of what the mention says; otherwise the mention may describe one node.
        if family and 2 * len(family[0]) >= len(content):
            self._add_family(ev, mention, others, family[0])
            return
        if self._add_description(ev, mention, nodes, others, anchored):
            return
        if family:
            self._add_family(ev, mention, others, family[0])

    def _add_family(self, ev: Evidence, mention: Mention, others: list[SeenNode], run: tuple[str, ...]) -> None:
        """Anchor every result whose name holds ``run`` (up to ``FAMILY_SIZE``) as one condition."""
        members = [n for n in others if find_run(name_tokens(n.name), run) >= 0
                   and n.index not in ev.condition_of][:FAMILY_SIZE]
        if len(members) < 2:
            return
        condition = Condition(surface(mention.text, run), [], "family", mention.negated)
        ev.conditions.append(condition)
        for node in members:
            self._add_anchor(ev, node, mention.negated, condition)

    def _add_description(self, ev: Evidence, mention: Mention, nodes: list[SeenNode], others: list[SeenNode],
                         anchored: list[frozenset[str]]) -> bool:
        words = set(mention.tokens)
        if not ev.analysis.target_types:
            return False  # with no wanted type, a described node is an answer: the broad search has it
        if len(words) < 4 or not others or anchored and any(len(words & names) >= 2 for names in anchored):
            return False
        first = others[0] if others[0] is nodes[0] else None
        if first is None or first.index in ev.condition_of or not self.graph.is_valid_index(first.index):
            return False
        covered = len(words & self._tokens(self.graph.text(first.index))) / len(words)
        if covered < 0.6:
            return False
        condition = Condition(first.name, [], "described", mention.negated)
        ev.conditions.append(condition)
        self._add_anchor(ev, first, mention.negated, condition)
        return True

    def _related_to_named(self, ev: Evidence, target: str | None) -> bool:
        """Whether a named node of the wanted type is a starting point rather than an answer: when such nodes can
        relate to each other (an is-a hierarchy), or when the question names another type to go through."""
        if self._self_linked(target):
            return True
        mentions = ev.analysis.type_mentions
        first = next((pos for pos, t in mentions if t == target), None)
        return first is not None and any(pos > first and t != target for pos, t in mentions)

    def _self_linked(self, node_type: str | None) -> bool:
        """Whether the schema relates nodes of this type to each other (e.g. an is-a hierarchy of terms)."""
        return node_type is not None and (node_type, node_type) in self.links

    def _ranked_candidates(self, ev: Evidence) -> list[int]:
        anchor_ids = {a[0] for a in ev.anchors}

        def key(i: int) -> tuple[float, int]:
            return (-ev.candidate_score[i], i)

        return [i for i in sorted(ev.candidate_score, key=key) if i not in anchor_ids]

    def _final_ranking(self, ev: Evidence) -> list[int]:
        return [answer.index for answer in self._answers(ev)]

    def _ranking(self, ev: Evidence) -> list[int]:
        target = ev.analysis.target_types[0] if ev.analysis.target_types else None
        if ev.analysis.unsupported:
            # Nothing in the schema answers the question: offer only what it names, marked as such.
            return [a[0] for a in self._positive_anchors(ev)][: self.max_answers]
        if self._conjunctive(ev):
            return self._quoted_first(ev, self._conjunction_ranking(ev))
        ranked = self._single_condition_ranking(ev, target)
        if target is not None:
            # The wanted type is honoured on every path: no gene answers a question about phenotypes.
            ranked = [i for i in ranked if self.graph.node_type(i) == target]
        return ranked

    def _quoted_first(self, ev: Evidence, ranked: list[int]) -> list[int]:
        # A quoted phrase is a textual constraint: nodes whose text says it come first.
        says = self._says_quoted(ev, ranked)
        return sorted(ranked, key=lambda i: not says.get(i, False)) if says else ranked

    def _single_condition_ranking(self, ev: Evidence, target: str | None) -> list[int]:
        if not ev.candidate_score:
            broad = [n for n in ev.broad if target is None or n.type == target] or ev.broad
            return [n.index for n in broad[: max(1, (len(broad) + 1) // 2)]]
        ranked = self._ranked_candidates(ev)
        if ev.verified:
            best = max(ev.candidate_score.values()) or 1.0

            mentioned = [set(m.tokens) for m in ev.analysis.mentions if not m.negated]
            bonus = sum(ev.anchor_weight.values()) / max(len(ev.anchor_weight), 1)

            def named_in_question(i: int) -> float:
                name = self._tokens(ev.candidate_names.get(i, ""))
                return bonus if name and any(m and m <= name for m in mentioned) else 0.0

            def key(i: int) -> tuple[float, float, int]:
                verified = ev.verified.get(i, -1.0)
                return (-(verified + named_in_question(i)), -ev.candidate_score[i] / best, ranked.index(i))

            ranked = sorted(ranked, key=key)
        broad_hits = [n.index for n in ev.broad if n.type == target and n.index not in ranked]
        ranked = ranked + broad_hits[:3]
        return self._quoted_first(ev, ranked)

    def _reason(self, ev: Evidence, index: int) -> str:
        a = ev.analysis
        if index in ev.named:
            return f"Bears the name the question asks about, '{a.named_phrase or a.question}' (its name or a synonym)."
        if a.unsupported:
            return f"Named in the question; the graph has no relation for '{a.unsupported}'."
        positive = self._positive_conditions(ev)
        if self._conjunctive(ev):
            have = self._satisfied(ev, index)
            yes = [ev.conditions[k].label for k in positive if k in have]
            no = [ev.conditions[k].label for k in positive if k not in have]
            if not no:
                return f"Satisfies all {len(yes)} conditions: " + "; ".join(yes) + "."
            return (f"Partial match: {'; '.join(yes) or 'none'}; not found: " + "; ".join(no) + ".")
        anchors = {a[0]: a[1] for a in ev.anchors}
        hits = sorted(ev.candidate_hits.get(index, ()))
        for condition in ev.conditions:
            if condition.kind == "family" and not condition.negated:
                reached = [anchors[h] for h in hits if h in condition.members]
                if reached:
                    return (f"Linked to {len(reached)} of the {len(condition.members)} nodes named like "
                            f"'{condition.label}' (no node bears that name): " + "; ".join(reached[:3])
                            + (" and more." if len(reached) > 3 else "."))
        via = [anchors[h] for h in hits if h in anchors]
        if via:
            return "Linked to " + ", ".join(via[:5]) + (" and more" if len(via) > 5 else "") + "."
        return "Best match of the question's text."


def _record_support(ev: Evidence, candidate: int, anchor: int, relations: tuple[str, ...]) -> None:
    """Note that ``anchor`` supports ``candidate`` through ``relations`` (the edges a tool listing showed)."""
    ev.support[candidate].setdefault(anchor, set()).update(relations)
