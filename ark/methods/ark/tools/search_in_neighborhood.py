"""``search_in_neighborhood(node_index, query, node_types, edge_types)``: the paper's Neighbors(v, q, F).

F = (F_V, F_E) are sets: ``node_types`` and ``edge_types`` take lists (a neighbour is kept when its type is one of
``node_types`` and an edge linking it to the centre has one of ``edge_types``). The single-value forms
``node_type`` / ``edge_type`` (a string, as earlier versions and some models send) are still accepted and join the
sets; they are not shown in the schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ark.runtime.node_args import NodeIndex
from ark.runtime.tools import UNKNOWN_NAME, ToolResult, ToolSpec, decode_json_string

from ..options import ToolConfig
from .neighborhood import filtered_neighborhood, rank_neighborhood
from .observations import Detail, Shortened, Snippets, count_of, fit_observation, suggested

if TYPE_CHECKING:
    from .toolbox import Toolbox

NAME = "search_in_neighborhood"
SINGLE_VALUE_ALIASES = frozenset({"node_type", "edge_type"})


def _as_list(value: object) -> object:
    """``"disease"`` -> ``["disease"]``; a JSON-encoded list is decoded; None and lists pass."""
    value = decode_json_string(value)
    if isinstance(value, str):
        return [value] if value.strip() else None
    return value


class SearchInNeighborhoodArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    node_index: NodeIndex = Field(description="Index of the node whose neighbors to explore, e.g. 123 for [123].")
    query: str | None = Field(default=None, description="Optional keywords; neighbors are ranked by relevance.")
    node_types: list[str] | None = Field(default=None, description="Optional: keep only neighbors of these node "
                                         "types, e.g. [\"disease\"] or [\"disease\", \"gene\"].")
    edge_types: list[str] | None = Field(default=None, description="Optional: keep only neighbors linked by these "
                                         "relation types.")
    offset: int = Field(default=0, ge=0, description="Skip this many of the ranked neighbors (the next page).")
    node_type: list[str] | None = Field(default=None, description="Same as node_types (one type).")
    edge_type: list[str] | None = Field(default=None, description="Same as edge_types (one relation).")

    @field_validator("node_types", "edge_types", "node_type", "edge_type", mode="before")
    @classmethod
    def _lists(cls, value: object) -> object:
        return _as_list(value)

    def wanted(self, plural: str, single: str) -> list[str] | None:
        """The union of a set filter and its single-value alias, in the order given (None when neither)."""
        names = [*(getattr(self, plural) or []), *(getattr(self, single) or [])]
        names = [n.strip() for n in names if isinstance(n, str) and n.strip()]
        return list(dict.fromkeys(names)) or None


class Neighbour(BaseModel):
    """One shown neighbour: its index and the relations centre→node (``out``) and node→centre (``in``)."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)

    index: int
    out: list[str]
    in_: list[str] = Field(alias="in")


class SearchInNeighborhoodResult(BaseModel):
    """What ``search_in_neighborhood`` found around ``center`` (the keys of the written record, in its order)."""

    center: int
    query: str | None
    node_types: list[str] | None
    edge_types: list[str] | None
    total: int
    matching: int | None
    results: list[Neighbour] = []
    offset: int | None = None  # set only when something was shown
    shortened: Shortened | None = None  # set only when the observation was shortened


def spec(config: ToolConfig) -> ToolSpec:
    """The tool as offered under ``config`` (its description states the neighbour budget)."""
    return ToolSpec(
        NAME,
        "Explore the one-hop neighbors of a node (edges in both directions), optionally filtered to sets of node "
        "types and relation types and ranked by a query. Lines show '-relation-> [index]' for edges from the node "
        f"and '[index] ... <-relation-' for edges into it. The best {config.neighborhood_budget} neighbors are "
        "shown.",
        SearchInNeighborhoodArgs,
        example='{"node_index": 123, "query": "optional keywords", "node_types": ["optional type"]}',
        result_model=SearchInNeighborhoodResult,
    )


SPEC = spec(ToolConfig())


def hidden_parameters(config) -> frozenset[str] | None:
    """Parameters not shown in the schema (the single-value aliases, and those the ablations of the paper's Table 2
    remove), or None when the tool itself is switched off."""
    if not config.neighborhood_tool:
        return None
    hidden = set(SINGLE_VALUE_ALIASES)
    if not config.neighborhood_paging:
        hidden.add("offset")
    if not config.neighborhood_query:
        hidden.add("query")
    if not config.neighborhood_filters:
        hidden.update({"node_types", "edge_types"})
    return frozenset(hidden)


def _resolve(names: list[str] | None, resolve, valid: list[str]) -> tuple[list[str] | None, list[str]]:
    """Canonical names and the names that are not valid."""
    if not names:
        return None, []
    found, unknown = [], []
    for name in names:
        try:
            found.append(resolve(name))
        except ValueError:
            unknown.append(name)
    return list(dict.fromkeys(found)), unknown


