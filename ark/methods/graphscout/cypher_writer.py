"""The scripted (no-LLM) GraphScout solver's Cypher: from a question's anchors, wanted type and answer type to one
read-only query, and from its rows to an answer.

Reading the question uses nothing but the graph's schema and generic English:

- the answer type: "how many" -> number; a question opening with is/are/does/do/can/has -> boolean; a singular
  wanted type after which/what ("Which gene ...") -> entity; otherwise a set;
- anchors: the longest node names found in the question (case-insensitive; names of four characters or fewer,
  such as gene symbols, must match case-sensitively);
- the wanted node type: :class:`QuestionReader`'s target type, else (for "subtypes of", "parent term of") the
  anchor's own type along a taxonomy relation;
- the path: one hop between anchor and wanted type, or two hops through a node type the question also names
  ("genes associated with diseases that have the phenotype P"); among several relations joining two types the one
  sharing a word with the question wins, else the most frequent.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ...graph import KnowledgeGraph, normalize_name
from ...graphdb.schema import CypherSchema
from ...question import TAXONOMY_RELATIONS, QuestionReader, name_tokens
from .answer import answer_type as question_answer_type

_QUESTION_WORDS = frozenset({"which", "what", "how", "many", "is", "are", "does", "do", "the", "of", "with", "have"})


@dataclass
class CypherPlan:
    """One query answering a question, and how to read its rows."""

    question: str
    answer_type: str  # entity | set | number | boolean
    cypher: str
    params: dict[str, Any]
    anchors: list[int] = field(default_factory=list)
    target_type: str | None = None
    path: list[str] = field(default_factory=list)  # relation labels walked

    def python_code(self, params: dict[str, Any] | None = None) -> str:
        """The code the scripted solver runs in the interpreter (what ``ark ask`` shows): the query, then the
        answer computed from its rows and printed (``params`` replace the plan's, e.g. ids the retriever found)."""
        query = f"rows = cypher({self.cypher!r}, {params if params is not None else self.params!r})"
        show = {
            "number": "print(rows[0]['answer'] if rows else 0)",
            "boolean": "print('yes' if rows and rows[0]['answer'] else 'no')",
            "entity": "print(rows[0]['name'] if rows else '')",
            "set": "print(', '.join(row['name'] for row in rows))",
        }[self.answer_type]
        return f"{query}\n{show}"


@dataclass
class Hop:
    label: str  # relationship table
    arrow: str  # "->" (from the near node), "<-" or "-" (either way)


class CypherWriter:
    """Writes :class:`CypherPlan` for questions about one graph exported with ``schema``."""

    def __init__(self, graph: KnowledgeGraph, schema: CypherSchema) -> None:
        self.graph = graph
        self.schema = schema
        self.reader = QuestionReader(graph)
        self._names: dict[tuple[str, ...], list[int]] = {}
        for i in range(graph.num_nodes):
            tokens = name_tokens(graph.name(i) or "")
            if tokens and not set(tokens) <= _QUESTION_WORDS:
                self._names.setdefault(tokens, []).append(i)
        self._longest = max((len(re.findall(r"\w+", self.graph.name(i) or "")) for i in range(graph.num_nodes)),
                            default=1)
        self._type_words = {w for words in self.reader.type_words.values() for w in words}

    # ------------------------------------------------------------------ reading the question
    def answer_type(self, question: str, target_types: list[str]) -> str:
        return question_answer_type(question, target_types)

    def anchors(self, question: str) -> list[int]:
        """Nodes named in the question, longest names first, one node per non-overlapping span."""
        return [node for _, _, node in self.link(question)]

    def link(self, question: str) -> list[tuple[int, int, int]]:
        """(start, end, node) of each node name found in the question, longest names first, spans disjoint."""
        words = list(re.finditer(r"\w+", question))
        tokens = [w.group(0).lower() for w in words]
        taken = [False] * len(tokens)
        found: list[tuple[int, int, int]] = []
        for size in range(min(self._longest, len(tokens)), 0, -1):
            for start in range(0, len(tokens) - size + 1):
                if any(taken[start:start + size]):
                    continue
                if not name_tokens(tokens[start]) or not name_tokens(tokens[start + size - 1]):
                    continue  # a span starts and ends on a content word ("Is SRY" is "SRY")
                begin, end = words[start].start(), words[start + size - 1].end()
                span = question[begin:end]
                key = name_tokens(span)
                nodes = self._names.get(key, [])
                if not key or not nodes or set(key) <= self._type_words:
                    continue
                nodes = [i for i in nodes if len(self.graph.name(i)) > 4 or self.graph.name(i) in span]
                if not nodes:
                    continue
                taken[start:start + size] = [True] * size
                found.append((begin, end, nodes[0] if len(nodes) == 1 else self._prefer(nodes, question)))
        return found

    @staticmethod
    def masked(question: str, spans: list[tuple[int, int, int]]) -> str:
        """``question`` with the linked names blanked, so words inside names do not count as cues."""
        for begin, end, _ in sorted(spans, reverse=True):
            question = question[:begin] + "X" + question[end:]
        return question

    def _prefer(self, nodes: list[int], question: str) -> int:
        """Among nodes sharing a name, one whose type the question names, else the best connected."""
        mentioned = {t for _, t in self.reader.read(question).type_mentions}
        return max(nodes, key=lambda i: (self.graph.node_type(i) in mentioned, self.graph.degree(i)))

    # ------------------------------------------------------------------ schema paths
    def _relations(self, near: str, far: str, question: str, hierarchy: str | None) -> Hop | None:
        """The relation joining node types ``near`` and ``far`` that fits the question best."""
        near_label, far_label = self.schema.node_label(near), self.schema.node_label(far)
        options: list[tuple[int, int, Hop]] = []
        words = set(re.findall(r"\w+", question.lower()))
        for spec in self.schema.rels:
            forward = any(p.source == near_label and p.target == far_label for p in spec.pairs)
            backward = any(p.source == far_label and p.target == near_label for p in spec.pairs)
            if not (forward or backward):
                continue
            taxonomy = normalize_name(spec.relation) in TAXONOMY_RELATIONS
            if forward and backward:  # a relation within one type: the question's direction decides
                arrow = "->" if hierarchy == "broader" else "<-" if hierarchy == "narrower" else "-"
            else:
                arrow = "->" if forward else "<-"
            relation_words = {w for w in re.split(r"[_\W]+", spec.relation.lower()) if len(w) > 2} - self._type_words
            overlap = sum(1 for w in relation_words if any(v.startswith(w[:5]) for v in words))
            if near == far and hierarchy is not None:
                overlap += 2 * taxonomy
            count = sum(p.count for p in spec.pairs
                        if {p.source, p.target} == {near_label, far_label})
            options.append((overlap, count, Hop(spec.label, arrow)))
        if not options:
            return None
        options.sort(key=lambda o: (o[0], o[1]), reverse=True)
        return options[0][2]

    def _path(self, anchor_type: str, target: str, via: str | None, question: str,
              hierarchy: str | None) -> list[tuple[str, Hop]] | None:
        """[(node type reached, hop)] from the anchor's type to ``target``, through ``via`` when given."""
        if via is not None:
            first = self._relations(anchor_type, via, question, hierarchy)
            second = self._relations(via, target, question, hierarchy)
            if first is not None and second is not None:
                return [(via, first), (target, second)]
        hop = self._relations(anchor_type, target, question, hierarchy)
        return [(target, hop)] if hop is not None else None

    # ------------------------------------------------------------------ writing Cypher
    def plan(self, question: str) -> CypherPlan | None:
        """The query answering ``question``, or None when the question cannot be read this way."""
        spans = self.link(question)
        anchors = [node for _, _, node in sorted(spans)]  # in reading order
        if not anchors:
            return None
        masked = self.masked(question, spans)
        analysis = self.reader.read(masked)
        answer_type = self.answer_type(masked, analysis.target_types)
        if answer_type == "boolean" and len(anchors) >= 2:
            return self._boolean(question, masked, anchors[:2], analysis.hierarchy)
        anchor = anchors[0]
        anchor_type = self.graph.node_type(anchor)
        target = analysis.target_types[0] if analysis.target_types else anchor_type  # "subtypes of X": X's type
        mentioned = [t for _, t in analysis.type_mentions]
        via = next((t for t in mentioned if t not in (target, anchor_type)), None)
        path = self._path(anchor_type, target, via, masked, analysis.hierarchy)
        if path is None:
            return None
        pattern = f"(a:{self.schema.node_label(anchor_type)} {{id: $anchor}})"
        for step, (node_type, hop) in enumerate(path):
            name = "x" if step == len(path) - 1 else f"m{step}"
            left, right = ("<-", "-") if hop.arrow == "<-" else ("-", "->") if hop.arrow == "->" else ("-", "-")
            pattern += f"{left}[:{hop.label}]{right}({name}:{self.schema.node_label(node_type)})"
        if answer_type == "number":
            returns = "RETURN count(DISTINCT x) AS answer"
        else:
            returns = "RETURN DISTINCT x.name AS name, x.id AS id, x.idx AS idx ORDER BY name"
        return CypherPlan(question, answer_type, f"MATCH {pattern} {returns}", {"anchor": self.graph.node_id(anchor)},
                          [anchor], target, [hop.label for _, hop in path])

    def _boolean(self, question: str, masked: str, anchors: list[int], hierarchy: str | None) -> CypherPlan:
        first, second = anchors
        first_type, second_type = self.graph.node_type(first), self.graph.node_type(second)
        hop = self._relations(first_type, second_type, masked, hierarchy)
        left, right = ("-", "-") if hop is None else (("<-", "-") if hop.arrow == "<-" else ("-", "->")
                                                       if hop.arrow == "->" else ("-", "-"))
        relation = f"[:{hop.label}]" if hop is not None else "[]"
        cypher = (f"MATCH (a:{self.schema.node_label(first_type)} {{id: $first}}){left}{relation}{right}"
                  f"(b:{self.schema.node_label(second_type)} {{id: $second}}) RETURN count(*) > 0 AS answer")
        params = {"first": self.graph.node_id(first), "second": self.graph.node_id(second)}
        return CypherPlan(question, "boolean", cypher, params, anchors, None, [hop.label] if hop else [])


def answer_from_rows(plan: CypherPlan, rows: list[dict[str, Any]]) -> tuple[str, list[int]]:
    """(answer text, node indices answering) from the rows of ``plan``'s query."""
    if plan.answer_type == "number":
        return str(rows[0]["answer"] if rows else 0), []
    if plan.answer_type == "boolean":
        return ("yes" if rows and rows[0]["answer"] else "no"), []
    names = [row["name"] for row in rows]
    indices = [int(row["idx"]) for row in rows]
    if plan.answer_type == "entity":
        return (names[0] if names else ""), indices[:1]
    return ", ".join(names), indices
