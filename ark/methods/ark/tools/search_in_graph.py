"""``search_in_graph(query, size)``: global text search over every node (the paper's GlobalSearch(q, k))."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from ark.runtime.tools import INVALID_ARGUMENTS, ToolResult, ToolSpec

from .observations import count_of, fit_entries, snippet

if TYPE_CHECKING:
    from .toolbox import Toolbox

NAME = "search_in_graph"


class SearchInGraphArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: str = Field(description="Keywords to match against node names and descriptions.")
    size: int | None = Field(default=None, description="Number of results to return (default 5, at most 30).")


SPEC = ToolSpec(
    NAME,
    "Search the whole graph: the nodes whose text best matches the query (BM25), as [index] name (type) with a "
    "matching snippet. Use it to find entities named in the question or nodes matching its description.",
    SearchInGraphArgs,
    example='{"query": "generalized seizures", "size": 10}',
)


def run(box: Toolbox, args: SearchInGraphArgs) -> ToolResult:
    """Global top-k over all nodes; ``data`` lists the shown hits as ``{"index", "score"}``."""
    cfg = box.config
    query = args.query.strip()
    if not query:
        return ToolResult.failure("search_in_graph needs a non-empty 'query'.", INVALID_ARGUMENTS)
    if cfg.max_global_calls is not None and box.telemetry.global_calls >= cfg.max_global_calls:
        return box.refuse(f"all {cfg.max_global_calls} global searches")
    box.telemetry.global_calls += 1
    wanted = cfg.default_global_size if args.size is None else args.size
    size = min(max(int(wanted), 1), cfg.max_global_size)
    hits = box.search(query, size)
    data = {"query": query, "size": size, "results": []}
    if not hits:
        box.telemetry.zero_result_calls += 1
        return ToolResult(f"No nodes found for query: {query!r}", data=data)
    header = [f"Found {count_of(len(hits), 'node')} for query: {query!r}:", ""]
    terms = box.highlight_terms(query)
    entries = []
    for node, score in hits:
        lines = [f"{box.label(node)} - Score: {score:.3f}"]
        context = snippet(box.graph.text(node), terms, cfg.snippet_chars)
        if context:
            lines.append(f"    Context: {context}")
        entries.append(lines)
    footer = [f"(size capped at {cfg.max_global_size})"] if wanted > cfg.max_global_size else []
    text, shown = fit_entries(header, entries, [""] + footer if footer else [], cfg.max_observation_chars)
    data["results"] = [{"index": node, "score": round(score, 6)} for node, score in hits[:shown]]
    data["omitted"] = len(hits) - shown
    return ToolResult(text.rstrip(), data=data, node_indices=[n for n, _ in hits])
