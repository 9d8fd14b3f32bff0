"""How a :class:`~ark.graph.KnowledgeGraph` looks as a property graph: node tables, relationship tables, columns.

Every node type becomes a node table whose label is the type name made safe for Cypher (``gene/protein`` ->
``gene_protein``); its columns are ``id`` (primary key), ``name``, ``text`` (the node's document), ``idx`` (the
node's index in the ARK graph, so results map back to graph nodes) and one column per property key found on nodes
of that type. Every relation becomes one relationship table; a relation that joins several (source type, target
type) pairs gets one table with several FROM/TO pairs, so ``MATCH ()-[:has_phenotype]->()`` spans all of them.

:meth:`CypherSchema.describe` renders the schema for a prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..text import did_you_mean

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

# Columns every node table has, in order; ``id`` is the primary key.
BASE_COLUMNS: tuple[tuple[str, str], ...] = (("id", "STRING"), ("name", "STRING"), ("text", "STRING"),
                                             ("idx", "INT64"))
PROPERTY_TYPES = ("STRING", "INT64", "DOUBLE", "BOOLEAN", "STRING[]", "DOUBLE[]")

# Words a label may not be without quoting in Cypher (Kùzu/ladybug and Neo4j); such names get a trailing "_".
_RESERVED = """
ADD ALL ALTER AND ANY AS ASC ASCENDING ATTACH BEGIN BY CALL CASE CAST CHECKPOINT COLUMN COMMENT COMMIT COPY COUNT
CREATE CYCLE DATABASE DBTYPE DEFAULT DELETE DESC DESCENDING DETACH DISTINCT DROP ELSE END ENDS EXISTS EXPLAIN EXPORT
EXTENSION FALSE FOREACH FROM GLOB GRAPH GROUP HEADERS IF IMPORT IN INCREMENT INSTALL IS KEY LIMIT LOAD MACRO MATCH
MAXVALUE MERGE MINVALUE NO NODE NONE NOT NULL ON ONLY OPTIONAL OR ORDER PRIMARY PROFILE PROJECT READ REL REMOVE
RETURN ROLLBACK SEQUENCE SET SHORTEST SINGLE SKIP START STARTS TABLE THEN TO TRAIL TRANSACTION TRUE TYPE UNION
UNINSTALL UNWIND USE WHEN WHERE WITH WRITE XOR YIELD
"""
RESERVED_WORDS = frozenset(_RESERVED.split())


def cypher_identifier(name: str) -> str:
    """``name`` as a plain Cypher identifier: letters, digits and ``_``, not starting with a digit, not reserved."""
    label = re.sub(r"\W+", "_", str(name), flags=re.ASCII).strip("_") or "unnamed"
    if label[0].isdigit():
        label = "t_" + label
    if label.upper() in RESERVED_WORDS:
        label += "_"
    return label


def _unique(name: str, taken: set[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... when already taken (case-insensitive, as table names are)."""
    candidate, n = name, 1
    while candidate.lower() in taken:
        n += 1
        candidate = f"{name}_{n}"
    taken.add(candidate.lower())
    return candidate


@dataclass(frozen=True)
class PropertyColumn:
    """One property column of a node table: its Cypher name, the property key it holds and its type."""

    name: str
    key: str
    type: str


@dataclass(frozen=True)
class NodeTableSpec:
    label: str
    node_type: str
    count: int
    properties: tuple[PropertyColumn, ...] = ()

    @property
    def columns(self) -> list[tuple[str, str]]:
        """All columns as (name, type), base columns first."""
        return [*BASE_COLUMNS, *((p.name, p.type) for p in self.properties)]


@dataclass(frozen=True)
class RelPair:
    """One FROM/TO pair of a relationship table (node table labels) with its edge count."""

    source: str
    target: str
    count: int


@dataclass(frozen=True)
class RelTableSpec:
    label: str
    relation: str
    pairs: tuple[RelPair, ...]

    @property
    def count(self) -> int:
        return sum(p.count for p in self.pairs)


