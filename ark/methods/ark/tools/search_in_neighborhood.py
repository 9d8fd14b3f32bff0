"""``search_in_neighborhood(node_index, query, node_type, edge_type)``: the paper's Neighbors(v, q, F)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ark.runtime.tools import ToolResult, ToolSpec

from .neighborhood import filtered_neighborhood, rank_neighborhood
from .observations import count_of, fit_entries, snippet

if TYPE_CHECKING:
    from .toolbox import Toolbox

NAME = "search_in_neighborhood"
UNKNOWN_NAME = "unknown_name"


class SearchInNeighborhoodArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    node_index: int = Field(description="Index of the node whose neighbors to explore, e.g. 123 for [123].")
    query: str | None = Field(default=None, description="Optional keywords; neighbors are ranked by relevance.")
    node_type: str | None = Field(default=None, description="Optional: keep only neighbors of this node type.")
    edge_type: str | None = Field(default=None, description="Optional: keep only edges of this relation type.")


SPEC = ToolSpec(
    NAME,
    "Explore the one-hop neighbors of a node (edges in both directions), optionally filtered by node type and "
    "relation type and ranked by a query. Lines show '-relation-> [index]' for edges from the node and "
    "'[index] ... <-relation-' for edges into it. At most 20 neighbors are shown.",
    SearchInNeighborhoodArgs,
    example='{"node_index": 123, "query": "optional keywords", "node_type": "optional type"}',
)


def hidden_parameters(config) -> frozenset[str] | None:
    """Parameters the ablations of the paper's Table 2 remove, or None when the tool itself is switched off."""
    if not config.neighborhood_tool:
        return None
    hidden = set()
    if not config.neighborhood_query:
        hidden.add("query")
    if not config.neighborhood_filters:
        hidden.update({"node_type", "edge_type"})
    return frozenset(hidden)


def run(box: Toolbox, args: SearchInNeighborhoodArgs) -> ToolResult:
    """Filtered one-hop neighbourhood, both directions, ranked, at most the budget shown.

    ``data``: the centre, the filters, ``total`` neighbours after filtering, ``matching`` (how many match the
    query), and the shown neighbours as ``{"index", "out": [relations centre→node], "in": [node→centre]}``.
    """
    cfg, g = box.config, box.graph
    node = args.node_index
    if not g.is_valid_index(node):
        return box.unknown_node(node)
    query = (args.query or "").strip() if cfg.neighborhood_query else ""
    node_type = args.node_type if cfg.neighborhood_filters and args.node_type else None
    edge_type = args.edge_type if cfg.neighborhood_filters and args.edge_type else None
    type_code = relation = None
    if node_type is not None:
        try:
            node_type = g.resolve_node_type(node_type)
        except ValueError:
            return ToolResult.failure(f"Unknown node type {node_type!r}. Valid node types: {', '.join(g.node_types)}.",
                                      UNKNOWN_NAME, node_type=node_type)
        type_code = g.node_types.index(node_type)
    if edge_type is not None:
        try:
            relation = edge_type = g.resolve_relation(edge_type)
        except ValueError:
            return ToolResult.failure(box.unknown_relation_text(node, edge_type), UNKNOWN_NAME, edge_type=edge_type)
    if cfg.max_neighborhood_calls is not None and box.telemetry.neighborhood_calls >= cfg.max_neighborhood_calls:
        return box.refuse(f"all {cfg.max_neighborhood_calls} neighborhood searches")
    box.telemetry.neighborhood_calls += 1

    nodes, codes, outgoing = filtered_neighborhood(g, node, relation, type_code)
    ranked = rank_neighborhood(g, box.index, nodes, codes, outgoing, query or None, cfg.neighborhood_ranking)
    data = {"center": node, "query": query or None, "node_type": node_type, "edge_type": edge_type,
            "total": ranked.total, "matching": ranked.matching, "results": []}
    filters = [f"query={query!r}"] if query else []
    filters += [f"node_type={node_type}"] if node_type else []
    filters += [f"edge_type={edge_type}"] if edge_type else []
    where = f"Search around {box.label(node)}" + (f" ({', '.join(filters)})" if filters else "")
    if ranked.total == 0:
        box.telemetry.zero_result_calls += 1
        return ToolResult(f"{where} found no results. Consider widening your search or changing the strategy.",
                          data=data)
    matching = ""
    if ranked.matching is not None:
        matching = f" ({ranked.matching} {'matches' if ranked.matching == 1 else 'match'} the query)"
    header = [f"{where} found {count_of(ranked.total, 'result')}{matching}:", ""]
    shown = ranked.nodes[: cfg.neighborhood_budget].tolist()
    terms = box.highlight_terms(query) if query else []
    entries, relations = [], []
    for rank, neighbor in enumerate(shown, start=1):
        out_codes, in_codes = ranked.relations_of(neighbor)
        out_names = [g.relation_types[c] for c in out_codes]
        in_names = [g.relation_types[c] for c in in_codes]
        relations.append((out_names, in_names))
        before = f"-{','.join(out_names)}-> " if out_names else ""
        after = f" <-{','.join(in_names)}-" if in_names else ""
        lines = [f"{rank}. {before}{box.label(neighbor)}{after}"]
        if query:
            context = snippet(g.text(neighbor), terms, cfg.snippet_chars)
            if context:
                lines.append(f"    Context: {context}")
        entries.append(lines)
    footer = []
    if ranked.total > len(shown):
        footer = ["", f"(Showing {len(shown)} of {ranked.total} results. You may want to refine your search.)"]
    text, kept = fit_entries(header, entries, footer, cfg.max_observation_chars)
    data["results"] = [{"index": n, "out": out, "in": inc} for n, (out, inc) in zip(shown[:kept], relations,
                                                                                     strict=False)]
    data["omitted"] = len(shown) - kept
    return ToolResult(text, data=data, node_indices=shown)
