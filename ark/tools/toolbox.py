"""Executes the agent's tool calls against a graph and a text index, keeping one trajectory's answer state.

:class:`Toolbox` never raises for bad input: malformed JSON, unknown tools, missing fields, unknown node indices
and unknown type or relation names are answered with an observation that says what to send instead.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from pydantic import ValidationError

from ark.graph import KnowledgeGraph

from .config import ToolConfig
from .neighborhood import filtered_neighborhood, query_words, rank_neighborhood
from .observations import clean_inline, count_of, fit_lines, node_label, snippet
from .specs import (
    ADD_TO_ANSWER,
    FINISH,
    SEARCH_IN_GRAPH,
    SEARCH_IN_NEIGHBORHOOD,
    TOOL_SPECS,
    AddToAnswerArgs,
    FinishArgs,
    SearchInGraphArgs,
    SearchInNeighborhoodArgs,
    enabled_specs,
    to_openai_tools,
)

_EXAMPLES = {
    SEARCH_IN_GRAPH: '{"query": "generalized seizures", "size": 10}',
    SEARCH_IN_NEIGHBORHOOD: '{"node_index": 123, "query": "optional keywords", "node_type": "optional type"}',
    ADD_TO_ANSWER: '{"answer_nodes": [{"node_index": 123, "reasoning": "why it answers"}]}',
    FINISH: "{}",
}


@dataclass
class ToolOutcome:
    """What one tool call produced: the observation text and facts the loop and telemetry need."""

    text: str
    ok: bool = True
    node_indices: list[int] = field(default_factory=list)
    finished: bool = False
    error: str | None = None  # invalid_json | invalid_arguments | unknown_tool | unknown_node | unknown_name | budget


@dataclass
class Telemetry:
    """Counts over one trajectory's tool calls."""

    global_calls: int = 0
    neighborhood_calls: int = 0
    add_calls: int = 0
    finish_calls: int = 0
    zero_result_calls: int = 0
    repeated_calls: int = 0
    invalid_calls: int = 0
    budget_refusals: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class Toolbox:
    """The four tools over one graph and index, with one trajectory's answer list and telemetry."""

    def __init__(self, graph: KnowledgeGraph, index: Any, config: ToolConfig | None = None) -> None:
        self.graph = graph
        self.index = index
        self.config = config or ToolConfig()
        self.answer: list[int] = []
        self.reasoning: dict[int, str] = {}
        self.telemetry = Telemetry()
        self.finished = False
        self._seen_calls: set[str] = set()
        self._enabled = {spec.name for spec, _ in enabled_specs(self.config)}

    def openai_tools(self) -> list[dict[str, Any]]:
        return to_openai_tools(self.config)

    # ----------------------------------------------------------------- dispatch
    def execute(self, name: str, arguments: str | dict | None) -> ToolOutcome:
        """Run tool ``name`` with its raw JSON ``arguments``; every failure becomes an explanatory observation."""
        outcome = self._execute(str(name or ""), arguments)
        if not outcome.ok and outcome.error not in (None, "budget"):
            self.telemetry.invalid_calls += 1
        return outcome

    def _execute(self, name: str, arguments: str | dict | None) -> ToolOutcome:
        if name not in self._enabled:
            return ToolOutcome(f"Unknown tool {name!r}. Available tools: {', '.join(sorted(self._enabled))}.",
                               ok=False, error="unknown_tool")
        raw, parse_error = _parse_arguments(arguments)
        self._note_repeat(name, raw if parse_error is None else arguments)
        if parse_error is not None:
            return ToolOutcome(f"Could not read the arguments of {name} ({parse_error}). Send a JSON object such "
                               f"as {_EXAMPLES[name]}.", ok=False, error="invalid_json")
        spec = TOOL_SPECS[name]
        try:
            args = spec.args_model.model_validate(raw)
        except ValidationError as exc:
            return ToolOutcome(f"Invalid arguments for {name}: {_describe(exc)}. Example: {_EXAMPLES[name]}.",
                               ok=False, error="invalid_arguments")
        handler = {SEARCH_IN_GRAPH: self.search_in_graph, SEARCH_IN_NEIGHBORHOOD: self.search_in_neighborhood,
                   ADD_TO_ANSWER: self.add_to_answer, FINISH: self.finish}[name]
        return handler(args)

    def _note_repeat(self, name: str, args: Any) -> None:
        key = name + "\x00" + (json.dumps(args, sort_keys=True, default=str) if not isinstance(args, str) else args)
        if key in self._seen_calls:
            self.telemetry.repeated_calls += 1
        self._seen_calls.add(key)

    # ----------------------------------------------------------------- tools
    def search_in_graph(self, args: SearchInGraphArgs) -> ToolOutcome:
        """Global BM25 top-k over all nodes."""
        cfg = self.config
        query = args.query.strip()
        if not query:
            return ToolOutcome("search_in_graph needs a non-empty 'query'.", ok=False, error="invalid_arguments")
        if cfg.max_global_calls is not None and self.telemetry.global_calls >= cfg.max_global_calls:
            return self._refuse(f"all {cfg.max_global_calls} global searches")
        self.telemetry.global_calls += 1
        wanted = cfg.default_global_size if args.size is None else args.size
        size = min(max(int(wanted), 1), cfg.max_global_size)
        hits = _hits(self.index.search(query, size))
        if not hits:
            self.telemetry.zero_result_calls += 1
            return ToolOutcome(f"No nodes found for query: {query!r}", node_indices=[])
        header = [f"Found {count_of(len(hits), 'node')} for query: {query!r}:", ""]
        lines = []
        terms = self._terms(query)
        for node, score in hits:
            lines.append(f"{self._label(node)} - Score: {score:.3f}")
            context = snippet(self.graph.text(node), terms, cfg.snippet_chars)
            if context:
                lines.append(f"    Context: {context}")
        footer = [f"(size capped at {cfg.max_global_size})"] if wanted > cfg.max_global_size else []
        text = fit_lines(header + lines, [""] + footer if footer else [], cfg.max_observation_chars)
        return ToolOutcome(text.rstrip(), node_indices=[n for n, _ in hits])

    def search_in_neighborhood(self, args: SearchInNeighborhoodArgs) -> ToolOutcome:
        """Neighbors(v, q, F): filtered one-hop neighborhood, both directions, ranked, at most the budget shown."""
        cfg, g = self.config, self.graph
        node = args.node_index
        if not g.is_valid_index(node):
            return self._unknown_node(node)
        query = (args.query or "").strip() if cfg.neighborhood_query else ""
        node_type = args.node_type if cfg.neighborhood_filters and args.node_type else None
        edge_type = args.edge_type if cfg.neighborhood_filters and args.edge_type else None
        type_code = relation = None
        if node_type is not None:
            try:
                node_type = g.resolve_node_type(node_type)
            except ValueError:
                return ToolOutcome(f"Unknown node type {node_type!r}. Valid node types: {', '.join(g.node_types)}.",
                                   ok=False, error="unknown_name")
            type_code = g.node_types.index(node_type)
        if edge_type is not None:
            try:
                relation = edge_type = g.resolve_relation(edge_type)
            except ValueError:
                return ToolOutcome(self._unknown_relation(node, edge_type), ok=False, error="unknown_name")
        if cfg.max_neighborhood_calls is not None and self.telemetry.neighborhood_calls >= cfg.max_neighborhood_calls:
            return self._refuse(f"all {cfg.max_neighborhood_calls} neighborhood searches")
        self.telemetry.neighborhood_calls += 1

        nodes, codes, outgoing = filtered_neighborhood(g, node, relation, type_code)
        ranked = rank_neighborhood(g, self.index, nodes, codes, outgoing, query or None, cfg.neighborhood_ranking)
        filters = [f"query={query!r}"] if query else []
        filters += [f"node_type={node_type}"] if node_type else []
        filters += [f"edge_type={edge_type}"] if edge_type else []
        where = f"Search around {self._label(node)}" + (f" ({', '.join(filters)})" if filters else "")
        if ranked.total == 0:
            self.telemetry.zero_result_calls += 1
            return ToolOutcome(f"{where} found no results. Consider widening your search or changing the strategy.")
        matching = ""
        if ranked.matching is not None:
            matching = f" ({ranked.matching} {'matches' if ranked.matching == 1 else 'match'} the query)"
        header = [f"{where} found {count_of(ranked.total, 'result')}{matching}:", ""]
        shown = ranked.nodes[: cfg.neighborhood_budget].tolist()
        lines = []
        terms = self._terms(query) if query else []
        for rank, neighbor in enumerate(shown, start=1):
            out_codes, in_codes = ranked.relations_of(neighbor)
            before = f"-{','.join(g.relation_types[c] for c in out_codes)}-> " if out_codes else ""
            after = f" <-{','.join(g.relation_types[c] for c in in_codes)}-" if in_codes else ""
            lines.append(f"{rank}. {before}{self._label(neighbor)}{after}")
            if query:
                context = snippet(g.text(neighbor), terms, cfg.snippet_chars)
                if context:
                    lines.append(f"    Context: {context}")
        footer = []
        if ranked.total > len(shown):
            footer = ["", f"(Showing {len(shown)} of {ranked.total} results. You may want to refine your search.)"]
        text = fit_lines(header + lines, footer, cfg.max_observation_chars)
        return ToolOutcome(text, node_indices=shown)

    def add_to_answer(self, args: AddToAnswerArgs) -> ToolOutcome:
        """Append nodes to the answer list (first addition wins the position)."""
        cfg, g = self.config, self.graph
        self.telemetry.add_calls += 1
        if not args.answer_nodes:
            return ToolOutcome("answer_nodes is empty: pass at least one {node_index, reasoning}.",
                               ok=False, error="invalid_arguments")
        added, repeated, missing, refused = [], [], [], []
        for item in args.answer_nodes:
            node = item.node_index
            if not g.is_valid_index(node):
                missing.append(node)
            elif node in self.reasoning:
                repeated.append(node)
            elif cfg.max_answer_nodes is not None and len(self.answer) >= cfg.max_answer_nodes:
                refused.append(node)
            else:
                self.answer.append(node)
                self.reasoning[node] = item.reasoning
                added.append(node)
        lines = []
        if added:
            lines.append("Added the following nodes to the answer:")
            for node in added:
                lines.append(f"- {self._label(node)}")
                if self.reasoning[node]:
                    lines.append(f"  Reasoning: {clean_inline(self.reasoning[node], 300)}")
        if repeated:
            lines.append("Already in the answer: " + ", ".join(f"[{n}]" for n in repeated))
        if missing:
            lines.append("Not found (no such node index): " + ", ".join(str(n) for n in missing)
                         + f". Valid indices are 0 to {g.num_nodes - 1}; use indices shown by the search tools.")
        if refused:
            lines.append(f"Not added, the answer is full ({cfg.max_answer_nodes} nodes): "
                         + ", ".join(f"[{n}]" for n in refused))
            self.telemetry.budget_refusals += 1
        lines.append(f"The answer now has {count_of(len(self.answer), 'node')}.")
        text = fit_lines(lines, [], cfg.max_observation_chars)
        error = None if added or repeated else ("unknown_node" if missing else "budget")
        return ToolOutcome(text, ok=error is None, node_indices=added, error=error)

    def finish(self, args: FinishArgs) -> ToolOutcome:
        """End the trajectory."""
        self.telemetry.finish_calls += 1
        self.finished = True
        count = len(self.answer)
        return ToolOutcome(f"Finished. The answer has {count_of(count, 'node')}.", finished=True)

    # ----------------------------------------------------------------- helpers
    def _label(self, node: int) -> str:
        return node_label(node, self.graph.name(node), self.graph.node_type(node), self.config.max_name_chars)

    def _terms(self, query: str) -> list[str]:
        """Words to highlight in snippets: the query's tokens and their index terms (stems), computed once per
        call. Asking the index per shown node would tokenize the query again for every node."""
        tokenizer = getattr(self.index, "tokenizer", None) or getattr(getattr(self.index, "index", None),
                                                                      "tokenizer", None)
        if tokenizer is None or not hasattr(tokenizer, "surface_tokens"):
            return query_words(query)
        surface = tokenizer.surface_tokens(query)
        stems = [tokenizer.term_of(token) for token in surface]
        return list(dict.fromkeys([*surface, *(t for t in stems if t)]))

    def _unknown_node(self, node: int) -> ToolOutcome:
        return ToolOutcome(f"Node {node} does not exist: node indices run from 0 to {self.graph.num_nodes - 1}. "
                           "Use search_in_graph to find nodes and their indices.", ok=False, error="unknown_node")

    def _unknown_relation(self, node: int, name: str) -> str:
        g = self.graph
        here = np.unique(np.asarray(g.neighbors(node).relations)).tolist()
        local = ", ".join(g.relation_types[c] for c in here) or "none"
        return (f"Unknown edge type {name!r}. Valid edge types: {', '.join(g.relation_types)}. "
                f"Edge types at node [{node}]: {local}.")

    def _refuse(self, what: str) -> ToolOutcome:
        self.telemetry.budget_refusals += 1
        return ToolOutcome(f"Budget exhausted: you have used {what}. Add the relevant nodes you found to the answer "
                           "and finish.", ok=False, error="budget")


def _hits(result: Any) -> list[tuple[int, float]]:
    """Accept both index result shapes: a list of (id, score) pairs or an (ids, scores) pair of arrays."""
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], np.ndarray):
        return [(int(i), float(s)) for i, s in zip(result[0].tolist(), result[1].tolist(), strict=True)]
    return [(int(i), float(s)) for i, s in result]


def _parse_arguments(arguments: str | dict | None) -> tuple[Any, str | None]:
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}, None
    if isinstance(arguments, dict):
        return arguments, None
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} at position {exc.pos}"
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    return value, None


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        message = "missing required field" if error["type"] == "missing" else error["msg"]
        parts.append(f"{where}: {message}")
    return "; ".join(parts)