@dataclass
class CypherSchema:
    """Node and relationship tables of a graph exported to a Cypher engine."""

    nodes: list[NodeTableSpec]
    rels: list[RelTableSpec]
    graph_name: str = ""
    _by_type: dict[str, NodeTableSpec] = field(default_factory=dict, init=False, repr=False, compare=False)
    _by_relation: dict[str, RelTableSpec] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_type = {spec.node_type: spec for spec in self.nodes}
        self._by_relation = {spec.relation: spec for spec in self.rels}

    # ----------------------------------------------------------------- lookups
    def node_label(self, node_type: str) -> str:
        """Label of the node table holding ``node_type``; ``KeyError`` names the valid types."""
        try:
            return self._by_type[node_type].label
        except KeyError:
            raise KeyError(f"unknown node type {node_type!r}{did_you_mean(node_type, self._by_type)}; valid: "
                           f"{', '.join(self._by_type)}") from None

    def rel_label(self, relation: str) -> str:
        """Label of the relationship table holding ``relation``; ``KeyError`` names the valid relations."""
        try:
            return self._by_relation[relation].label
        except KeyError:
            raise KeyError(f"unknown relation {relation!r}{did_you_mean(relation, self._by_relation)}; valid: "
                           f"{', '.join(self._by_relation)}") from None

    def node_table(self, label: str) -> NodeTableSpec | None:
        return next((spec for spec in self.nodes if spec.label == label), None)

    def node_type_of(self, label: str) -> str:
        """The node type a node table holds; ``KeyError`` names the valid labels."""
        spec = self.node_table(label)
        if spec is None:
            raise KeyError(f"unknown node label {label!r}; valid: {', '.join(s.label for s in self.nodes)}")
        return spec.node_type

    def rel_table(self, label: str) -> RelTableSpec | None:
        return next((spec for spec in self.rels if spec.label == label), None)

    def labels(self) -> tuple[list[str], list[str]]:
        """(node table labels, relationship table labels)."""
        return [n.label for n in self.nodes], [r.label for r in self.rels]

    # ----------------------------------------------------------------- text
    def describe(self, max_pairs: int = 12) -> str:
        """The schema as prompt text: node tables with their columns, relationship tables with their endpoints."""
        lines = ["Node tables (label: columns):"]
        for spec in self.nodes:
            renamed = f" [node type {spec.node_type!r}]" if spec.label != spec.node_type else ""
            columns = ", ".join(f"{name} {kind}" for name, kind in spec.columns)
            lines.append(f"- {spec.label}{renamed} ({spec.count:,} nodes): {columns}")
        lines.append("Relationship tables (label: (FROM)->(TO) pairs, no properties):")
        for rel in self.rels:
            renamed = f" [relation {rel.relation!r}]" if rel.label != rel.relation else ""
            shown = [f"({p.source})-[:{rel.label}]->({p.target}) {p.count:,} edges" for p in rel.pairs[:max_pairs]]
            more = f"; and {len(rel.pairs) - max_pairs} more pairs" if len(rel.pairs) > max_pairs else ""
            lines.append(f"- {rel.label}{renamed}: " + "; ".join(shown) + more)
        lines.append("Every node has id (the graph's node id), name, text (its description) and idx (its index).")
        return "\n".join(lines)

    # ----------------------------------------------------------------- (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        return {"graph_name": self.graph_name, "nodes": [asdict(n) for n in self.nodes],
                "rels": [asdict(r) for r in self.rels]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CypherSchema:
        nodes = [NodeTableSpec(n["label"], n["node_type"], int(n["count"]),
                               tuple(PropertyColumn(**p) for p in n.get("properties", ())))
                 for n in data["nodes"]]
        rels = [RelTableSpec(r["label"], r["relation"], tuple(RelPair(**p) for p in r["pairs"])) for r in data["rels"]]
        return cls(nodes, rels, data.get("graph_name", ""))


