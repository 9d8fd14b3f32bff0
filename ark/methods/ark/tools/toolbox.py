"""ARK's tools bound to one graph and text index, with one trajectory's answer list and telemetry.

:class:`Toolbox` never raises for bad input: malformed JSON, unknown tools, missing fields, unknown node indices and
unknown type or relation names are answered with an observation that says what to send instead
(:class:`~ark.runtime.tools.ToolSet` handles the generic cases and counts repeated and invalid calls, each tool module
its own cases).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ark.arrays import sorted_unique
from ark.graph import KnowledgeGraph
from ark.index.graph_index import TermHighlighter
from ark.runtime.tools import BUDGET, UNKNOWN_NODE, BoundTool, TelemetryRecord, ToolboxBase, ToolResult, ToolSet

from ..options import ToolConfig
from . import add_to_answer, finish, search_in_graph, search_in_neighborhood
from .neighborhood import query_words
from .observations import Detail, Shortened, node_label, suggested

if TYPE_CHECKING:
    from ark.index.graph_index import TextIndex


@dataclass
class Telemetry(TelemetryRecord):
    """Counts over one trajectory's tool calls (``repeated_calls`` and ``invalid_calls`` kept by the tool set)."""

    global_calls: int = 0
    neighborhood_calls: int = 0
    add_calls: int = 0
    finish_calls: int = 0
    zero_result_calls: int = 0
    repeated_calls: int = 0
    invalid_calls: int = 0
    budget_refusals: int = 0


class Toolbox(ToolboxBase[Telemetry]):
    """The ARK tools over one graph and index, with one trajectory's answer list."""

    def __init__(self, graph: KnowledgeGraph, index: TextIndex, config: ToolConfig | None = None, *,
                 allow_unseen_answers: bool = False) -> None:
        self.graph = graph
        self.index = index
        # checked once here: a runtime Protocol isinstance costs ~10 us, too much for every search call
        self._highlighter: TermHighlighter | None = index if isinstance(index, TermHighlighter) else None
        self.config = config or ToolConfig()
        self.answer: list[int] = []
        self.reasoning: dict[int, str] = {}
        self.finished = False
        self.confidence: str | None = None  # what finish() stated
        self.confidence_reason: str | None = None
        # nodes an observation of this trajectory showed; add_to_answer takes only these unless allow_unseen_answers
        # (the paper's unchecked SELECT, for exact reproductions)
        self.seen: set[int] = set()
        self.allow_unseen_answers = allow_unseen_answers
        self.tools = ToolSet(self._bound_tools(), Telemetry())
        warm = getattr(index, "warm_up_in_background", None)
        if warm is not None:  # the first search should not load the compiled kernels (a 1 s stall at 1M nodes)
            warm()

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

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run a tool call (see :class:`ToolboxBase`) and remember the nodes its observation showed."""
        result = self.tools.execute(name, arguments)
        self.seen.update(result.node_indices)
        return result

    # ----------------------------------------------------------------- helpers the tool modules share
    def label(self, node: int, name_chars: int | None = None) -> str:
        """``[index] name (type)``, the name cut to ``name_chars`` (default ``max_name_chars``)."""
        limit = self.config.max_name_chars if name_chars is None else name_chars
        return node_label(node, self.graph.name(node), self.graph.node_type(node), limit)

    def rows(self, nodes: list[int]) -> tuple[list[str], list[str], list[str]]:
        """The names, types and texts of ``nodes`` (a tool call's results)."""
        g = self.graph
        if isinstance(g, KnowledgeGraph):
            return g.rows(nodes)
        return [g.name(n) for n in nodes], [g.node_type(n) for n in nodes], [g.text(n) for n in nodes]

    def full_detail(self) -> Detail:
        return Detail(self.config.snippet_chars, self.config.max_name_chars)

    def note_detail(self, data: search_in_graph.SearchInGraphResult | search_in_neighborhood.SearchInNeighborhoodResult,
                    detail: Detail) -> None:
        """Record in ``data`` how far an observation was shortened to fit its cap (nothing when not at all: the
        result then has no ``shortened`` key)."""
        if detail != self.full_detail():
            data.shortened = Shortened(snippet_chars=detail.snippet_chars, name_chars=detail.name_chars)

    def highlight_terms(self, query: str) -> list[str]:
        """Words to highlight in snippets: the query's tokens and their index terms (stems), computed once per
        call. Asking the index per shown node would tokenize the query again for every node."""
        terms = self._highlighter.highlight_terms(query) if self._highlighter is not None else None
        return terms if terms is not None else query_words(query)

    def unknown_node(self, node: int) -> ToolResult:
        return ToolResult.failure(f"Node {node} does not exist: node indices run from 0 to "
                                  f"{self.graph.num_nodes - 1}. Use search_in_graph to find nodes and their indices.",
                                  UNKNOWN_NODE, node_index=node)

    def unknown_relation_text(self, node: int, names: str | list[str]) -> str:
        g = self.graph
        names = [names] if isinstance(names, str) else names
        here = sorted_unique(np.asarray(g.neighbors(node).relations)).tolist()
        local = ", ".join(g.relation_types[c] for c in here) or "none"
        return (f"Unknown edge type{'s' if len(names) > 1 else ''} {suggested(names, g.relation_types)}. Valid edge "
                f"types: {', '.join(g.relation_types)}. Edge types at node [{node}]: {local}.")

    def refuse(self, what: str) -> ToolResult:
        self.telemetry.budget_refusals += 1
        return ToolResult.failure(f"Budget exhausted: you have used {what}. Add the relevant nodes you found to the "
                                  "answer and finish.", BUDGET)
