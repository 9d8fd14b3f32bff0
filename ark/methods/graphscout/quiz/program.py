"""What a GraphScout quiz question asks, as data: an expression over the graph and what is asked of its nodes.

Every expression denotes a set of nodes of one type (frontier semantics):

- :class:`Anchor`: the one node a question names;
- :class:`Walk`: the nodes of ``node_type`` one edge away from any node of ``source``: along ``relation``
  (``direction`` "out": the edge runs from the source side, "in": towards it), or, with ``relation=None`` and
  direction "any", along any relation in either direction;
- :class:`Meet`: the nodes in both sides (same node type), other than the question's anchors.

A :class:`Program` asks one thing of its target expression (its answer nodes are the target's nodes other than the
anchors): ``list`` (a set answer), ``the_one`` (an entity: exactly one node), ``count`` (a number), ``exists``
(boolean: is there any) or ``contains`` (boolean: is ``candidate`` among them). Walks follow every edge, so a node
may repeat along a path (walk semantics, as Cypher's ``MATCH`` in ladybug and one-hop-at-a-time queries anywhere).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Direction = Literal["out", "in", "any"]
Ask = Literal["list", "the_one", "count", "exists", "contains"]
ASKS: tuple[str, ...] = ("list", "the_one", "count", "exists", "contains")
# The answer type each ask produces (the paper's four answer types).
ANSWER_TYPE_OF_ASK = {"list": "set", "the_one": "entity", "count": "number", "exists": "boolean",
                      "contains": "boolean"}
ANY = "*"  # how a wildcard step's relation is written in statistics


@dataclass(frozen=True)
class Anchor:
    """A node the question names, by id (``node_type`` is its type)."""

    node_id: str
    node_type: str


@dataclass(frozen=True)
class Walk:
    """One hop from every node of ``source`` to ``node_type`` nodes (``relation=None``: any relation, any way)."""

    source: Expr
    relation: str | None
    direction: Direction
    node_type: str

    def __post_init__(self) -> None:
        if (self.relation is None) != (self.direction == "any"):
            raise ValueError(f"a walk along any relation has direction 'any' and a named relation 'out' or 'in'; "
                             f"got relation={self.relation!r}, direction={self.direction!r}")

    @property
    def wildcard(self) -> bool:
        return self.relation is None

    def reversed_from(self, source_type: str) -> tuple[str | None, Direction, str]:
        """(relation, direction, node type) of the same hop walked back to ``source_type``."""
        direction: Direction = "any" if self.wildcard else ("in" if self.direction == "out" else "out")
        return self.relation, direction, source_type


@dataclass(frozen=True)
class Meet:
    """Nodes in both ``left`` and ``right`` (both of ``node_type``), other than the question's anchors."""

    left: Expr
    right: Expr

    def __post_init__(self) -> None:
        if node_type_of(self.left) != node_type_of(self.right):
            raise ValueError(f"a meet joins two sides of one node type; got {node_type_of(self.left)!r} and "
                             f"{node_type_of(self.right)!r}")

    @property
    def node_type(self) -> str:
        return node_type_of(self.left)


Expr = Anchor | Walk | Meet


def node_type_of(expr: Expr) -> str:
    return expr.node_type


@dataclass(frozen=True)
class Program:
    """What is asked (``ask``) of the nodes of ``target``; ``candidate`` is the node id a ``contains`` asks about."""

    target: Expr
    ask: Ask
    candidate: str | None = None

    def __post_init__(self) -> None:
        if self.ask not in ASKS:
            raise ValueError(f"unknown ask {self.ask!r}; valid: {', '.join(ASKS)}")
        if (self.ask == "contains") != (self.candidate is not None):
            raise ValueError("a 'contains' question needs a candidate node, and only it has one")

    @property
    def answer_type(self) -> str:
        return ANSWER_TYPE_OF_ASK[self.ask]

    @property
    def answer_node_type(self) -> str:
        return node_type_of(self.target)

    def anchors(self) -> list[Anchor]:
        """The anchors, left to right (the seed first), without repeats."""
        found: dict[str, Anchor] = {}
        for expr in walk_tree(self.target):
            if isinstance(expr, Anchor):
                found.setdefault(expr.node_id, expr)
        return list(found.values())

    @property
    def anchor_ids(self) -> list[str]:
        return [a.node_id for a in self.anchors()]

    @property
    def hops(self) -> int:
        """Edges the question's paths take, over all branches."""
        return sum(isinstance(e, Walk) for e in walk_tree(self.target))

    @property
    def relations(self) -> list[str]:
        """Distinct relations walked, in first-use order (``*`` for a wildcard hop)."""
        seen: dict[str, None] = {}
        for expr in walk_tree(self.target):
            if isinstance(expr, Walk):
                seen.setdefault(expr.relation or ANY, None)
        return list(seen)

    @property
    def node_types(self) -> list[str]:
        """Distinct node types on the question's paths (anchors included), in first-use order."""
        seen: dict[str, None] = {}
        for expr in walk_tree(self.target):
            seen.setdefault(node_type_of(expr), None)
        return list(seen)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form stored in each question's ``params``."""
        return {"ask": self.ask, "candidate": self.candidate, "target": expr_to_dict(self.target)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Program:
        """Inverse of :meth:`to_dict`; ``ValueError`` says what is malformed."""
        try:
            return cls(expr_from_dict(data["target"]), data["ask"], data.get("candidate"))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed GraphScout question program ({type(exc).__name__}: {exc}): {data!r}") \
                from None


def walk_tree(expr: Expr) -> list[Expr]:
    """Every sub-expression, depth first, sources before the walks that leave them (left side of a meet first)."""
    if isinstance(expr, Anchor):
        return [expr]
    if isinstance(expr, Walk):
        return [*walk_tree(expr.source), expr]
    return [*walk_tree(expr.left), *walk_tree(expr.right), expr]


def expr_to_dict(expr: Expr) -> dict[str, Any]:
    if isinstance(expr, Anchor):
        return {"anchor": expr.node_id, "type": expr.node_type}
    if isinstance(expr, Walk):
        return {"walk": expr_to_dict(expr.source), "relation": expr.relation, "direction": expr.direction,
                "type": expr.node_type}
    return {"meet": [expr_to_dict(expr.left), expr_to_dict(expr.right)], "type": expr.node_type}


def expr_from_dict(data: dict[str, Any]) -> Expr:
    if "anchor" in data:
        return Anchor(str(data["anchor"]), str(data["type"]))
    if "walk" in data:
        return Walk(expr_from_dict(data["walk"]), data["relation"], data["direction"], str(data["type"]))
    if "meet" in data:
        left, right = data["meet"]
        return Meet(expr_from_dict(left), expr_from_dict(right))
    raise ValueError(f"an expression is an 'anchor', a 'walk' or a 'meet'; got keys {sorted(data)}")
