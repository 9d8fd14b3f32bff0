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
import json
import math
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from ....graph import KnowledgeGraph, normalize_name
from ....llm.policy import PolicyReply, Usage
from ....question import TAXONOMY_RELATIONS, Mention, QuestionAnalysis, QuestionReader, identifiers, name_tokens
from ....runtime.tools import arguments_of
from ..tools import ADD_TO_ANSWER, FINISH, SEARCH_IN_GRAPH, SEARCH_IN_NEIGHBORHOOD

MAX_MENTIONS = 24
_RELATIVE_CLAUSE = re.compile(r"\s+(?:that|which|whose|who|where)\b")
PHASES = ("anchor", "expand", "second_hop", "verify", "answer", "finish")


@dataclass(frozen=True)
class SeenNode:
    """A node a tool call returned, with the relations that link it to the call's centre (neighbourhoods)."""

    index: int
    name: str
    type: str
    out_relations: tuple[str, ...] = ()
    in_relations: tuple[str, ...] = ()


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


class OfflinePolicy:
    """A :class:`~ark.llm.ChatPolicy` that needs no model: ``OfflinePolicy(graph)``.

    It reads the graph's schema and node text; all searching goes through the tool calls it emits.
    """

    name = "offline"

    def __init__(self, graph: KnowledgeGraph, verify: int = 40, max_answers: int = 20) -> None:
        self.graph = graph
        self._tokens = functools.lru_cache(maxsize=200_000)(lambda text: frozenset(name_tokens(text)))
        self.reader = QuestionReader(graph)
        self.verify = verify
        self.max_answers = max_answers
        self.type_sizes = graph.type_counts()
        self.links = {(t.source_type, t.target_type) for t in graph.schema}
        self.links |= {(b, a) for a, b in self.links}
        self.relations_between: dict[tuple[str, str], set[str]] = defaultdict(set)
        for t in graph.schema:
            self.relations_between[(t.source_type, t.target_type)].add(t.relation)
            self.relations_between[(t.target_type, t.source_type)].add(t.relation)

    async def aclose(self) -> None:
        return None

    def _nodes(self, data: dict[str, Any]) -> list[SeenNode]:
        """The nodes a tool call returned, in its order, from its structured result."""
        g = self.graph
        return [SeenNode(r["index"], g.name(r["index"]), g.node_type(r["index"]), tuple(r.get("out", ())),
                         tuple(r.get("in", ())))
                for r in data.get("results", ()) if g.is_valid_index(r.get("index", -1))]

    async def next_message(self, messages: list[dict], tools: list[dict], *, agent_index: int = 0,
                           tool_choice: str = "required") -> PolicyReply:
        tool_names = {t["function"]["name"] for t in tools}
        evidence, phase_index = self._replay(messages, agent_index, tool_names)
        calls: list[tuple[str, dict[str, Any]]] = []
        while not calls:
            phase = PHASES[min(phase_index, len(PHASES) - 1)]
            calls, note = self._plan(phase, evidence, tool_names)
            phase_index += 1
        return PolicyReply(message=_assistant_message(note, calls, len(messages)), usage=Usage())

    # ---------------------------------------------------------------- replay
    def _replay(self, messages: list[dict], agent_index: int, tool_names: set[str]) -> tuple[Evidence, int]:
        question = _question(messages)
        seed = int(hashlib.sha256(f"{question}|{agent_index}".encode()).hexdigest()[:12], 16)
        evidence = Evidence(self.reader.read(question), random.Random(seed), agent_index)
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
            if a.question.strip():
                calls.append((SEARCH_IN_GRAPH, {"query": a.question, "size": 30}))
            return calls, "Search the graph for each entity the question mentions, and for the question as a whole."
        if phase == "expand":
            if SEARCH_IN_NEIGHBORHOOD not in tool_names:
                return [], ""
            calls = []
            query = self._expansion_query(ev)
            for index, _name, node_type, _negated in self._positive_anchors(ev):
                hop_type, via_middle = self._hop_type(node_type, a, ev)
                args: dict[str, Any] = {"node_index": index, "query": query}
                if hop_type:
                    args["node_types"] = [hop_type]
                if via_middle:
                    ev.via_middle.add(index)
                    # A relation the question names belongs to the hop it fits; the last hop when it fits both.
                    relation = self._relation_hint(node_type, hop_type, a, exclude=(hop_type, a.target_types[0]))
                else:
                    relation = self._relation_hint(node_type, hop_type, a)
                if relation:
                    args["edge_types"] = [relation]
                calls.append((SEARCH_IN_NEIGHBORHOOD, args))
            return calls, "Explore the neighborhoods of the anchored entities, filtered to the type asked for."
        if phase == "second_hop":
            if not ev.intermediates or SEARCH_IN_NEIGHBORHOOD not in tool_names:
                return [], ""
            best = sorted(ev.intermediates, key=lambda i: -ev.intermediates[i])[:8]
            calls = []
            for index in best:
                args = {"node_index": index, "query": a.question}
                if a.target_types:
                    args["node_types"] = [a.target_types[0]]
                    middle_type = ev.intermediate_types.get(index)
                    relation = self._relation_hint(middle_type, a.target_types[0], a) if middle_type else None
                    if relation:
                        args["edge_types"] = [relation]
                calls.append((SEARCH_IN_NEIGHBORHOOD, args))
            return calls, "Follow the intermediate entities one more hop to the type asked for."
        if phase == "verify":
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
            ranked = self._final_ranking(ev)
            if not ranked:
                return [], ""
            nodes = [{"node_index": i, "reasoning": self._reason(ev, i)} for i in ranked]
            return [(ADD_TO_ANSWER, {"answer_nodes": nodes})], "Add the best-supported nodes to the answer."
        return [(FINISH, {"comment": "Answer complete."})], "Done."

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
            opens_clause = _RELATIVE_CLAUSE.match(lower, pos + len(_word_at(lower, pos)))
            if not labels_anchor and opens_clause:
                return node_type
        return None

    def _relation_hint(self, anchor_type: str, other: str | None, a: QuestionAnalysis,
                       exclude: tuple[str, str] | None = None) -> str | None:
        if other is None:
            return None
        between = self.relations_between.get((anchor_type, other), set())
        if exclude is not None:
            between = between - self.relations_between.get(exclude, set())
        if a.hierarchy:
            taxonomy = [r for r in between if normalize_name(r) in TAXONOMY_RELATIONS]
            if len(taxonomy) == 1:
                return taxonomy[0]
        hinted = [r for r in a.relation_hints if r in between]
        return hinted[0] if len(hinted) == 1 and len(between) > 1 else None

    # ---------------------------------------------------------------- absorbing
    def _absorb(self, phase: str, ev: Evidence, results: list[tuple[dict, dict]]) -> None:
        if phase == "anchor":
            mentions = ev.analysis.mentions
            target = ev.analysis.target_types[0] if ev.analysis.target_types else None
            for position, (_call, data) in enumerate(results):
                nodes = self._nodes(data)
                if position < min(len(mentions), MAX_MENTIONS):
                    mention = mentions[position]
                    known = {x[0] for x in ev.anchors}
                    for anchor in self._convincing(mention, nodes, target):
                        if anchor.type == target and not mention.negated and not self._related_to_named(ev, target):
                            # The question names a node of the very type it asks for: a candidate, not a hop.
                            ev.candidate_score[anchor.index] += 1.0
                            ev.candidate_names[anchor.index] = anchor.name
                        elif anchor.index not in known:
                            ev.anchors.append((anchor.index, anchor.name, anchor.type, mention.negated))
                elif arguments_of(_call).get("query") == ev.analysis.question:
                    ev.broad = nodes
            self._anchor_whole_question(ev, [self._nodes(data) for _call, data in results], target)
            return
        for call, data in results:
            nodes = self._nodes(data)
            total = int(data.get("total", len(nodes)))
            args = arguments_of(call)
            center = args.get("node_index")
            if phase == "expand":
                self._absorb_expansion(ev, center, nodes, total)
            elif phase == "second_hop":
                nodes = self._along_hierarchy(ev, nodes)
                self._absorb_candidates(ev, center, nodes, total, weight=ev.intermediates.get(center, 1.0))
            elif phase == "verify" and isinstance(center, int):
                self._absorb_verification(ev, center, nodes, total)

    def _along_hierarchy(self, ev: Evidence, nodes: list[SeenNode]) -> list[SeenNode]:
        """When the question looks up or down an is-a relation, keep the neighbors on that side of the centre."""
        if not ev.analysis.hierarchy:
            return nodes

        def taxonomic(relations: tuple[str, ...]) -> bool:
            return any(normalize_name(r) in TAXONOMY_RELATIONS for r in relations)

        if ev.analysis.hierarchy == "broader":
            kept = [n for n in nodes if taxonomic(n.out_relations)]
        else:
            kept = [n for n in nodes if taxonomic(n.in_relations)]
        return kept or nodes

    def _absorb_expansion(self, ev: Evidence, center: Any, nodes: list[SeenNode], total: int) -> None:
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
        self._absorb_candidates(ev, center, matching, total, weight=1.0)

    def _absorb_candidates(self, ev: Evidence, center: Any, nodes: list[SeenNode], total: int,
                           weight: float) -> None:
        if not nodes:
            return
        node_type = nodes[0].type
        # An anchor shared by few nodes of the wanted type says more than one shared by thousands (an IDF).
        specificity = math.log1p(self.type_sizes.get(node_type, 1) / max(total, 1))
        if isinstance(center, int):
            ev.anchor_weight[center] = specificity
        for rank, node in enumerate(nodes):
            ev.candidate_score[node.index] += weight * specificity * (1.0 - 0.25 * rank / len(nodes))
            ev.candidate_hits[node.index].add(center if isinstance(center, int) else -1)
            ev.candidate_names[node.index] = node.name

    def _absorb_verification(self, ev: Evidence, center: int, nodes: list[SeenNode], total: int) -> None:
        listed = {n.index for n in nodes}
        mention_tokens = [set(m.tokens) for m in ev.analysis.mentions]
        score = ev.verified.get(center, 0.0)
        for index, name, _type, negated in ev.anchors:
            named = self._tokens(name)
            present = index in listed or any(self._tokens(n.name) == named for n in nodes)
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
    def _convincing(self, mention: Mention, nodes: list[SeenNode], target: str | None) -> list[SeenNode]:
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
        if len(words) <= 5:
            for node in nodes[:3]:
                if not self.graph.is_valid_index(node.index) or not (self._tokens(node.name) & words):
                    continue
                if words <= self._tokens(self.graph.text(node.index)):
                    return [node]
        return []

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
            start = _find_run(question, words)
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
                ev.anchors.append((node.index, node.name, node.type, False))
                known.add(node.index)

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
        target = ev.analysis.target_types[0] if ev.analysis.target_types else None
        if not ev.candidate_score:
            broad = [n for n in ev.broad if target is None or n.type == target] or ev.broad
            return [n.index for n in broad[: max(1, (len(broad) + 1) // 2)]][: self.max_answers]
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
        if ev.analysis.quoted:
            # A quoted phrase is a textual constraint: nodes whose text says it come first.
            phrases = [re.compile(rf"\b{re.escape(q.lower())}", re.IGNORECASE) for q in ev.analysis.quoted]
            text = self.graph.text
            says = {i: all(p.search(text(i)) for p in phrases) for i in ranked if self.graph.is_valid_index(i)}
            ranked = sorted(ranked, key=lambda i: not says.get(i, False))
        return ranked[: self.max_answers]

    def _reason(self, ev: Evidence, index: int) -> str:
        anchors = {a[0]: a[1] for a in ev.anchors}
        via = [anchors[h] for h in sorted(ev.candidate_hits.get(index, ())) if h in anchors]
        if via:
            return "Linked to " + ", ".join(via[:5]) + (" and more" if len(via) > 5 else "") + "."
        return "Best match of the question's text."


def _question(messages: list[dict]) -> str:
    """The question, as the agent loop records it beside the first user message."""
    for message in messages:
        if message.get("role") == "user":
            return str((message.get("data") or {}).get("question") or message.get("content") or "").strip()
    return ""


def _assistant_message(note: str, calls: list[tuple[str, dict[str, Any]]], salt: int) -> dict:
    return {
        "role": "assistant",
        "content": note,
        "tool_calls": [
            {
                "id": f"call_{salt}_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)},
            }
            for n, (name, args) in enumerate(calls)
        ],
    }


def _find_run(haystack: tuple[str, ...], needle: tuple[str, ...]) -> int:
    """Start of the first occurrence of ``needle`` as a contiguous run in ``haystack``, or -1."""
    n = len(needle)
    for start in range(len(haystack) - n + 1):
        if haystack[start:start + n] == needle:
            return start
    return -1


def _word_at(text: str, pos: int) -> str:
    match = re.match(r"\w+", text[pos:])
    return match.group(0) if match else ""
