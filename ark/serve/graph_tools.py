"""The graph tools an outside agent calls (``ark mcp``, and ``POST /api/tools/NAME`` of ``ark serve``).

- ARK's own exploration tools (``search_in_graph``, ``search_in_neighborhood``, and whatever else ARK's
  :class:`~ark.methods.ark.tools.Toolbox` offers except its answer-list tools), with the schemas
  (:meth:`Toolbox.mcp_tools`) and observations the agent gets: a call runs in a fresh toolbox, so nothing carries over
  between calls (no budgets, no answer list).
- ``get_node``: one node by id or index: text, properties and neighbour counts by relation and type.
- ``graph_schema``: node and edge types with counts, and which types each relation connects.
- ``search_in_surroundings``: the nodes within 1 or 2 hops of one node, filtered by node and edge types and ranked
  by a query (the ARK authors' chat app's ``searchInSurroundings{nodeId, query, nodeType, edgeType, k}``).
- ``find_paths``: the paths of length at most 2 between two nodes (our addition).
- ``retrieve``: evidence for a question from any registered method (:mod:`ark.serve.questions`): the ranked nodes
  with what supports each, never a generated answer.

Each tool is a module of :mod:`ark.serve.tools`, as ARK's are of :mod:`ark.methods.ark.tools`: its name, argument
model, result model (MCP's ``outputSchema``), :class:`~ark.runtime.tools.ToolSpec` and handler returning a
:class:`~ark.runtime.tools.ToolResult` (``text`` for a model, ``data`` for programs); :class:`GraphTools` binds them
to the served graph (the helpers they share are its methods), dispatched by :class:`~ark.runtime.tools.ToolSet`: bad
or oversized arguments get the same explanatory refusals the agent gets.
Results are bounded: at most :attr:`ResultLimits.max_rows` rows (a call's ``limit`` is capped to it, and says so)
and :attr:`ResultLimits.max_chars` characters of text. Everything is read-only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ark.graph.csr import row_positions
from ark.runtime.tools import UNKNOWN_NAME, UNKNOWN_NODE, BoundTool, McpToolSchema, ToolResult, ToolSet
from ark.serve.tool_state import GraphState

from .tools import find_paths, get_node, graph_schema, retrieve, search_in_surroundings
from .tools.get_node import GetNodeArgs, GetNodeResult
from .tools.graph_schema import GraphSchemaArgs
from .tools.nodes import NodeNotFound, resolve_node

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph
    from ark.index.graph_index import TextIndex
    from ark.methods.ark.tools import Toolbox
    from ark.runtime.node_args import NodeRef

    from .questions import QuestionService

__all__ = ["GetNodeArgs", "GetNodeResult", "GraphSchemaArgs", "GraphTools", "NodeNotFound", "ResultLimits",
           "resolve_node"]

AGENT_STATE_TOOLS = frozenset({"add_to_answer", "finish"})  # one trajectory's answer list: nothing to read


@dataclass(frozen=True)
class ResultLimits:
    """Bounds on every result (users of Cypher MCP servers asked for these after overflowing their context)."""

    max_rows: int = 50
    max_chars: int = 6000
    default_rows: int = 10


def _as_text(arguments: str | dict | None) -> str | None:
    """Arguments as the JSON text a model would send, so the size limits apply to an HTTP client's object too."""
    return arguments if isinstance(arguments, str) or arguments is None else json.dumps(arguments)


