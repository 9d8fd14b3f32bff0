"""``kar``: knowledge-aware query expansion (Xia et al. 2024). Call 1: the model lists the entities the question
mentions; each is linked to its best-matching node by name. The linked nodes' documents and, per node, the
``triples`` edges whose far end's document is most relevant to the question (the relation filtering of KAR's
knowledge step) form the knowledge. Call 2: from the question and that knowledge the model writes an expanded query
and relation-type constraints (the answer must be linked to a given entity by a given relation). The expanded query
(question plus expansion) runs on the BM25 or dense index of node documents; the ``pool`` retrieved, joined by the
nodes meeting a constraint that retrieval missed, are ranked with those meeting more constraints first. Replies that
cannot be read are recorded and fall back (the whole question is linked; the reply text is the expansion; an
unknown constraint is dropped and named); nothing a model writes raises."""

from __future__ import annotations

import json
import re
from typing import Any

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever, type_mask
from ..graph_text import clip, incident_triples, node_line, triple_line
from ..prompting import PromptSession, require_model
from ..records import DetailsRecord
from .spec import KAROptions

ENTITY_SYSTEM = """List the entities a question mentions (for example diseases, genes, findings, drugs, products,
people, places), one per line, written as in the question. Reply `none` when it mentions none."""
EXPAND_SYSTEM = """You rewrite a question for a search engine over the documents of a knowledge graph's nodes. You
are given the entities the question mentions, as found in the graph, with facts about them as (subject, relation,
object) triples. Write an expanded query: what the answer is and what its document would say, using the facts.
Also name the relations the answer must have to a listed entity. Reply with one JSON object:
{"expansion": "the expanded query", "constraints": [{"entity": "an entity id from the list", "relation": "one of
that entity's relations"}]} (constraints may be [])."""
BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")


def read_mentions(reply: str) -> list[str]:
    """The entity mentions of a reply, one a line (bullets, numbers and quotes stripped; ``none`` gives [])."""
    mentions = [BULLET.sub("", line).strip().strip("\"'`*").strip() for line in (reply or "").splitlines()]
    return list(dict.fromkeys(m for m in mentions if m and m.lower().rstrip(".") != "none"))


def read_expansion(reply: str) -> tuple[str, list[Any]] | None:
    """The expansion text and raw constraints of a reply's JSON object, or None when it has no readable one."""
    found = re.search(r"\{.*\}", reply or "", re.DOTALL)
    try:
        value = json.loads(found.group(0)) if found else None
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("expansion"), str):
        return None
    constraints = value.get("constraints")
    return value["expansion"], constraints if isinstance(constraints, list) else []


