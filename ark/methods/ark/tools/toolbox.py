"""ARK's tools bound to one graph and text index, with one trajectory's answer list and telemetry.

:class:`Toolbox` never raises for bad input: malformed JSON, unknown tools, missing fields, unknown node indices and
unknown type or relation names are answered with an observation that says what to send instead
(:class:`~ark.runtime.tools.ToolSet` handles the generic cases, each tool module its own).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ark.arrays import sorted_unique
from ark.graph import KnowledgeGraph
from ark.runtime.tools import BoundTool, ToolResult, ToolSet, parse_arguments, within_limits

from ..options import ToolConfig
from . import add_to_answer, finish, search_in_graph, search_in_neighborhood
from .neighborhood import query_words
from .observations import Detail, node_label

UNKNOWN_NODE = "unknown_node"
BUDGET = "budget"


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
    """The ARK tools over one graph and index, with one trajectory's answer list and telemetry."""

    def __init__(self, graph: KnowledgeGraph, index: Any, config: ToolConfig | None = None) -> None:
        self.graph = graph
        self.index = index
        self.config = config or ToolConfig()
        self.answer: list[int] = []
        self.reasoning: dict[int, str] = {}
        self.telemetry = Telemetry()
        self.finished = False
        self.confidence: str | None = None  # what finish() stated
        self.confidence_reason: str | None = None
        self._seen_calls: set[str] = set()
        self.tools = ToolSet(self._bound_tools())

    def _bound_tools(self) -> list[BoundTool]:
        """The tools the configuration offers (the Table 2 ablations drop the neighbourhood tool or parameters)."""
        bound = [BoundTool(search_in_graph.spec(self.config), lambda args: search_in_graph.run(self, args))]
        hidden = search_in_neighborhood.hidden_parameters(self.config)
        if hidden is not None:
            bound.append(BoundTool(search_in_neighborhood.spec(self.config),
                                   lambda args: search_in_neighborhood.run(self, args), hidden))
        bound.append(BoundTool(add_to_answer.SPEC, lambda args: add_to_answer.run(self, args)))
        bound.append(BoundTool(finish.SPEC, lambda args: finish.run(self, args)))
        return bound

    def openai_tools(self) -> list[dict[str, Any]]:
        return self.tools.openai_schemas()

    def mcp_tools(self) -> list[dict[str, Any]]:
        return self.tools.mcp_schemas()

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run tool ``name`` with its raw JSON ``arguments``; every failure becomes an explanatory observation."""
        name = str(name or "")
        if name in self.tools.tools and within_limits(arguments, self.tools.max_argument_chars):
            self._note_repeat(name, arguments)
        result = self.tools.execute(name, arguments)
        if not result.ok and result.error not in (None, BUDGET):
            self.telemetry.invalid_calls += 1
        return result

    def _note_repeat(self, name: str, arguments: str | dict | None) -> None:
        parsed, problem = parse_arguments(arguments)
        args = parsed if problem is None else arguments
        key = name + "\x00" + (json.dumps(args, sort_keys=True, default=str) if not isinstance(args, str) else args)
        if key in self._seen_calls:
            self.telemetry.repeated_calls += 1
        self._seen_calls.add(key)

    # ----------------------------------------------------------------- helpers the tool modules share
    def search(self, query: str, size: int) -> list[tuple[int, float]]:
        """Global top-``size`` ``(node, score)`` pairs from the index (either result shape it may return)."""
        result = self.index.search(query, size)
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], np.ndarray):
            return [(int(i), float(s)) for i, s in zip(result[0].tolist(), result[1].tolist(), strict=True)]
        return [(int(i), float(s)) for i, s in result]

    def label(self, node: int, name_chars: int | None = None) -> str:
        """``[index] name (type)``, the name cut to ``name_chars`` (default ``max_name_chars``)."""
        limit = self.config.max_name_chars if name_chars is None else name_chars
        return node_label(node, self.graph.name(node), self.graph.node_type(node), limit)

    def full_detail(self) -> Detail:
        return Detail(self.config.snippet_chars, self.config.max_name_chars)

    def note_detail(self, data: dict[str, Any], detail: Detail) -> None:
        """Record in ``data`` how far an observation was shortened to fit its cap (nothing when not at all)."""
        if detail != self.full_detail():
            data["shortened"] = {"snippet_chars": detail.snippet_chars, "name_chars": detail.name_chars}

    def highlight_terms(self, query: str) -> list[str]:
        """Words to highlight in snippets: the query's tokens and their index terms (stems), computed once per
        call. Asking the index per shown node would tokenize the query again for every node."""
        tokenizer = getattr(self.index, "tokenizer", None) or getattr(getattr(self.index, "index", None),
                                                                      "tokenizer", None)
        if tokenizer is None or not hasattr(tokenizer, "surface_tokens"):
            return query_words(query)
        surface = tokenizer.surface_tokens(query)
        stems = [tokenizer.term_of(token) for token in surface]
        return list(dict.fromkeys([*surface, *(t for t in stems if t)]))

    def unknown_node(self, node: int) -> ToolResult:
        return ToolResult.failure(f"Node {node} does not exist: node indices run from 0 to "
                                  f"{self.graph.num_nodes - 1}. Use search_in_graph to find nodes and their indices.",
                                  UNKNOWN_NODE, node_index=node)

    def unknown_relation_text(self, node: int, names: str | list[str]) -> str:
        g = self.graph
        names = [names] if isinstance(names, str) else names
        here = sorted_unique(np.asarray(g.neighbors(node).relations)).tolist()
        local = ", ".join(g.relation_types[c] for c in here) or "none"
        return (f"Unknown edge type{'s' if len(names) > 1 else ''} {', '.join(repr(n) for n in names)}. Valid edge "
                f"types: {', '.join(g.relation_types)}. Edge types at node [{node}]: {local}.")

    def refuse(self, what: str) -> ToolResult:
        self.telemetry.budget_refusals += 1
        return ToolResult.failure(f"Budget exhausted: you have used {what}. Add the relevant nodes you found to the "
                                  "answer and finish.", BUDGET)
