"""Questions of six kinds over a :class:`~benchmarks.domains.tables.DomainData`, with exact answers computed from
its tables (never from ARK's store or a method's output).

Kinds (``KINDS``):

- ``lookup``: a node's name in several phrasings ("I need the record for X.", "Look up X.", "X", "What is X?");
  the answer is the node itself. Names shared by two nodes (ignoring case) are not asked.
- ``description``: the node's description, verbatim or lightly framed ("Which gene is described as: ...").
- ``relation``: one relation asked with the graph's own verbs ("Who maintains X?", "Which licence does X use?").
- ``intersection``: sources meeting two conditions ("Which packages are written by A and use licence B?"); each
  condition alone has more answers than both.
- ``two_hop``: through an intermediate node: the anchor given by its description ("Who wrote the package
  described as ...?") or a chain of two relations ("Which other packages are written by the author of X?").
- ``sharing``: the other nodes of the anchor's type sharing a neighbour by one relation, the anchor excluded.

Seeded and deterministic: the same data and seed give the same file. Each question has at most
``MAX_ANSWERS`` answers and names its anchors' ids.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .tables import DomainData, Node, Relation

KINDS = ("lookup", "description", "relation", "intersection", "two_hop", "sharing")
MAX_ANSWERS = 10
LOOKUP_FORMS = ("I need the record for {x}.", "Look up {x}.", "{x}", "What is {x}?", "Tell me about {x}.",
                "Show me {x}.")
DESCRIPTION_FORMS = ("{d}", "Which {t} is described as: {d}", "I am looking for the {t} described as \"{d}\"",
                     "Find the {t}: {d}")
MIN_DESCRIPTION_WORDS = 6
Candidate = tuple[str, str, tuple[str, ...], tuple[str, ...], str]  # stratum, text, answers, anchors, made from


@dataclass(frozen=True)
class Question:
    """One question, its exact answers (node ids) and what it was made from."""

    id: str
    graph: str
    kind: str
    question: str
    answer_ids: tuple[str, ...]
    anchors: tuple[str, ...]
    made_from: str

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "graph": self.graph, "kind": self.kind, "question": self.question,
                "query": self.question, "answer_ids": list(self.answer_ids), "anchors": list(self.anchors),
                "made_from": self.made_from}


class Tables:
    """The node and edge tables indexed for the generator: neighbours by relation and direction, unique names."""

    def __init__(self, data: DomainData) -> None:
        self.data = data
        self.nodes: dict[str, Node] = {n.id: n for n in data.nodes}
        self.out: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.inc: dict[tuple[str, str], set[str]] = defaultdict(set)
        self.by_src: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for edge in data.edges:
            self.by_src[edge.src].add((edge.relation, edge.dst))
            self.out[(edge.src, edge.relation)].add(edge.dst)
            self.inc[(edge.dst, edge.relation)].add(edge.src)
        names: dict[str, int] = defaultdict(int)
        descriptions: dict[str, int] = defaultdict(int)
        for node in data.nodes:
            names[node.name.casefold()] += 1
            descriptions[node.description.casefold()] += 1
        self.unique_name = {n.id for n in data.nodes if names[n.name.casefold()] == 1 and _nameable(n.name)}
        self.unique_description = {n.id for n in data.nodes if descriptions[n.description.casefold()] == 1
                                   and len(n.description.split()) >= MIN_DESCRIPTION_WORDS}

    def step(self, node: str, relation: str) -> set[str]:
        """The neighbours of ``node`` by ``relation`` (``<relation``: walked backwards)."""
        if relation.startswith("<"):
            return self.inc.get((node, relation[1:]), set())
        return self.out.get((node, relation), set())

    def plural(self, node_type: str) -> str:
        return self.data.plurals.get(node_type, node_type + "s")

    def described(self, node_id: str) -> str:
        node = self.nodes[node_id]
        return f"the {node.type.replace('_', ' ')} described as \"{_sentence(node.description)}\""


def _nameable(name: str) -> bool:
    return len(name) >= 3 and not name.isdigit()


def _sentence(text: str) -> str:
    """The first sentence of a description, without its closing period (at most 40 words)."""
    first = re.split(r"(?<=[a-z0-9)])\.\s", text.strip(), maxsplit=1)[0].rstrip(". ")
    return " ".join(first.split()[:40])


def generate(data: DomainData, per_kind: int = 20, seed: int = 0) -> list[Question]:
    """``per_kind`` questions of each kind (fewer where the data has fewer), seeded."""
    tables = Tables(data)
    makers: dict[str, Callable[[Tables, random.Random], Iterable[Candidate]]] = {
        "lookup": _lookups, "description": _descriptions, "relation": _relations,
        "intersection": _intersections, "two_hop": _two_hops, "sharing": _sharings}
    questions: list[Question] = []
    for kind in KINDS:
        rng = random.Random(f"{data.name}/{kind}/{seed}")
        chosen = _stratified(makers[kind](tables, rng), per_kind, rng)
        for n, (_, text, answers, anchors, made_from) in enumerate(chosen):
            questions.append(Question(f"{data.name}-{kind}-{n:02d}", data.name, kind, text,
                                      tuple(sorted(answers)), anchors, made_from))
    return questions


def _stratified(candidates: Iterable[Candidate], size: int, rng: random.Random) -> list[Candidate]:
    """``size`` candidates taken round-robin over their strata (first item), each stratum shuffled, no question
    text twice."""
    strata: dict[str, list[Candidate]] = defaultdict(list)
    for candidate in candidates:
        strata[candidate[0]].append(candidate)
    for members in strata.values():
        rng.shuffle(members)
    order = sorted(strata)
    rng.shuffle(order)
    chosen: list[Candidate] = []
    seen: set[str] = set()
    while len(chosen) < size and any(strata[s] for s in order):
        for stratum in order:
            while strata[stratum]:
                candidate = strata[stratum].pop()
                if candidate[1].casefold() not in seen:
                    seen.add(candidate[1].casefold())
                    chosen.append(candidate)
                    break
            if len(chosen) == size:
                break
    return chosen


def _lookups(t: Tables, rng: random.Random) -> Iterable[Candidate]:
    for node_id in sorted(t.unique_name):
        node = t.nodes[node_id]
        form = rng.choice(LOOKUP_FORMS)
        yield node.type, form.format(x=node.name), (node_id,), (node_id,), f"name of {node_id}"


def _descriptions(t: Tables, rng: random.Random) -> Iterable[Candidate]:
    for node_id in sorted(t.unique_description):
        node = t.nodes[node_id]
        form = rng.choice(DESCRIPTION_FORMS)
        text = form.format(d=node.description.strip(), t=node.type.replace("_", " "))
        yield node.type, text, (node_id,), (node_id,), f"description of {node_id}"


def _relation_asks(t: Tables) -> Iterable[tuple[str, Relation, str, tuple[str, ...]]]:
    """(node, relation, walked as, templates) for every node and every way its relations are asked."""
    for (src, name), _ in sorted(t.out.items()):
        relation = t.data.relations[name]
        if relation.ask_dst:
            yield src, relation, name, relation.ask_dst
    for (dst, name), _ in sorted(t.inc.items()):
        relation = t.data.relations[name]
        if relation.ask_src:
            yield dst, relation, "<" + name, relation.ask_src


def _relations(t: Tables, rng: random.Random) -> Iterable[Candidate]:
    for node_id, _, walked, templates in _relation_asks(t):
        answers = t.step(node_id, walked)
        if node_id in t.unique_name and 1 <= len(answers) <= MAX_ANSWERS:
            text = rng.choice(templates).format(x=t.nodes[node_id].name)
            yield walked, text, tuple(answers), (node_id,), f"{node_id} {walked}"


def _two_hops(t: Tables, rng: random.Random) -> Iterable[Candidate]:
    """Half through a node given by its description, half through a chain of two relations."""
    for node_id, _, walked, templates in _relation_asks(t):
        answers = t.step(node_id, walked)
        if node_id in t.unique_description and 1 <= len(answers) <= MAX_ANSWERS:
            text = rng.choice(templates).format(x=t.described(node_id))
            yield f"described {walked}", text, tuple(answers), (node_id,), f"description of {node_id}, {walked}"
    for chain in t.data.two_hops:
        for anchor in sorted(t.unique_name):
            middles = t.step(anchor, chain.first)
            if not 1 <= len(middles) <= 3:
                continue
            answers = set().union(*(t.step(m, chain.second) for m in middles)) - {anchor}
            if 1 <= len(answers) <= MAX_ANSWERS:
                text = chain.template.format(x=t.nodes[anchor].name)
                yield (f"chain {chain.first} {chain.second}", text, tuple(answers), (anchor,),
                       f"{anchor} {chain.first} {sorted(middles)} {chain.second}")


def _sharings(t: Tables, rng: random.Random) -> Iterable[Candidate]:
    for anchor in sorted(t.unique_name):
        for name, relation in sorted(t.data.relations.items()):
            if not relation.shared:
                continue
            shared = t.step(anchor, name)
            if not shared:
                continue
            anchor_type = t.nodes[anchor].type
            others = {s for y in shared for s in t.step(y, "<" + name)
                      if s != anchor and t.nodes[s].type == anchor_type}
            if 1 <= len(others) <= MAX_ANSWERS:
                text = rng.choice(relation.shared).format(x=t.nodes[anchor].name)
                yield name, text, tuple(others), (anchor,), f"{anchor} {name} {sorted(shared)}"


def _intersections(t: Tables, rng: random.Random) -> Iterable[Candidate]:
    """For each node, pairs of its conditions (relation to a named target) whose common sources are fewer than
    either's."""
    asked: set[frozenset[tuple[str, str]]] = set()
    for src in sorted(t.nodes):
        conditions = sorted((name, dst) for name, dst in t.by_src.get(src, ())
                            if t.data.relations[name].clause and dst in t.unique_name)
        if len(conditions) < 2:
            continue
        for _ in range(2):
            (r1, a), (r2, b) = rng.sample(conditions, 2)
            if frozenset({(r1, a), (r2, b)}) in asked:
                continue
            asked.add(frozenset({(r1, a), (r2, b)}))
            first, second = t.step(a, "<" + r1), t.step(b, "<" + r2)
            both = first & second
            if len(both) > MAX_ANSWERS or len(both) >= min(len(first), len(second)):
                continue
            kind = t.nodes[src].type
            both = {n for n in both if t.nodes[n].type == kind}
            if not both:
                continue
            text = (f"Which {t.plural(kind)} {t.data.relations[r1].clause.format(x=t.nodes[a].name)} and "
                    f"{t.data.relations[r2].clause.format(x=t.nodes[b].name)}?")
            yield (f"{min(r1, r2)} {max(r1, r2)}", text, tuple(both), (a, b), f"{a} <{r1} & {b} <{r2}")
