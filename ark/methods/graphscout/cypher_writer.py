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
  ("genes associated with diseases that have the phenotype P"); among several relations joining two types, one the
  anchor itself has edges of comes first, then the one sharing a word with the question, then the most frequent;
- several anchors constrain the same answers (an intersection: "diseases associated with the gene G that start at
  the phenotype P"), each along its own path;
- a quoted phrase ("described with the term 'year'") keeps the answers whose text mentions it as whole words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...graph import KnowledgeGraph, normalize_name
from ...graph.keys import KeyTable, column_chunks
from ...graph.store import Direction
from ...graphdb.schema import CypherSchema
from ...question import TAXONOMY_RELATIONS, QuestionReader, name_tokens
from .answer import answer_type as question_answer_type

# A quoted phrase: the quote opens after a space (not an apostrophe inside a word) and closes before a non-word.
_QUOTED = re.compile(r"(?:^|(?<=\s))[\"'“‘]([^\"'”’]{3,80})[\"'”’](?!\w)")
MAX_ANCHORS = 3
_OF_NEXT = re.compile(r"\s+of\b", re.IGNORECASE)
_RELATIVE = re.compile(r"\s+(?:that|which|whose)\b")
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


def _name_key(name: str | None, cached: bool = True) -> tuple[str, ...] | None:
    """The words ``name`` is linked by, None for a name of question words only; ``cached=False`` (reading every
    name) leaves ``name_tokens``'s cache to the question's words."""
    tokens = (name_tokens if cached else name_tokens.__wrapped__)(name or "")
    return tokens if tokens and not set(tokens) <= _QUESTION_WORDS else None


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
        self._longest = 1
        # Nodes by the words of their names, as a table of hashes (:mod:`ark.graph.keys`): no dict of every name.
        self._names = KeyTable.build((start, self._name_keys(names))
                                     for start, names in column_chunks(graph.nodes.column("name")))
        self._type_words = {w for words in self.reader.type_words.values() for w in words}
        self._type_codes = np.asarray(graph.node_type_codes)

    def _name_keys(self, names: list[str | None]) -> list[tuple[str, ...] | None]:
        """The words a name is linked by (None: a name of question words only), noting the longest name."""
        self._longest = max([self._longest, *(len(re.findall(r"\w+", name or "")) for name in names)])
        return [_name_key(name, cached=False) for name in names]

    def _named(self, key: tuple[str, ...]) -> list[int]:
        """The nodes whose name has the words ``key``, ascending."""
        return self._names.rows(key, lambda i: _name_key(self.graph.name(i)))

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
                nodes = self._named(key) if key else []
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
    def _relations(self, near: str, far: str, question: str, hierarchy: str | None,
                   node: int | None = None) -> Hop | None:
        """The relation joining node types ``near`` and ``far`` that fits the question best (with ``node``, one
        that node has edges of first)."""
        near_label, far_label = self.schema.node_label(near), self.schema.node_label(far)
        options: list[tuple[int, int, int, Hop]] = []
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
            local = self._local_edges(node, spec.relation, arrow, far) if node is not None else 0
            options.append((local > 0, overlap, count, Hop(spec.label, arrow)))
        if not options:
            return None
        options.sort(key=lambda o: o[:3], reverse=True)
        return options[0][3]

    def _local_edges(self, node: int, relation: str, arrow: str, far: str) -> int:
        """How many ``relation`` edges in direction ``arrow`` link ``node`` to nodes of type ``far``."""
        direction: Direction = "out" if arrow == "->" else "in" if arrow == "<-" else "both"
        found = self.graph.neighbors(node, relation, direction).nodes
        far_code = self.graph.node_types.index(far)
        return int((self._type_codes[found] == far_code).sum()) if len(found) else 0

    def _path(self, anchor: int, target: str, via: str | None, question: str, hierarchy: str | None,
              split: int | None = None) -> list[tuple[str, Hop]] | None:
        """[(node type reached, hop)] from ``anchor`` to ``target``, through ``via`` when given. With ``split``
        (where "<wanted> R1 <via> that R2 <anchor>" turns to its relative clause) each hop takes its taxonomy
        direction from its own clause: R2 for the hop from the anchor, R1 for the hop to the wanted type."""
        anchor_type = self.graph.node_type(anchor)
        if via is not None:
            near_hierarchy = hierarchy if split is None else self.reader.read(question[split:]).hierarchy
            far_hierarchy = hierarchy if split is None else self.reader.read(question[:split]).hierarchy
            first = self._relations(anchor_type, via, question, near_hierarchy, node=anchor)
            second = self._relations(via, target, question, far_hierarchy)
            if first is not None and second is not None:
                return [(via, first), (target, second)]
        hop = self._relations(anchor_type, target, question, hierarchy, node=anchor)
        return [(target, hop)] if hop is not None else None

    # ------------------------------------------------------------------ writing Cypher
    def plan(self, question: str) -> CypherPlan | None:
        """The query answering ``question``, or None when the question cannot be read this way."""
        quoted = [m.span(1) for m in _QUOTED.finditer(question)]
        spans = sorted(s for s in self.link(question) if not any(s[0] < end and begin < s[1] for begin, end in quoted))
        if len(spans) > 1:  # "the age of onset of X": a name followed by "of" names an attribute, not an anchor
            kept = [s for s in spans if not _OF_NEXT.match(question, s[1])]
            spans = kept or spans
        anchors = list(dict.fromkeys(node for _, _, node in spans))[:MAX_ANCHORS]  # in reading order
        if not anchors:
            return None
        masked = self.masked(question, spans)
        analysis = self.reader.read(masked)
        answer_type = self.answer_type(masked, analysis.target_types)
        if answer_type == "boolean" and len(anchors) >= 2:
            return self._boolean(question, masked, anchors[:2], analysis.hierarchy)
        anchor_types = {self.graph.node_type(a) for a in anchors}
        target = analysis.target_types[0] if analysis.target_types else self.graph.node_type(anchors[0])
        via, split = self._via(masked, analysis, target, anchor_types) if len(anchors) == 1 else (None, None)
        patterns: list[str] = []
        params: dict[str, Any] = {}
        hops: list[str] = []
        target_label = self.schema.node_label(target)
        for k, anchor in enumerate(anchors):
            path = self._path(anchor, target, via, masked, analysis.hierarchy, split)
            if path is None:
                continue
            key = "anchor" if not params else f"anchor{k + 1}"
            pattern = f"(a{k}:{self.schema.node_label(self.graph.node_type(anchor))} {{id: ${key}}})"
            for step, (node_type, hop) in enumerate(path):
                name = "x" if step == len(path) - 1 else f"m{k}_{step}"
                if name == "x":  # the answer node: labelled where it first appears
                    label = "" if patterns else f":{target_label}"
                else:
                    label = f":{self.schema.node_label(node_type)}"
                left, right = ("<-", "-") if hop.arrow == "<-" else ("-", "->") if hop.arrow == "->" else ("-", "-")
                pattern += f"{left}[:{hop.label}]{right}({name}{label})"
            patterns.append(pattern)
            params[key] = self.graph.node_id(anchor)
            hops += [hop.label for _, hop in path]
        if not patterns:
            return None
        conditions = []
        if via is not None and len(anchors) == 1 and self.graph.node_type(anchors[0]) == target:
            conditions.append("x.id <> $anchor")  # "diseases sharing genes with D": D itself is not one of them
        phrases = [p for p in (words_of(m.group(1)) for m in _QUOTED.finditer(question)) if p][:2]
        for n, phrase in enumerate(phrases):
            key = f"phrase{n + 1}" if n else "phrase"
            params[key] = "(?is).*\\b" + "\\W+".join(phrase) + "\\b.*"
            conditions.append(f"x.text =~ ${key}")
        where = " WHERE " + " AND ".join(conditions) if conditions else ""
        if answer_type == "number":
            returns = "RETURN count(DISTINCT x) AS answer"
        else:
            returns = "RETURN DISTINCT x.name AS name, x.id AS id, x.idx AS idx ORDER BY name"
        cypher = f"MATCH {', '.join(patterns)}{where} {returns}"
        used = [a for a in anchors if self.graph.node_id(a) in params.values()]
        return CypherPlan(question, answer_type, cypher, params, used, target, hops)

    def _via(self, masked: str, analysis: Any, target: str, anchor_types: set[str]) -> tuple[str | None, int | None]:
        """The intermediate node type of a two-hop question and where its relative clause starts: a type named
        before "that/which/whose" ("genes that ...", possibly the wanted or the anchor's own type), else another
        type the question names (no clause split)."""
        lower = masked.lower()
        mentioned = analysis.type_mentions
        first_target = next((position for position, t in mentioned if t == target), None)
        for position, node_type in mentioned:
            if first_target is not None and position <= first_target:
                continue
            word = re.match(r"\w+", lower[position:])
            end = position + (len(word.group(0)) if word else 0)
            if _RELATIVE.match(lower, end):
                return node_type, end
        return next((t for _, t in mentioned if t != target and t not in anchor_types), None), None

    def _boolean(self, question: str, masked: str, anchors: list[int], hierarchy: str | None) -> CypherPlan:
        first, second = anchors
        first_type, second_type = self.graph.node_type(first), self.graph.node_type(second)
        hop = self._relations(first_type, second_type, masked, hierarchy, node=first)
        left, right = ("-", "-") if hop is None else (("<-", "-") if hop.arrow == "<-" else ("-", "->")
                                                       if hop.arrow == "->" else ("-", "-"))
        relation = f"[:{hop.label}]" if hop is not None else "[]"
        cypher = (f"MATCH (a:{self.schema.node_label(first_type)} {{id: $first}}){left}{relation}{right}"
                  f"(b:{self.schema.node_label(second_type)} {{id: $second}}) RETURN count(*) > 0 AS answer")
        params = {"first": self.graph.node_id(first), "second": self.graph.node_id(second)}
        return CypherPlan(question, "boolean", cypher, params, anchors, None, [hop.label] if hop else [])


def words_of(phrase: str) -> list[str]:
    """The words (letters and digits) of a quoted phrase, as the text constraint matches them."""
    return re.findall(r"[^\W_]+", phrase)


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
