"""``search_in_graph(query, size)``: the paper's global search, Search_G(q, k) (default k = 5, Appendix A.2)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, create_model

from ark.arrays import rounded
from ark.runtime.tools import INVALID_ARGUMENTS, ToolResult, ToolSpec

from ..options import ToolConfig
from .observations import Detail, Shortened, Snippets, count_of, fit_observation, node_labels

if TYPE_CHECKING:
    from .toolbox import Toolbox

NAME = "search_in_graph"


class SearchInGraphArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: str = Field(description="Keywords, an entity's name or an identifier to match against node names and "
                                   "descriptions.")
    size: int | None = Field(default=None, description="Number of results to return.")


class GraphHit(BaseModel):
    """One hit, as the observation lists it."""

    index: int
    score: float


class SearchInGraphResult(BaseModel):
    """What ``search_in_graph`` found: every hit the text shows, best first."""

    query: str
    size: int
    results: list[GraphHit] = []
    shortened: Shortened | None = None  # set only when the observation was shortened


@functools.lru_cache(maxsize=32)
def _args_model(default: int, largest: int) -> type[SearchInGraphArgs]:
    """The argument model whose ``size`` description states this configuration's default and maximum."""
    return create_model(
        "SearchInGraphArgs", __base__=SearchInGraphArgs,
        size=(int | None, Field(default=None, description=f"Number of results to return (default {default}, at most "
                                                          f"{largest}).")),
    )


def spec(config: ToolConfig) -> ToolSpec:
    """The tool as offered under ``config``: its schema and description state the configured sizes."""
    return ToolSpec(
        NAME,
        f"Search the whole graph: the {config.default_global_size} nodes (or `size`, up to {config.max_global_size}) "
        "whose names and text best match the query, as [index] name (type) with a score and a matching snippet. A "
        "node whose name, synonym or identifier is exactly the query comes first. Use it to find the entities the "
        "question names, or nodes matching its description.",
        _args_model(config.default_global_size, config.max_global_size),
        example='{"query": "generalized seizures", "size": 10}',
        result_model=SearchInGraphResult,
    )


SPEC = spec(ToolConfig())


def run(box: Toolbox, args: SearchInGraphArgs) -> ToolResult:
    """Global top-k over all nodes; ``data`` (a :class:`SearchInGraphResult`) lists every hit the text shows."""
    cfg = box.config
    query = args.query.strip()
    if not query:
        return ToolResult.failure("search_in_graph needs a non-empty 'query'.", INVALID_ARGUMENTS)
    if cfg.max_global_calls is not None and box.telemetry.global_calls >= cfg.max_global_calls:
        return box.refuse(f"all {cfg.max_global_calls} global searches")
    box.telemetry.global_calls += 1
    wanted = cfg.default_global_size if args.size is None else args.size
    size = min(max(int(wanted), 1), cfg.max_global_size)
    hits = box.index.search(query, size)
    if not hits:
        box.telemetry.zero_result_calls += 1
        return ToolResult(f"No nodes found for query: {query!r}", data=SearchInGraphResult(query=query, size=size,
                                                                                           results=[]))
    header = [f"Found {count_of(len(hits), 'node')} for query: {query!r}:", ""]
    nodes = [node for node, _ in hits]
    names, types, texts = box.rows(nodes)
    scores = [f" - Score: {score:.3f}" for _, score in hits]
    located = Snippets(box.highlight_terms(query)).locate_all(texts)  # found once, shown at each detail level

    labels: dict[int, list[str]] = {}  # by name width: the levels tried share them

    def render(detail: Detail) -> list[str]:
        shown = labels.get(detail.name_chars)
        if shown is None:
            shown = labels[detail.name_chars] = [
                label + score for label, score in zip(node_labels(nodes, names, types, detail.name_chars), scores,
                                                      strict=True)]
        if not detail.snippet_chars:
            return shown
        lines = []
        for label, context in zip(shown, Snippets.show_all(located, detail.snippet_chars), strict=True):
            lines.append(label)
            if context is not None:
                lines.append("    Context: " + context)
        return lines

    footer = ["", f"(size capped at {cfg.max_global_size})"] if wanted > cfg.max_global_size else []
    text, detail = fit_observation(header, render, footer, cfg.max_observation_chars, cfg.snippet_chars,
                                   cfg.max_name_chars)
    # validated from plain dicts in one call: ~3x cheaper than a GraphHit constructed per hit
    data = SearchInGraphResult.model_validate({"query": query, "size": size, "results": [
        {"index": node, "score": score} for node, score in zip(nodes, rounded([s for _, s in hits], 6), strict=True)]})
    box.note_detail(data, detail)
    return ToolResult(text.rstrip(), data=data, node_indices=nodes)