def run(box: Toolbox, args: SearchInNeighborhoodArgs) -> ToolResult:
    """Filtered one-hop neighbourhood, both directions, ranked, the best ``neighborhood_budget`` shown.

    ``data``: the centre, the query, the filters (``node_types``, ``edge_types``: canonical names or None),
    ``total`` neighbours after filtering, ``matching`` (how many match the query), and every shown neighbour as
    ``{"index", "out": [relations centre→node], "in": [node→centre]}``.
    """
    cfg, g = box.config, box.graph
    node = args.node_index
    if not g.is_valid_index(node):
        return box.unknown_node(node)
    query = (args.query or "").strip() if cfg.neighborhood_query else ""
    filters = cfg.neighborhood_filters
    node_types, unknown_types = _resolve(args.wanted("node_types", "node_type") if filters else None,
                                         g.resolve_node_type, g.node_types)
    if unknown_types:
        return ToolResult.failure(f"Unknown node type{'s' if len(unknown_types) > 1 else ''} "
                                  f"{suggested(unknown_types, g.node_types)}. Valid node types: "
                                  f"{', '.join(g.node_types)}.", UNKNOWN_NAME, node_types=unknown_types)
    edge_types, unknown_edges = _resolve(args.wanted("edge_types", "edge_type") if filters else None,
                                         g.resolve_relation, g.relation_types)
    if unknown_edges:
        return ToolResult.failure(box.unknown_relation_text(node, unknown_edges), UNKNOWN_NAME,
                                  edge_types=unknown_edges)
    if cfg.max_neighborhood_calls is not None and box.telemetry.neighborhood_calls >= cfg.max_neighborhood_calls:
        return box.refuse(f"all {cfg.max_neighborhood_calls} neighborhood searches")
    box.telemetry.neighborhood_calls += 1
    box.seen.add(node)  # the observation names the centre

    type_codes = [g.node_types.index(t) for t in node_types] if node_types else None
    nodes, codes, outgoing = filtered_neighborhood(g, node, edge_types, type_codes)
    ranked = rank_neighborhood(g, box.index, nodes, codes, outgoing, query or None, cfg.neighborhood_ranking,
                               limit=args.offset + cfg.neighborhood_budget)  # a hub is never fully sorted
    data = SearchInNeighborhoodResult(center=node, query=query or None, node_types=node_types,
                                      edge_types=edge_types, total=ranked.total, matching=ranked.matching, results=[])
    shown_filters = [f"query={query!r}"] if query else []
    shown_filters += [f"node_types={','.join(node_types)}"] if node_types else []
    shown_filters += [f"edge_types={','.join(edge_types)}"] if edge_types else []
    suffix = f" ({', '.join(shown_filters)})" if shown_filters else ""
    if ranked.total == 0:
        box.telemetry.zero_result_calls += 1
        return ToolResult(f"Search around {box.label(node)}{suffix} found no results. Consider widening your search "
                          "or changing the strategy.", data=data)
    matching = ""
    if ranked.matching is not None:
        matching = f" ({ranked.matching} {'matches' if ranked.matching == 1 else 'match'} the query)"
    offset = args.offset
    shown = ranked.nodes[offset: offset + cfg.neighborhood_budget].tolist()
    data.offset = offset
    snippets = Snippets(box.highlight_terms(query) if query else [])
    relations = []
    for neighbor in shown:
        out_codes, in_codes = ranked.relations_of(neighbor)
        relations.append(([g.relation_types[c] for c in out_codes], [g.relation_types[c] for c in in_codes]))

    def render(detail: Detail) -> list[str]:
        lines = []
        for rank, (neighbor, (out_names, in_names)) in enumerate(zip(shown, relations, strict=True),
                                                                start=offset + 1):
            before = f"-{','.join(out_names)}-> " if out_names else ""
            after = f" <-{','.join(in_names)}-" if in_names else ""
            lines.append(f"{rank}. {before}{box.label(neighbor, detail.name_chars)}{after}")
            if query and detail.snippet_chars:
                context = snippets(g.text(neighbor), detail.snippet_chars)
                if context:
                    lines.append(f"    Context: {context}")
        return lines

    footer = []
    if ranked.total > len(shown):
        where = f"results {offset + 1}-{offset + len(shown)}" if offset else f"{len(shown)}"
        footer = ["", f"(Showing {where} of {ranked.total} results. You may want to refine your search.)"]

    header = [f"Search around {box.label(node)}{suffix} found {count_of(ranked.total, 'result')}{matching}:", ""]
    text, detail = fit_observation(header, render, footer, cfg.max_observation_chars, cfg.snippet_chars,
                                   cfg.max_name_chars)
    data.results = [Neighbour(index=n, out=out, in_=inc) for n, (out, inc) in zip(shown, relations, strict=True)]
    box.note_detail(data, detail)
    return ToolResult(text, data=data, node_indices=shown)
