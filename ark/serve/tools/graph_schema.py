"""``graph_schema()``: node and edge types with their counts, and which node types each relation connects."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ark.runtime.tools import ToolResult, ToolSpec

if TYPE_CHECKING:
    from ..graph_tools import GraphTools

NAME = "graph_schema"


class GraphSchemaArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Connection(BaseModel):
    """One schema line: ``source_type -relation-> target_type`` and how many edges it has."""

    source_type: str
    relation: str
    target_type: str
    count: int


class GraphSchemaResult(BaseModel):
    """The graph's name and size, its node and edge types with counts, and the connections shown (most edges
    first; ``omitted``: how many did not fit)."""

    name: str
    nodes: int
    edges: int
    node_types: dict[str, int]
    edge_types: dict[str, int]
    connections: list[Connection]
    omitted: int


SPEC = ToolSpec(NAME, "The graph's schema: node types and edge types with their counts, and which node types each "
                "edge type connects (source -relation-> target).", GraphSchemaArgs, result_model=GraphSchemaResult)


def run(box: GraphTools, _args: GraphSchemaArgs) -> ToolResult:
    g = box.graph
    types = g.type_counts()
    relations = g.relation_counts()
    triples = sorted(g.schema, key=lambda t: -t.count)
    name = g.info.label()
    lines = [f"Graph {name!r}: {g.num_nodes:,} nodes, {g.num_edges:,} edges.",
             "Node types: " + ", ".join(f"{t} ({n:,})" for t, n in types.items()),
             "Edge types: " + ", ".join(f"{r} ({n:,})" for r, n in relations.items()), "Connections:"]
    entries = [[f"  {t.source_type} -{t.relation}-> {t.target_type} ({t.count:,})"] for t in triples]
    text, shown = box.fit(lines, entries, [])
    connections = [Connection(source_type=t.source_type, relation=t.relation, target_type=t.target_type,
                              count=t.count) for t in triples[:shown]]
    data = GraphSchemaResult(name=name, nodes=g.num_nodes, edges=g.num_edges, node_types=types,
                             edge_types=relations, connections=connections, omitted=len(triples) - shown)
    return ToolResult(text, data=data)
