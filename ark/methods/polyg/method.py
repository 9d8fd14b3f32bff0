"""``polyg``: PolyG's adaptive traversal (Liu et al. 2025). Call 1 classifies the question by the triple pattern it
asks about and names its parts; node retrieval grounds the head and tail mentions (the step GraphScout added,
Appendix A.4); the traversal of that pattern (:mod:`.traversal`) collects facts, widening to the head's
neighbourhood when the pattern's traversal finds nothing (an unknown relation, no path, no edge); call 2 answers
from the facts. A classification that cannot be read is recorded, and the question is grounded as a whole."""

from __future__ import annotations

import json
import re
from typing import Any

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever
from ..graph_text import Triple, node_line, schema_lines, triple_line, triple_nodes
from ..prompting import ANSWER_INSTRUCTIONS, PromptSession, answer_output, final_answer, open_names, require_model
from . import traversal
from .spec import PolyGOptions

PATTERNS = {
    "h__": "⟨h,_,_⟩ everything about one entity h",
    "hr_": "⟨h,r,_⟩ the entities linked to h by relation r (with several relations: a chain h -r1-> x -r2-> answer)",
    "h*t": "⟨h,*,t⟩ how two entities h and t are connected",
    "hrt": "⟨h,r,t⟩ whether h is linked to t by relation r (yes/no)",
}
CLASSIFY_SYSTEM = """You classify a question about a knowledge graph by the triple pattern it asks about:
{patterns}

{schema}

Reply with one JSON object: {{"pattern": one of {names}, "head": the entity h as written in the question,
"relations": the relation names r in order (from the list above; [] if none), "tail": the entity t or null}}."""
ANSWER_SYSTEM = ("You answer a question from facts retrieved from a knowledge graph as (subject, relation, object) "
                 "triples. " + ANSWER_INSTRUCTIONS)


def read_pattern(reply: str) -> dict[str, Any] | None:
    """The classification in a reply (the first JSON object), or None when there is no readable one."""
    found = re.search(r"\{.*\}", reply or "", re.DOTALL)
    if found is None:
        return None
    try:
        value = json.loads(found.group(0))
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or value.get("pattern") not in PATTERNS or not isinstance(value.get("head"), str):
        return None
    relations = value.get("relations") or []
    value["relations"] = [str(r) for r in relations] if isinstance(relations, list) else [str(relations)]
    value["tail"] = value.get("tail") if isinstance(value.get("tail"), str) and value.get("tail") else None
    return value


class PolyG(Retriever):
    """Classify, traverse, answer: two calls per question."""

    def __init__(self, graph: KnowledgeGraph, options: PolyGOptions, context: MethodContext) -> None:
        self.llm = require_model(context, "polyg")
        self.graph, self.options, self.context = graph, options, context
        self.names = open_names(graph, options, context)
        self.system = CLASSIFY_SYSTEM.format(patterns="\n".join(f"- {k}: {v}" for k, v in PATTERNS.items()),
                                             schema=schema_lines(graph), names=", ".join(PATTERNS))

    def ground(self, mention: str | None) -> int | None:
        hits = self.names.search(mention, 1) if mention and mention.strip() else []
        return int(hits[0][0]) if hits else None

    def traverse(self, pattern: dict[str, Any], head: int, tail: int | None, notes: list[str]) -> list[Triple]:
        """The facts of ``pattern`` from ``head`` (and ``tail``), widened to ``head``'s neighbourhood when empty."""
        graph, o = self.graph, self.options
        found = [traversal.relation_code(graph, r) for r in pattern["relations"]]
        codes = [code for code in found if code is not None]
        if len(codes) < len(found):
            notes.append(f"unknown relation in {pattern['relations']}: widened to the head's neighbourhood")
            codes = []
        kind, facts = pattern["pattern"], []
        if kind == "hr_" and codes:
            facts = traversal.relation_chain(graph, head, codes, o.edges_per_node, o.max_triples)
        elif kind == "h*t" and tail is not None:
            paths = traversal.shortest_paths(graph, head, tail, o.max_path_hops, o.max_paths, o.edges_per_node)
            facts = list(dict.fromkeys(t for path in paths for t in path))
        elif kind == "hrt" and tail is not None:
            facts = traversal.edges_between(graph, head, tail, codes[0] if codes else None, o.edges_per_node)
            if not facts:
                notes.append("no edge joins head and tail")
        if kind != "h__" and not facts:
            notes.append(f"{kind} found nothing: widened to the head's neighbourhood")
        if not facts:
            facts = traversal.neighbourhood(graph, head, o.edges_per_node, o.max_triples)
            if tail is not None:
                facts += traversal.neighbourhood(graph, tail, o.edges_per_node, o.max_triples)
        return facts[:o.max_triples]

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        session = PromptSession(self.llm, "polyg")
        reply = await session.ask_once("classify", self.system, f"Question: {query}")
        pattern = read_pattern(reply)
        if pattern is None:
            session.fail("the classification could not be read: the whole question grounds ⟨h,_,_⟩")
            pattern = {"pattern": "h__", "head": query, "relations": [], "tail": None}
        head, tail = self.ground(pattern["head"]), self.ground(pattern["tail"])
        notes: list[str] = []
        facts = self.traverse(pattern, head, tail, notes) if head is not None else []
        anchors = [n for n in (head, tail) if n is not None]
        entities = "\n".join(node_line(self.graph, n, 300) for n in anchors) or "none found"
        lines = "\n".join(triple_line(self.graph, t) for t in facts) or "none"
        answer = await session.ask_once("answer", ANSWER_SYSTEM, f"Entities:\n{entities}\n\nFacts:\n{lines}\n\n"
                                                                 f"Question: {query}")
        return answer_output(self.graph, session, query, final_answer(answer), anchors + triple_nodes(facts),
                             self.context, k, {"pattern": pattern, "adaptations": notes, "facts": len(facts)})

    async def aclose(self) -> None:
        await self.llm.aclose()
