"""``find_paths(source, target, max_hops, edge_types, limit)``: the paths of length at most 2 between two nodes
(direct edges, then paths through one node, the least connected first)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ark.runtime.node_args import NodeRef
from ark.runtime.tools import ToolResult, ToolSpec

from .nodes import NODE_FIELD, one_as_list

if TYPE_CHECKING:
    from ..graph_tools import GraphTools

NAME = "find_paths"


class FindPathsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: NodeRef = Field(description="One end: " + NODE_FIELD)
    target: NodeRef = Field(description="The other end: " + NODE_FIELD)
    max_hops: Literal[1, 2] = Field(default=2, description="Longest path: 1 (direct edges) or 2 (via one node).")
    edge_types: list[str] | None = Field(default=None, description="Optional: follow only edges of these types.")
    limit: int | None = Field(default=None, ge=1, description="Paths to show (default 10, at most 50).")

    one_name_as_list = field_validator("edge_types", mode="before")(one_as_list)


class PathVia(BaseModel):
    """A two-hop path's intermediate node (index and id)."""

    via: int
    id: str


class FindPathsResult(BaseModel):
    """The two ends, the direct edges (``-rel->`` / ``<-rel-``, None: none), how many two-hop paths there are and
    those shown (``omitted``: those cut by the character cap)."""

    source: int
    target: int
    direct: str | None
    two_hop_total: int
    results: list[PathVia]
    omitted: int | None = None


SPEC = ToolSpec(
    NAME,
    "The paths of length 1 or 2 between two nodes: direct edges, then paths through one intermediate node (the "
    "least connected intermediates first: they are the most specific links).",
    FindPathsArgs, example='{"source": "HP:0001250", "target": "OMIM:607208"}', result_model=FindPathsResult)


def run(box: GraphTools, args: FindPathsArgs) -> ToolResult:
    g = box.graph
    source, target = box.node(args.source), box.node(args.target)
    if isinstance(source, ToolResult):
        return source
    if isinstance(target, ToolResult):
        return target
    rel_codes = box.codes(args.edge_types, "edge_types")
    if isinstance(rel_codes, ToolResult):
        return rel_codes
    rel_array = None if rel_codes is None else np.asarray(rel_codes)
    rows, capped = box.rows(args.limit)
    direct = box.edge_text(source, target, rel_array) if source != target else ""
    middles = np.empty(0, dtype=np.int64)
    if args.max_hops == 2:
        around_source, _ = box.expand(np.asarray([source]), rel_array)
        around_target, _ = box.expand(np.asarray([target]), rel_array)
        middles = np.intersect1d(around_source, around_target)
        middles = middles[(middles != source) & (middles != target)]
        degrees = np.diff(g.indptr)[middles] if len(middles) else middles
        middles = middles[np.lexsort((middles, degrees))] if len(middles) else middles
    head = f"Paths of length ≤ {args.max_hops} between {box.label(source)} and {box.label(target)}"
    data = FindPathsResult(source=source, target=target, direct=direct or None, two_hop_total=int(len(middles)),
                           results=[])
    if not direct and not len(middles):
        return ToolResult(f"{head}: none found." + ("" if args.max_hops == 2 else " Try max_hops=2."), data=data)
    count = f"{'1 direct edge' if direct else 'no direct edge'}, {len(middles)} two-hop path" + (
        "s" if len(middles) != 1 else "")
    header = [f"{head}: {count}:", ""]
    entries: list[list[str]] = []
    if direct:
        entries.append([f"{box.label(source)} {direct} {box.label(target)}"])
    results = []
    for middle in middles[:rows].tolist():
        entries.append([f"{box.label(source)} {box.edge_text(source, middle, rel_array)} {box.label(middle)} "
                        f"{box.edge_text(middle, target, rel_array)} {box.label(target)}"])
        results.append(PathVia(via=middle, id=g.node_id(middle)))
    text, shown = box.fit(header, entries, box.footer(len(results), len(middles), "two-hop paths", "", capped))
    kept = shown - (1 if direct else 0)
    data.results = results[:max(kept, 0)]
    data.omitted = len(results) - len(data.results)
    return ToolResult(text, data=data, node_indices=[source, target, *(r.via for r in data.results)])