def value_kind(value: Any) -> str:
    """The column kind of one non-null property value (``JSON`` for a nested or mixed one)."""
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INT64" if -(2**63) <= value < 2**63 else "STRING"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, str):
        return "STRING"
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return "STRING[]"
    if isinstance(value, list) and all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return "DOUBLE[]"
    return "JSON"


def type_of_kinds(kinds: set[str]) -> str:
    """The column type holding values of every kind in ``kinds`` (see :func:`infer_property_type`)."""
    if not kinds:
        return "STRING"
    if kinds == {"INT64", "DOUBLE"}:
        return "DOUBLE"
    if len(kinds) > 1:
        return "STRING"
    kind = next(iter(kinds))
    return "STRING" if kind == "JSON" else kind


def infer_property_type(values: Iterable[Any]) -> str:
    """The column type holding every non-null value: the narrowest of :data:`PROPERTY_TYPES` (else ``STRING``)."""
    kinds: set[str] = set()
    for value in values:
        if value is None:
            continue
        kinds.add(value_kind(value))
        if len(kinds) > 1 and kinds != {"INT64", "DOUBLE"}:
            return "STRING"
    return type_of_kinds(kinds)


def convert_property(value: Any, column_type: str) -> Any:
    """A property value as stored in a column of ``column_type`` (mixed or nested values become JSON text)."""
    if value is None:
        return None
    if column_type == "STRING":
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    if column_type == "DOUBLE":
        return float(value)
    if column_type == "DOUBLE[]":
        return [float(v) for v in value]
    return value


def build_schema(graph: KnowledgeGraph, properties_by_type: dict[str, list[dict[str, Any]]] | None = None, *,
                 property_columns: dict[str, tuple[PropertyColumn, ...]] | None = None) -> CypherSchema:
    """The :class:`CypherSchema` of ``graph``; ``properties_by_type`` (node type -> property dicts of its nodes)
    or ``property_columns`` (node type -> its columns, as :class:`PropertyScan` finds them) gives the property
    columns (none when both are omitted)."""
    counts = graph.type_counts()
    taken: set[str] = set()
    nodes: list[NodeTableSpec] = []
    for node_type in graph.node_types:
        label = _unique(cypher_identifier(node_type), taken)
        columns = (property_columns.get(node_type, ()) if property_columns is not None
                   else _property_columns((properties_by_type or {}).get(node_type, [])))
        nodes.append(NodeTableSpec(label, node_type, counts.get(node_type, 0), columns))
    label_of = {spec.node_type: spec.label for spec in nodes}
    pairs: dict[str, list[RelPair]] = {}
    for triple in graph.schema:
        pairs.setdefault(triple.relation, []).append(
            RelPair(label_of[triple.source_type], label_of[triple.target_type], int(triple.count)))
    rels = [RelTableSpec(_unique(cypher_identifier(relation), taken), relation, tuple(pairs[relation]))
            for relation in graph.relation_types if relation in pairs]
    return CypherSchema(nodes, rels, graph.info.name or "")


class PropertyScan:
    """The property columns of one node table, from its nodes' property dicts seen one at a time (in node order):
    the keys in first-seen order and the kinds of value each held, so a graph's rows need not be held at once."""

    def __init__(self) -> None:
        self.kinds: dict[str, set[str]] = {}

    def add(self, row: dict[str, Any]) -> None:
        for key, value in row.items():
            kinds = self.kinds.setdefault(key, set())
            if value is not None:
                kinds.add(value_kind(value))

    def columns(self) -> tuple[PropertyColumn, ...]:
        taken = {name for name, _ in BASE_COLUMNS}
        columns = []
        for key, kinds in self.kinds.items():
            if str(key).startswith("_"):
                continue
            name = cypher_identifier(key)
            if name.lower() in taken:
                name = "p_" + name
            name = _unique(name, taken)
            columns.append(PropertyColumn(name, str(key), type_of_kinds(kinds)))
        return tuple(columns)


def _property_columns(rows: list[dict[str, Any]]) -> tuple[PropertyColumn, ...]:
    scan = PropertyScan()
    for row in rows:
        scan.add(row)
    return scan.columns()
