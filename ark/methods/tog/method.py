"""``tog``: Think-on-Graph (Sun et al. 2024) as a retriever, the way Yu et al. (2025) and SeedER (Appendix E) run
it. Seeds come from a dense (or BM25) index of node documents; the search may only visit nodes within ``hops`` hops
of them. Each depth, for every entity in the beam the model prunes the relations that leave it (one call an entity,
``width`` relations kept with their scores), then scores the entities each kept relation reaches (one call a
relation; a single candidate scores 1 without a call); an entity's score is its relation's score
times its own, and the ``width`` best become the next beam. After each depth the model checks whether the paths so
far suffice (ToG's reasoning step); yes, or nothing left to expand, stops the search. The nodes each step reached
are the ranking: the last beam first, back to the seeds, then the candidates pruning dropped, by score. With
``rerank`` the model reorders that ranking's head. A reply that cannot be read is a recorded failure with a stated
fallback (equal scores, "not sufficient", the search order); nothing a model writes raises."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever, type_mask
from ..graph_text import Triple, incident_triples, node_line, triple_line
from ..prompting import PromptSession, require_model
from ..records import DetailsRecord
from . import prompts
from .spec import ToGOptions


@dataclass
class Candidate:
    """An entity a step reached: its score and the path of triples from a seed."""

    node: int
    score: float
    path: list[Triple] = field(default_factory=list)


def neighbourhood(graph: KnowledgeGraph, seeds: list[int], hops: int) -> set[int]:
    """The nodes within ``hops`` hops of ``seeds`` (the search space)."""
    space, frontier = set(seeds), list(seeds)
    for _ in range(hops):
        following = [int(n) for node in frontier for n in graph.neighbors(node).nodes if int(n) not in space]
        space.update(following)
        frontier = list(dict.fromkeys(following))
    return space


def relation_edges(graph: KnowledgeGraph, node: int, space: set[int], seen: set[int]) -> dict[str, list[Triple]]:
    """The edges from ``node`` to unseen nodes of the search space, by relation label (``r`` for an outgoing edge,
    ``r (inverse)`` for an incoming one), in adjacency order."""
    edges: dict[str, list[Triple]] = {}
    for triple, outgoing in incident_triples(graph, node):
        other = triple[2] if outgoing else triple[0]
        if other in space and other not in seen:
            name = graph.relation_types[triple[1]]
            edges.setdefault(name if outgoing else f"{name} (inverse)", []).append(triple)
    return edges


class ThinkOnGraph(Retriever):
    """One beam search per question."""

    def __init__(self, graph: KnowledgeGraph, options: ToGOptions, context: MethodContext) -> None:
        from ark.index.embedders import open_node_index

        self.llm = require_model(context, "tog")
        self.graph, self.options, self.context = graph, options, context
        self.index = open_node_index(graph, options.seed_index, names_only=False, embedder=options.embedder,
                                     embedder_base_url=options.embedder_base_url, progress=context.progress)

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        options, graph = self.options, self.graph
        session = PromptSession(self.llm, "tog")
        seeds = [int(i) for i, _ in self.index.search(query, options.seeds)]
        space = neighbourhood(graph, seeds, options.hops)
        beams = [[Candidate(s, 1.0) for s in seeds]]
        dropped: dict[int, Candidate] = {}
        seen = set(seeds)
        steps: list[dict[str, Any]] = []
        stop = "depth"
        for depth in range(1, options.depth + 1):
            scored = await self.expand(session, query, beams[-1], space, seen)
            if not scored:
                stop = "nothing left to expand"
                break
            kept = scored[:options.width]
            for extra in scored[options.width:]:
                dropped.setdefault(extra.node, extra)
            seen.update(c.node for c in scored)
            beams.append(kept)
            sufficient = await self.check(session, query, kept)
            steps.append({"depth": depth, "beam": [graph.node_id(c.node) for c in kept],
                          "scores": [round(c.score, 4) for c in kept], "sufficient": sufficient})
            if sufficient:
                stop = "sufficient"
                break
        ranking = [c.node for beam in reversed(beams) for c in sorted(beam, key=lambda c: -c.score)]
        ranking += [c.node for c in sorted(dropped.values(), key=lambda c: -c.score)]
        ranking = list(dict.fromkeys(ranking))
        mask = type_mask(graph, self.context.candidate_types)
        ranking = [n for n in ranking if mask is None or mask[n]]
        if options.rerank and ranking:
            ranking = await self.rerank(session, query, ranking[:k]) + ranking[k:]
        ranking = ranking[:k]
        record = {"question": query, "method": "tog", "seeds": [graph.node_id(s) for s in seeds],
                  "search_space": len(space), "steps": steps, "stop": stop, "calls": session.calls,
                  "failures": session.failures, "paths": [[triple_line(graph, t) for t in c.path]
                                                          for c in beams[-1]]}
        return MethodOutput(indices=ranking, scores=[1.0 / (r + 1) for r in range(len(ranking))], trajectories=[],
                            record=DetailsRecord(record))

    async def expand(self, session: PromptSession, query: str, beam: list[Candidate], space: set[int],
                     seen: set[int]) -> list[Candidate]:
        """One depth: relation pruning for each beam entity, then entity pruning for each kept relation; the
        candidates best first (an entity once, at its best score)."""
        best: dict[int, Candidate] = {}
        for entity in beam:
            edges = relation_edges(self.graph, entity.node, space, seen)
            if not edges:
                continue
            for label, score in (await self.prune_relations(session, query, entity.node, list(edges))).items():
                triples = self.sample(edges[label], f"{entity.node}:{label}")
                scores = await self.score_entities(session, query, entity.node, label, triples)
                for triple, entity_score in zip(triples, scores, strict=True):
                    node = triple[2] if triple[0] == entity.node else triple[0]
                    candidate = Candidate(node, score * entity_score, [*entity.path, triple])
                    if node not in best or candidate.score > best[node].score:
                        best[node] = candidate
        return sorted(best.values(), key=lambda c: -c.score)

    def sample(self, triples: list[Triple], key: str) -> list[Triple]:
        """``triples``, or, past ``candidates`` of them, a seeded sample of that many in adjacency order (ToG samples
        a relation's entities when they are too many)."""
        if len(triples) <= self.options.candidates:
            return triples
        chosen = random.Random(f"{self.context.seed}:{key}").sample(range(len(triples)), self.options.candidates)
        return [triples[i] for i in sorted(chosen)]

    async def prune_relations(self, session: PromptSession, query: str, node: int,
                              labels: list[str]) -> dict[str, float]:
        """The ``width`` relations the model kept, with their scores; equal scores over the first ``width`` listed
        when its reply cannot be read."""
        width = self.options.width
        user = (f"Question: {query}\nTopic entity: {node_line(self.graph, node, self.options.text_chars)}\n"
                f"Relations: {'; '.join(labels)}")
        reply = await session.ask_once("relation pruning", prompts.RELATION_SYSTEM.format(width=width), user)
        chosen = prompts.read_relation_scores(reply, labels)
        if chosen is None:
            session.fail(f"relation pruning for {self.graph.node_id(node)}: no listed relation with a score; kept "
                         f"the first {width} with equal scores")
            chosen = {label: 1.0 / min(width, len(labels)) for label in labels[:width]}
        return dict(sorted(chosen.items(), key=lambda item: -item[1])[:width])

    async def score_entities(self, session: PromptSession, query: str, node: int, label: str,
                             triples: list[Triple]) -> list[float]:
        """The model's score of each entity ``label`` reaches from ``node`` (1.0 without a call for a single one;
        equal scores when the reply cannot be read)."""
        others = [t[2] if t[0] == node else t[0] for t in triples]
        if len(others) == 1:
            return [1.0]
        listed = "\n".join(f"{i}. {node_line(self.graph, other, self.options.text_chars)}"
                           for i, other in enumerate(others, 1))
        user = (f"Question: {query}\nTopic entity: {self.graph.name(node)}\nRelation: {label}\n"
                f"Candidate entities:\n{listed}")
        reply = await session.ask_once("entity pruning", prompts.ENTITY_SYSTEM, user)
        scores = prompts.read_entity_scores(reply, len(others))
        if scores is None:
            session.fail(f"entity pruning for {self.graph.node_id(node)} via {label}: no `Score:` line with "
                         f"{len(others)} numbers; scored them equally")
            return [1.0 / len(others)] * len(others)
        return scores

    async def check(self, session: PromptSession, query: str, beam: list[Candidate]) -> bool:
        """ToG's reasoning step: do the beam's paths suffice? An unreadable reply counts as no."""
        paths = "\n".join(triple_line(self.graph, t) for c in beam for t in c.path) or "none"
        reply = await session.ask_once("reasoning", prompts.CHECK_SYSTEM,
                                       f"Question: {query}\nKnowledge triplets:\n{paths}")
        sufficient = prompts.read_sufficient(reply)
        if sufficient is None:
            session.fail("reasoning: neither {Yes} nor {No}; searched on")
        return bool(sufficient)

    async def rerank(self, session: PromptSession, query: str, nodes: list[int]) -> list[int]:
        """The model's order of ``nodes`` (those it leaves out after, in search order)."""
        listed = "\n".join(f"{i}. {node_line(self.graph, n, self.options.text_chars)}" for i, n in enumerate(nodes, 1))
        reply = await session.ask_once("rerank", prompts.RERANK_SYSTEM, f"Question: {query}\nDocuments:\n{listed}")
        order = prompts.read_ranking(reply, len(nodes))
        if order is None:
            session.fail("rerank: no document numbers in the reply; kept the search order")
            return nodes
        return list(dict.fromkeys([nodes[p] for p in order] + nodes))

    async def aclose(self) -> None:
        await self.llm.aclose()