class GraphTools:
    """The tools over one graph and its BM25 index (see the module doc); ``questions`` serves ``retrieve``."""

    def __init__(self, graph: KnowledgeGraph, index: TextIndex, limits: ResultLimits | None = None,
                 questions: QuestionService | None = None) -> None:
        from ark.methods.ark.options import ToolConfig

        self.state = GraphState(graph, index, questions)  # follows the graph's versions
        self.limits = lim = limits or ResultLimits()
        self.questions = questions
        self.tool_config = ToolConfig(max_observation_chars=lim.max_chars,
                                      max_global_size=min(ToolConfig().max_global_size, lim.max_rows),
                                      neighborhood_budget=min(ToolConfig().neighborhood_budget, lim.max_rows))
        self.own = [BoundTool(get_node.SPEC, lambda args: get_node.run(self, args)),
                    BoundTool(graph_schema.SPEC, lambda args: graph_schema.run(self, args)),
                    BoundTool(search_in_surroundings.SPEC, lambda args: search_in_surroundings.run(self, args)),
                    BoundTool(find_paths.SPEC, lambda args: find_paths.run(self, args))]
        if questions is not None:
            self.own.append(BoundTool(retrieve.spec(questions.method_summaries()),
                                      lambda args: retrieve.run(self, args)))
        self.exploration = [name for name in self._toolbox().names if name not in AGENT_STATE_TOOLS]

    @property
    def graph(self) -> KnowledgeGraph:  # the call's version (one per call), else the newest
        return self.state.graph

    @property
    def index(self) -> TextIndex:
        return self.state.index

    def _toolbox(self) -> Toolbox:
        """ARK's tools in a fresh toolbox: nothing (budgets, answer list) carries over between calls."""
        from ark.methods.ark.tools import Toolbox

        return Toolbox(self.graph, self.index, self.tool_config)

    def _tools(self, name: str | None = None) -> ToolSet:
        """One call's tools: ARK's exploration tools first, then the graph tools (only these for a call of one of
        them: no toolbox to build); a server's calls are independent, so the set remembers none of them."""
        if any(tool.spec.name == name for tool in self.own):
            return ToolSet(self.own, per_trajectory=False)
        ark_tools = [tool for tool in self._toolbox().tools.bound if tool.spec.name in self.exploration]
        return ToolSet([*ark_tools, *self.own], per_trajectory=False)

    # ------------------------------------------------------------------ schemas and dispatch
    @property
    def names(self) -> list[str]:
        return [*self.exploration, *(tool.spec.name for tool in self.own)]

    def mcp_schemas(self) -> list[McpToolSchema]:
        """MCP tool descriptors (``name``, ``description``, ``inputSchema``, ``outputSchema``): ARK's own first."""
        return self._tools().mcp_schemas()

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run a synchronous tool (every tool but ``retrieve``, which :meth:`aexecute` runs: ``TypeError``); bad
        calls become explanatory results."""
        with self.state.one_version():  # the whole call sees one version
            return self._tools(name).execute(name, _as_text(arguments))

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run any tool; ``retrieve`` awaits the method, the others run in a worker thread."""
        import asyncio

        if name != retrieve.NAME or self.questions is None:
            return await asyncio.to_thread(self.execute, name, arguments)
        with self.state.one_version():
            return await self._tools(name).aexecute(name, _as_text(arguments))

    # ------------------------------------------------------------------ what the tool modules share
    def node(self, ref: NodeRef) -> int | ToolResult:
        """The node ``ref`` names, or the refusal saying it names none."""
        try:
            return resolve_node(self.graph, ref)
        except NodeNotFound as exc:
            return ToolResult.failure(str(exc), UNKNOWN_NODE, node=ref)

    def label(self, node: int) -> str:
        from ark.methods.ark.tools.observations import node_label

        g = self.graph
        return node_label(node, g.name(node), g.node_type(node), 120)

    def rows(self, limit: int | None) -> tuple[int, str | None]:
        """The rows a call shows (its ``limit``, capped) and the note saying it was capped."""
        wanted = self.limits.default_rows if limit is None else limit
        rows = min(wanted, self.limits.max_rows)
        return rows, (f"(limit capped at {self.limits.max_rows} rows)" if wanted > rows else None)

    def codes(self, names: list[str] | None, what: str) -> list[int] | ToolResult | None:
        """The codes of node types (``what="node_types"``) or relations (``"edge_types"``), sorted; None for no
        filter; the refusal naming the valid ones for a name the graph lacks."""
        if not names:
            return None
        g = self.graph
        resolve, valid = ((g.resolve_node_type, g.node_types) if what == "node_types" else
                          (g.resolve_relation, g.relation_types))
        try:
            return sorted({valid.index(resolve(name)) for name in names})
        except ValueError as exc:
            text = f"{str(exc)[0].upper()}{str(exc)[1:]}."
            if what == "node_types":
                return ToolResult.failure(text, UNKNOWN_NAME, node_types=names)
            return ToolResult.failure(text, UNKNOWN_NAME, edge_types=names)

    def fit(self, header: list[str], entries: list[list[str]], footer: list[str]) -> tuple[str, int]:
        """The text of ``entries`` within the character cap (:func:`ark.serve.fit.fit_entries`), and how many."""
        from .fit import fit_entries

        text, shown = fit_entries(header, entries, footer, self.limits.max_chars)
        return text.rstrip(), shown

    @staticmethod
    def footer(listed: int, total: int, what: str, more: str, capped: str | None) -> list[str]:
        """The lines after a list: how many of ``total`` it shows (with ``more``, how to narrow it), the row cap."""
        footer = ["", f"(Showing {listed} of {total} {what}.{more})"] if total > listed else []
        return [*footer, capped] if capped else footer

    def edge_text(self, a: int, b: int, relations: np.ndarray | None = None) -> str:
        """How ``a`` and ``b`` are joined: ``-rel->`` for edges a→b, ``<-rel-`` for b→a (comma-joined types)."""
        found = self.graph.neighbors(a)
        keep = np.asarray(found.nodes) == b
        if relations is not None:
            keep &= np.isin(np.asarray(found.relations), relations)
        codes, outgoing = np.asarray(found.relations)[keep], np.asarray(found.outgoing)[keep]
        names = self.graph.relation_types
        out = ",".join(dict.fromkeys(names[c] for c in codes[outgoing]))
        into = ",".join(dict.fromkeys(names[c] for c in codes[~outgoing]))
        return " ".join(part for part in (f"-{out}->" if out else "", f"<-{into}-" if into else "") if part)

    def expand(self, frontier: np.ndarray, relations: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Unique neighbours of ``frontier`` (both directions, optionally only some relations) and, for each, the
        first frontier node it was reached from; vectorised over the CSR rows."""
        g = self.graph
        positions, lengths = row_positions(g.indptr, frontier)
        if not len(positions):
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        nodes = np.asarray(g.neighbor_array)[positions].astype(np.int64)
        parents = np.repeat(frontier.astype(np.int64), lengths)
        if relations is not None:
            keep = np.isin(np.asarray(g.code_array)[positions] >> 1, relations)
            nodes, parents = nodes[keep], parents[keep]
        unique, first = np.unique(nodes, return_index=True)
        return unique, parents[first]

    def terms(self, query: str) -> list[str]:
        """The words to highlight in snippets (ARK's toolbox's, see :meth:`Toolbox.highlight_terms`)."""
        return self._toolbox().highlight_terms(query)
