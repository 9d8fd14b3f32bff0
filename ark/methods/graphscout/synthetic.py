"""Questions about the HPO graph (or any graph with its node types and relations: disease, phenotype, gene;
``associated_gene``, ``has_phenotype``, ``is_a``) with answers computed by walking
:meth:`~ark.graph.KnowledgeGraph.neighbors` in memory, independently of any Cypher, to check the scripted solver.

Per answer type (:data:`TEMPLATES`):

- number: genes of a disease, diseases with a phenotype, phenotypes of a disease, genes of the diseases with a
  phenotype (two hops); only counts of 2 or more, so a count cannot be right by accident of being 1;
- set: genes of a disease, diseases of a gene, subtypes of a phenotype (2 to 10 members);
- boolean: is a gene associated with a disease, does a disease have a phenotype (half true, half false);
- entity: the one gene of a disease, the one parent term of a phenotype.

Anchors are nodes whose names are unique in the graph and carry no comma.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from ...graph import KnowledgeGraph
from ...graph.store import Direction
from ...question import name_tokens

MIN_COUNT, MAX_SET = 2, 10
Found = TypeVar("Found")  # what a template finds at a node (its answer nodes, a partner node)


@dataclass(frozen=True)
class SyntheticQuestion:
    question: str
    answer_type: str
    answer: str
    answer_ids: list[str] = field(default_factory=list)
    template: str = ""


def _names(graph: KnowledgeGraph, nodes: list[int]) -> str:
    return ", ".join(sorted(graph.name(i) for i in nodes))


class QuestionMaker:
    """Draws questions and their graph truth; see the module docstring."""

    def __init__(self, graph: KnowledgeGraph, seed: int = 0) -> None:
        self.graph = graph
        self.rng = random.Random(seed)
        counts: dict[tuple[str, ...], int] = {}
        for i in range(graph.num_nodes):
            counts[name_tokens(graph.name(i) or "")] = counts.get(name_tokens(graph.name(i) or ""), 0) + 1
        self._unique = counts
        self._by_type = {t: graph.nodes_of_type(t).tolist() for t in graph.node_types}

    # ------------------------------------------------------------------ graph walks (the truth)
    def walk(self, node: int, relation: str, direction: Direction, node_type: str) -> list[int]:
        """Distinct neighbors of ``node`` along ``relation`` in ``direction`` that have ``node_type``."""
        found = self.graph.neighbors(node, relation, direction).nodes.tolist()
        return sorted({j for j in found if self.graph.node_type(j) == node_type})

    def usable(self, node: int) -> bool:
        name = self.graph.name(node) or ""
        tokens = name_tokens(name)
        return bool(tokens) and self._unique.get(tokens) == 1 and "," not in name and len(name) > 2

    def _pick(self, node_type: str, accept: Callable[[int], Found | None], tries: int = 2_000) -> tuple[int, Found]:
        """A usable ``node_type`` node and what ``accept`` found there (None rejects the node; a node index 0 or
        any other falsy find does not)."""
        pool = self._by_type[node_type]
        for _ in range(tries):
            node = pool[self.rng.randrange(len(pool))]
            if not self.usable(node):
                continue
            result = accept(node)
            if result is not None:
                return node, result
        raise RuntimeError(f"no {node_type} node fits this template")

    # ------------------------------------------------------------------ templates
    def number(self, kind: int) -> SyntheticQuestion:
        g = self.graph

        def counted(x: list[int]) -> list[int] | None:
            return x if len(x) >= MIN_COUNT else None

        if kind == 0:
            node, genes = self._pick("disease", lambda d: counted(self.walk(d, "associated_gene", "out", "gene")))
            text = f"How many genes are associated with {g.name(node)}?"
        elif kind == 1:
            node, genes = self._pick("phenotype", lambda p: counted(self.walk(p, "has_phenotype", "in", "disease")))
            text = f"How many diseases have the phenotype {g.name(node)}?"
        elif kind == 2:
            node, genes = self._pick("disease", lambda d: counted(self.walk(d, "has_phenotype", "out", "phenotype")))
            text = f"How many phenotypes does {g.name(node)} have?"
        else:
            def two_hop(p: int) -> list[int] | None:
                genes = {j for d in self.walk(p, "has_phenotype", "in", "disease")
                         for j in self.walk(d, "associated_gene", "out", "gene")}
                return sorted(genes) if MIN_COUNT <= len(genes) <= 500 else None

            node, genes = self._pick("phenotype", two_hop)
            text = f"How many genes are associated with diseases that have the phenotype {g.name(node)}?"
        return SyntheticQuestion(text, "number", str(len(genes)), [], f"number-{kind}")

    def set(self, kind: int) -> SyntheticQuestion:
        g = self.graph

        def sized(x: list[int]) -> list[int] | None:
            return x if MIN_COUNT <= len(x) <= MAX_SET else None

        if kind == 0:
            node, found = self._pick("disease", lambda d: sized(self.walk(d, "associated_gene", "out", "gene")))
            text = f"Which genes are associated with {g.name(node)}?"
        elif kind == 1:
            node, found = self._pick("gene", lambda x: sized(self.walk(x, "associated_gene", "in", "disease")))
            text = f"Which diseases are associated with the gene {g.name(node)}?"
        else:
            node, found = self._pick("phenotype", lambda p: sized(self.walk(p, "is_a", "in", "phenotype")))
            text = f"What are the subtypes of {g.name(node)}?"
        return SyntheticQuestion(text, "set", _names(g, found), [g.node_id(i) for i in found], f"set-{kind}")

    def boolean(self, kind: int, truth: bool) -> SyntheticQuestion:
        g = self.graph
        if kind == 0:
            first_type, relation, second_type = "gene", "associated_gene", "disease"
            direction: Direction = "in"
        else:
            first_type, relation, second_type = "disease", "has_phenotype", "phenotype"
            direction = "out"
        pool = self._by_type[second_type]

        def partner(node: int) -> int | None:
            linked = [j for j in self.walk(node, relation, direction, second_type) if self.usable(j)]
            if truth:
                return self.rng.choice(linked) if linked else None
            for _ in range(50):
                other = pool[self.rng.randrange(len(pool))]
                if other not in linked and self.usable(other) and self.walk(other, relation,
                                                                            "out" if direction == "in" else "in",
                                                                            first_type):
                    return other
            return None

        node, other = self._pick(first_type, partner)
        if kind == 0:
            text = f"Is {g.name(node)} associated with {g.name(other)}?"
        else:
            text = f"Does {g.name(node)} have the phenotype {g.name(other)}?"
        return SyntheticQuestion(text, "boolean", "yes" if truth else "no", [], f"boolean-{kind}")

    def entity(self, kind: int) -> SyntheticQuestion:
        g = self.graph

        def single(x: list[int]) -> list[int] | None:
            return x if len(x) == 1 else None

        if kind == 0:
            node, found = self._pick("disease", lambda d: single(self.walk(d, "associated_gene", "out", "gene")))
            text = f"Which gene is associated with {g.name(node)}?"
        else:
            node, found = self._pick("phenotype", lambda p: single(self.walk(p, "is_a", "out", "phenotype")))
            text = f"What is the parent term of {g.name(node)}?"
        return SyntheticQuestion(text, "entity", g.name(found[0]), [g.node_id(found[0])], f"entity-{kind}")

    def questions(self, answer_type: str, count: int) -> list[SyntheticQuestion]:
        """Up to ``count`` distinct questions of ``answer_type``, cycling through its templates (booleans alternate
        yes/no); a template the graph cannot fill is skipped."""
        kinds = list(range(TEMPLATES[answer_type]))
        made: list[SyntheticQuestion] = []
        seen: set[str] = set()
        attempts = 0
        while len(made) < count and kinds and attempts < count * 20:
            kind = kinds[attempts % len(kinds)]
            attempts += 1
            try:
                if answer_type == "boolean":
                    question = self.boolean(kind, truth=(len(made) // 2) % 2 == 0)
                else:
                    question = getattr(self, answer_type)(kind)
            except RuntimeError:
                kinds.remove(kind)
                continue
            if question.question not in seen:
                seen.add(question.question)
                made.append(question)
        return made


TEMPLATES = {"number": 4, "set": 3, "boolean": 2, "entity": 2}