class KnowledgeAwareRetrieval(Retriever):
    """Link, gather knowledge, expand, retrieve: two calls per question."""

    def __init__(self, graph: KnowledgeGraph, options: KAROptions, context: MethodContext) -> None:
        from ark.index.embedders import open_node_index

        self.llm = require_model(context, "kar")
        self.graph, self.options, self.context = graph, options, context
        self.names = open_node_index(graph, "bm25", names_only=True, progress=context.progress)
        self.documents = open_node_index(graph, options.index, names_only=False, embedder=options.embedder,
                                         embedder_base_url=options.embedder_base_url, progress=context.progress)

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        session = PromptSession(self.llm, "kar")
        linked = await self.link(session, query)
        knowledge = self.knowledge(query, linked)
        reply = await session.ask_once("expansion", EXPAND_SYSTEM, f"Question: {query}\n\nEntities and facts:\n"
                                                                   f"{knowledge}")
        read = read_expansion(reply)
        if read is None:
            session.fail("expansion: no JSON object with an `expansion`; used the reply text as the expansion")
            read = (clip(reply, 1000), [])
        expansion, raw_constraints = read
        constraints = self.constraints(session, raw_constraints, linked)
        hits = self.documents.search(f"{query} {expansion}".strip(), self.options.pool,
                                     node_types=self.context.candidate_types)
        ranked = [int(i) for i, _ in hits]
        if self.options.constraints and constraints:
            ranked = self.apply_constraints(f"{query} {expansion}".strip(), ranked, constraints)
        met = {node: sum(node in allowed for _, _, allowed in constraints) for node in ranked}
        ranked = ranked[:k]
        graph = self.graph
        record = {"question": query, "method": "kar", "linked": [graph.node_id(n) for n in linked],
                  "expansion": expansion, "constraints": [{"entity": graph.node_id(e), "relation": r}
                                                          for e, r, _ in constraints],
                  "met": [met[n] for n in ranked], "calls": session.calls, "failures": session.failures}
        return MethodOutput(indices=ranked, scores=[1.0 / (r + 1) for r in range(len(ranked))], trajectories=[],
                            record=DetailsRecord(record))

    def apply_constraints(self, expanded: str, ranked: list[int],
                          constraints: list[tuple[int, str, set[int]]]) -> list[int]:
        """``ranked`` joined by the nodes meeting a constraint that retrieval missed (by their score for
        ``expanded``), then those meeting more constraints first, retrieval order kept within equal counts."""
        mask = type_mask(self.graph, self.context.candidate_types)
        missed = sorted({n for _, _, allowed in constraints for n in allowed if mask is None or mask[n]}
                        - set(ranked))
        if missed:
            scores = self.documents.score(expanded, missed)
            ranked = ranked + [missed[i] for i in sorted(range(len(missed)), key=lambda i: -float(scores[i]))]
        return sorted(ranked, key=lambda node: -sum(node in allowed for _, _, allowed in constraints))

    async def link(self, session: PromptSession, query: str) -> list[int]:
        """The graph nodes of the question's entities (the whole question linked when the model names none)."""
        reply = await session.ask_once("entities", ENTITY_SYSTEM, f"Question: {query}")
        mentions = read_mentions(reply)
        if not mentions:
            session.fail("entities: the reply named none; linked the whole question")
            mentions = [query]
        linked = [int(hits[0][0]) for m in mentions if (hits := self.names.search(m, 1))]
        return list(dict.fromkeys(linked))[:self.options.entities]

    def knowledge(self, query: str, linked: list[int]) -> str:
        """Each linked node's line and its ``triples`` edges whose far end is most relevant to ``query``."""
        graph, options = self.graph, self.options
        blocks = []
        for node in linked:
            edges = [triple for triple, _ in incident_triples(graph, node, options.neighbours)]
            if edges:
                far = [t[2] if t[0] == node else t[0] for t in edges]
                relevance = self.documents.score(query, far)
                order = sorted(range(len(edges)), key=lambda i: -float(relevance[i]))[:options.triples]
                edges = [edges[i] for i in sorted(order)]
            relations = sorted({graph.relation_types[t[1]] for t in edges})
            facts = "\n".join(f"  {triple_line(graph, t)}" for t in edges) or "  none"
            blocks.append(f"- {node_line(graph, node, options.text_chars)}\n  relations: "
                          f"{', '.join(relations) or 'none'}\n{facts}")
        return "\n".join(blocks) or "none found"

    def constraints(self, session: PromptSession, raw: list[Any],
                    linked: list[int]) -> list[tuple[int, str, set[int]]]:
        """The readable constraints as (entity, relation, the nodes meeting it); the rest recorded and dropped."""
        graph = self.graph
        by_key = {key: n for n in linked for key in (graph.node_id(n).lower(), graph.name(n).lower())}
        kept = []
        for item in raw:
            fields = item if isinstance(item, dict) else {}
            entity = by_key.get(str(fields.get("entity", "")).strip().lower())
            relation = str(fields.get("relation", "")).strip()
            if entity is None or relation not in graph.relation_types:
                session.fail(f"constraint {clip(json.dumps(item), 120)} dropped: entities are "
                             f"{', '.join(graph.node_id(n) for n in linked) or 'none'}; relations are "
                             f"{', '.join(graph.relation_types)}")
                continue
            code = graph.relation_types.index(relation)
            found = graph.neighbors(entity)
            allowed = {int(n) for n, r in zip(found.nodes, found.relations, strict=True) if int(r) == code}
            kept.append((entity, relation, allowed))
        return kept

    async def aclose(self) -> None:
        await self.llm.aclose()
