"""The route of a question asking for the *other* nodes that share a neighbour with the one it names ("Which other
films have the same director as X?", "What else belongs to the same category as X?"): the named node's neighbours
by one relation (the shared nodes), then their neighbours of the named node's own type linked to them the same
way, the named node left out. The relation is read from the graph's schema: the one the question names (by its
words or an agent noun: "director" → directed_by), else the one leading to a type the question names ("the same
*licence*"), else the one a word means, else the relation with the most edges at the named node's type (then
never decisive: ``guessed``). Pure reads; no domain words."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .meaning import meant_relation

if TYPE_CHECKING:  # the evidence holds a route: its types are read for annotations only
    from ....graph import SchemaTriple
    from ....question import QuestionAnalysis
    from .evidence import Anchor, SeenNode


@dataclass(frozen=True)
class SharedRoute:
    """Anchor → ``relation`` → shared nodes of type ``middle`` → the same relation back → answers of type
    ``wanted``. ``outward``: the anchor is the relation's source (a film ``directed_by`` a person); ``anchor``: its
    index; ``guessed``: no word of the question chose the relation among several (the one with the most edges)."""

    relation: str
    middle: str
    wanted: str
    outward: bool
    anchor: int
    guessed: bool = False

    def shared(self, node: SeenNode) -> bool:
        """Whether a node listed around the anchor is linked to it the way the route goes."""
        return self.relation in (node.out_relations if self.outward else node.in_relations)

    def sharing(self, node: SeenNode) -> bool:
        """Whether a node listed around a shared node is linked to it the way the anchor is."""
        return node.type == self.wanted and self.relation in (node.in_relations if self.outward
                                                              else node.out_relations)


def sharing_route(schema: Sequence[SchemaTriple], a: QuestionAnalysis, anchors: list[Anchor],
                  excludes_named: bool) -> SharedRoute | None:
    """The route when the question excludes a node it names (the last one it names: "... the same X *as Z*") and
    asks for nodes of that node's type (or names no type, or names only the type of what is shared); None
    otherwise. Among the routes the question's words allow, the one with the most edges."""
    if not excludes_named or not anchors:
        return None
    lower = a.question.lower()
    anchor = max(anchors, key=lambda x: lower.rfind(x.name.lower()))
    if any(x.type == anchor.type and x.index != anchor.index for x in anchors):
        return None  # "which packages *besides* A depend on B": two of a kind are a relation's ends, not a share
    routes = sorted((t for t in schema if anchor.type in (t.source_type, t.target_type)), key=lambda t: -t.count)
    named = [n.relation for n in a.schema_relations] + list(a.relation_hints)
    chosen = [t for t in routes if t.relation in named]
    guessed = False
    if not chosen:
        types = [t for _, t in a.type_mentions if t != anchor.type]
        chosen = [t for t in routes if _other_end(t, anchor.type) in types]
    if not chosen:  # no stem and no type says it: the word that means one of the relations ("composer")
        said = [w for w in re.findall(r"[A-Za-z]+", a.question) if w.lower() not in anchor.name.lower()]
        meant = meant_relation(said, sorted({t.relation for t in routes}))
        chosen = [t for t in routes if t.relation == meant]
        if not chosen:  # no word narrows the routes: the one with the most edges, a guess among several
            chosen, guessed = routes, len({t.relation for t in routes}) > 1
    if not chosen:
        return None
    middle = _other_end(chosen[0], anchor.type)
    # The type the question asks for is the anchor's, or the shared one's when it is read from "the same
    # *family* as X" (the answers are like X, not the family).
    wanted = a.target_types[0] if a.target_types else anchor.type
    if wanted not in (anchor.type, middle):
        return None
    return SharedRoute(chosen[0].relation, middle, anchor.type, chosen[0].source_type == anchor.type, anchor.index,
                       guessed)


def _other_end(route: SchemaTriple, anchor_type: str) -> str:
    return route.target_type if route.source_type == anchor_type else route.source_type

