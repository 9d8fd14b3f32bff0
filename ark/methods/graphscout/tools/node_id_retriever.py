"""``node_id_retriever(queries, topk=2)``: from mentions to node ids by similarity (GraphScout §3.2.2).

Observation, one block per query, best first::

    'Marfan syndrome':
      OMIM:154700  Marfan syndrome  (disease)  score 1.000
      OMIM:609192  Loeys-Dietz syndrome  (disease)  score 0.614

The type shown is the node's Cypher label (what a query names it by). ``data`` (a :class:`NodeIdRetrieverResult`)
lists the shown entries as :class:`RetrievedNode` s.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ark.runtime.tools import INVALID_ARGUMENTS, ToolResult, ToolSpec, decode_json_string
from ark.text import clean_inline

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph
    from ark.index.graph_index import TextIndex

    from .toolbox import Toolbox

NAME = "node_id_retriever"
NAME_CHARS = 120


class NodeIdRetrieverArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    queries: list[str] = Field(description="Mentions to look up, e.g. ['Marfan syndrome', 'FBN1'].")
    topk: int | None = Field(default=None, description="Nodes returned per query (default 2).")

    @field_validator("queries", mode="before")
    @classmethod
    def _one_or_many(cls, value: object) -> object:
        value = decode_json_string(value)
        return [value] if isinstance(value, str) else value


class RetrievedNode(BaseModel):
    """One shown entry: the query it answers and the node (index, id, type, Cypher label, name, score)."""

    query: str
    index: int
    node_id: str
    type: str
    label: str
    name: str
    score: float


class NodeIdRetrieverResult(BaseModel):
    """The queries run, the ``topk`` used and every shown entry, query by query, best first."""

    topk: int
    queries: list[str]
    results: list[RetrievedNode]


SPEC = ToolSpec(
    NAME,
    "Find node ids by similarity to short mentions (batch): for each query, the top nodes with id, type (the Cypher "
    "label), name and score. Use it to ground the entities of the question before querying the graph.",
    NodeIdRetrieverArgs,
    example='{"queries": ["Marfan syndrome", "FBN1"], "topk": 2}',
    result_model=NodeIdRetrieverResult,
)


def run(box: Toolbox, args: NodeIdRetrieverArgs) -> ToolResult:
    """Top-k nodes per query; the retrieved nodes are what this call touched."""
    cfg = box.config.retriever
    queries = [q.strip() for q in args.queries if isinstance(q, str) and q.strip()]
    if not queries:
        return ToolResult.failure(f"{NAME} needs a non-empty list of 'queries', e.g. {SPEC.example}.",
                                  INVALID_ARGUMENTS)
    notes = []
    if len(queries) > cfg.max_queries:
        notes.append(f"(only the first {cfg.max_queries} of {len(queries)} queries were run)")
        queries = queries[:cfg.max_queries]
    wanted = cfg.default_topk if args.topk is None else args.topk
    topk = min(max(int(wanted), 1), cfg.max_topk)
    if wanted > cfg.max_topk:
        notes.append(f"(topk capped at {cfg.max_topk})")
    box.telemetry.retriever_calls += 1
    g = box.graph
    lines, hits = list_nodes(g, box.index, box.schema, queries, topk)
    results = [RetrievedNode(query=hit.query, index=hit.node, node_id=g.node_id(hit.node), type=g.node_type(hit.node),
                             label=hit.label, name=g.name(hit.node), score=round(hit.score, 6)) for hit in hits]
    text = "\n".join([*lines, *notes])
    box.touch(hit.node for hit in hits)
    box.show(hit.node for hit in hits)  # every listed node is in the observation
    return ToolResult(text, data=NodeIdRetrieverResult(topk=topk, queries=queries, results=results),
                      node_indices=[hit.node for hit in hits])


@dataclass(frozen=True)
class NodeHit:
    """One listed node: the query that found it, the node, its similarity and its Cypher label."""

    query: str
    node: int
    score: float
    label: str


def list_nodes(graph: KnowledgeGraph, index: TextIndex, schema: Any, queries: list[str], topk: int,
               name_chars: int = NAME_CHARS) -> tuple[list[str], list[NodeHit]]:
    """The observation's lines (one block per query, best first) and the nodes listed: the one lookup behind this
    tool and the quiz scout's ``node_id_retriever`` (:mod:`..quiz.scout_tools`), which differ only in their limits,
    names' width and the record kept per node. ``schema`` maps a node type to its Cypher label (None: the type)."""
    lines: list[str] = []
    hits: list[NodeHit] = []
    for query in queries:
        lines.append(f"{query!r}:")
        found = index.search(query, topk)
        if not found:
            lines.append("  (no nodes found)")
        for node, score in found:
            node_type = graph.node_type(node)
            label = schema.node_label(node_type) if schema is not None else node_type
            name = clean_inline(graph.name(node) or "", name_chars)
            lines.append(f"  {graph.node_id(node)}  {name}  ({label})  score {score:.3f}")
            hits.append(NodeHit(query, node, score, label))
    return lines, hits
