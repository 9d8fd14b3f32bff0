"""``search_in_surroundings(node, query, node_types, edge_types, hops, limit)``: the nodes within 1 or 2 hops of one
node, filtered by node and edge types and ranked by a query (the ARK authors' chat app's
``searchInSurroundings{nodeId, query, nodeType, edgeType, k}``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ark.runtime.node_args import NodeRef
from ark.runtime.tools import ToolResult, ToolSpec

from .nodes import NODE_FIELD, one_as_list

if TYPE_CHECKING:
    from ..graph_tools import GraphTools

NAME = "search_in_surroundings"


class SurroundingsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    node: NodeRef = Field(description="The centre node: " + NODE_FIELD)
    query: str | None = Field(default=None, description="Optional keywords; nodes are ranked by relevance (BM25).")
    node_types: list[str] | None = Field(default=None, description="Optional: keep only nodes of these types.")
    edge_types: list[str] | None = Field(default=None, description="Optional: follow only edges of these types.")
    hops: Literal[1, 2] = Field(default=1, description="Search 1 or 2 hops around the node (both directions).")
    limit: int | None = Field(default=None, ge=1, description="Rows to show (default 10, at most 50).")

    one_name_as_list = field_validator("node_types", "edge_types", mode="before")(one_as_list)


class SurroundingNode(BaseModel):
    """One row: the node (index, id), its distance and, at 2 hops, the node it is reached through."""

    index: int
    id: str
    hops: int
    via: int | None
    score: float


class SurroundingsResult(BaseModel):
    """The centre, hops and query; how many nodes the filters kept (``matching``: how many the query matches) and
    the rows shown, best first (``omitted``: rows cut by the character cap)."""

    center: int
    hops: int
    query: str | None
    total: int
    matching: int | None
    results: list[SurroundingNode]
    omitted: int | None = None


SPEC = ToolSpec(
    NAME,
    "Search the nodes within 1 or 2 hops of a node (edges in both directions), optionally only of some node types, "
    "following only some edge types, ranked by a query. Each row shows how the node is reached from the centre.",
    SurroundingsArgs, example='{"node": 123, "query": "seizure", "node_types": ["disease"], "hops": 2}',
    result_model=SurroundingsResult)


def run(box: GraphTools, args: SurroundingsArgs) -> ToolResult:
    g = box.graph
    centre = box.node(args.node)
    if isinstance(centre, ToolResult):
        return centre
    type_codes = box.codes(args.node_types, "node_types")
    rel_codes = box.codes(args.edge_types, "edge_types")
    if isinstance(type_codes, ToolResult):
        return type_codes
    if isinstance(rel_codes, ToolResult):
        return rel_codes
    rows, capped = box.rows(args.limit)
    rel_array = None if rel_codes is None else np.asarray(rel_codes)
    first, _ = box.expand(np.asarray([centre]), rel_array)
    found = [(node, 1, -1) for node in first.tolist() if node != centre]
    if args.hops == 2 and len(first):
        second, parents = box.expand(first, rel_array)
        seen = set(first.tolist()) | {centre}
        found += [(n, 2, p) for n, p in zip(second.tolist(), parents.tolist(), strict=True) if n not in seen]
    candidates = np.asarray([n for n, _, _ in found], dtype=np.int64)
    hops = np.asarray([h for _, h, _ in found], dtype=np.int64)
    via = np.asarray([p for _, _, p in found], dtype=np.int64)
    if type_codes is not None and len(candidates):
        keep = np.isin(g.node_type_codes[candidates], type_codes)
        candidates, hops, via = candidates[keep], hops[keep], via[keep]
    query = (args.query or "").strip()
    matching = None
    if query and len(candidates):
        scores = np.asarray(box.index.score(query, candidates), dtype=np.float64)
        matching = int(np.count_nonzero(scores > 0))
    else:
        scores = np.zeros(len(candidates))
    order = np.lexsort((candidates, hops, -scores))
    filters = [f"query={query!r}"] if query else []
    filters += [f"node_types={','.join(g.node_types[c] for c in type_codes)}"] if type_codes else []
    filters += [f"edge_types={','.join(g.relation_types[c] for c in rel_codes)}"] if rel_codes else []
    where = f"Surroundings of {box.label(centre)} within {args.hops} hop{'s' if args.hops == 2 else ''}" + (
        f" ({', '.join(filters)})" if filters else "")
    data = SurroundingsResult(center=centre, hops=args.hops, query=query or None, total=len(candidates),
                              matching=matching, results=[])
    if not len(candidates):
        return ToolResult(f"{where} found no nodes. Widen the filters or use 2 hops.", data=data)
    match_note = f" ({matching} match the query)" if matching is not None else ""
    header = [f"{where} found {len(candidates)} node{'s' if len(candidates) != 1 else ''}{match_note}:", ""]
    from ark.methods.ark.tools.observations import snippet

    terms = box.terms(query) if query else []
    entries: list[list[str]] = []
    results: list[SurroundingNode] = []
    for rank, position in enumerate(order[:rows].tolist(), start=1):
        node, hop, parent = int(candidates[position]), int(hops[position]), int(via[position])
        if hop == 1:
            route = f"1 hop: {box.edge_text(centre, node, rel_array)}"
        else:
            route = (f"2 hops: {box.edge_text(centre, parent, rel_array)} {box.label(parent)} "
                     f"{box.edge_text(parent, node, rel_array)}")
        score = float(scores[position])
        lines = [f"{rank}. {box.label(node)} | {route}" + (f" | Score: {score:.3f}" if query else "")]
        context = snippet(g.text(node), terms, 160) if terms else None
        if context:
            lines.append(f"    Context: {context}")
        entries.append(lines)
        results.append(SurroundingNode(index=node, id=g.node_id(node), hops=hop, via=parent if hop == 2 else None,
                                       score=round(score, 6)))
    more = " Add a query or filters to refine."
    text, shown = box.fit(header, entries, box.footer(len(entries), len(candidates), "nodes", more, capped))
    data.results = results[:shown]
    data.omitted = len(results) - shown
    return ToolResult(text, data=data, node_indices=[r.index for r in data.results])
