"""GraphScout's tools bound to one graph, its Cypher schema, a node index and one trajectory's sandbox.

:class:`Toolbox` keeps what one trajectory touched (the nodes its tool calls returned or were given, first-seen
order), which of those an observation showed (``shown``) and its telemetry. It never raises for bad input:
:class:`~ark.runtime.tools.ToolSet` answers malformed calls, each tool module its own cases, and the sandbox turns
whatever the code does into an observation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ark.graph import KnowledgeGraph
from ark.graph.keys import KeyTable, column_chunks
from ark.runtime.tools import BoundTool, TelemetryRecord, ToolboxBase, ToolResult, ToolSet

from ..options import GraphScoutOptions
from . import code_interpreter, node_id_retriever

if TYPE_CHECKING:
    from ark.index.graph_index import TextIndex


@dataclass
class Telemetry(TelemetryRecord):
    """Counts over one trajectory's tool calls (``invalid_calls`` and ``repeated_calls`` kept by the tool set)."""

    retriever_calls: int = 0
    code_calls: int = 0
    failed_code_calls: int = 0
    cypher_queries: int = 0
    invalid_calls: int = 0
    repeated_calls: int = 0


class NodeResolver:
    """Maps what a query mentioned (node ids, unique node names) to node indices; built once per graph."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph
        # Names as a table of hashes (:mod:`ark.graph.keys`), not a dict of every name.
        self._names = KeyTable.build((start, [name or None for name in names])
                                     for start, names in column_chunks(graph.nodes.column("name")))

    def unique_name(self, text: str) -> int | None:
        """The node named ``text`` when exactly one node has that name."""
        rows = self._names.rows(text, self.graph.name) if text else []
        return rows[0] if len(rows) == 1 else None

    def nodes(self, indices: Iterable[int], strings: Iterable[str]) -> list[int]:
        """Valid ``indices``, then the nodes whose id, else whose unique name, is one of ``strings``; no repeats."""
        g = self.graph
        found: dict[int, None] = {}
        for index in indices:
            if isinstance(index, int) and g.is_valid_index(index):
                found.setdefault(index, None)
        for text in strings:
            if g.has_node(text):
                found.setdefault(g.index_of(text), None)
            elif (row := self.unique_name(text)) is not None:
                found.setdefault(row, None)
        return list(found)


class Toolbox(ToolboxBase[Telemetry]):
    """The tools of one trajectory: ``node_id_retriever`` always, ``code_interpreter`` unless ablated.

    ``sandbox_factory`` gives the trajectory's :class:`~ark.sandbox.CodeSandbox` on the first code call (the owner
    resets and closes it); ``schema`` is the Cypher schema (labels shown by the retriever).
    """

    def __init__(self, graph: KnowledgeGraph, schema: Any, index: TextIndex, config: GraphScoutOptions | None = None,
                 sandbox_factory: Callable[[], Any] | None = None, resolver: NodeResolver | None = None) -> None:
        self.graph = graph
        self.schema = schema
        self.index = index
        self.config = config or GraphScoutOptions()
        self.resolver = resolver or NodeResolver(graph)
        self._sandbox_factory = sandbox_factory
        self._sandbox: Any = None
        self.touched: dict[int, None] = {}
        # the touched nodes some observation showed the model (by id or name): what its answer may name
        self.shown: dict[int, None] = {}
        self.finished = False  # no tool ends a GraphScout trajectory: the final answer is a text turn
        self.failure: str | None = None  # why the trajectory cannot go on (the sandbox could not start)
        bound = [BoundTool(node_id_retriever.SPEC, lambda args: node_id_retriever.run(self, args))]
        if self.config.code_interpreter:
            if sandbox_factory is None:
                raise ValueError("the code interpreter needs a sandbox_factory")
            bound.append(BoundTool(code_interpreter.SPEC, lambda args: code_interpreter.run(self, args)))
        self.tools = ToolSet(bound, Telemetry())

    def sandbox(self) -> Any:
        if self._sandbox is None:
            assert self._sandbox_factory is not None
            self._sandbox = self._sandbox_factory()
        return self._sandbox

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """:meth:`execute` in a worker thread: code runs and embeddings must not block the event loop."""
        return await asyncio.to_thread(self.execute, name, arguments)

    # ----------------------------------------------------------------- helpers the tool modules share
    def touch(self, nodes: Iterable[int]) -> None:
        """Note nodes a call returned or was given (first-seen order)."""
        self.touched.update(dict.fromkeys(nodes))

    def show(self, nodes: Iterable[int], observation: str | None = None) -> None:
        """Note nodes an observation showed: all of ``nodes``, or with ``observation`` those whose id or name it
        contains (a code call's queries may be given a node the printed output never names)."""
        text = observation.casefold() if observation is not None else None
        g = self.graph
        for node in nodes:
            if text is None or any(key and key.casefold() in text for key in (g.node_id(node), g.name(node))):
                self.shown.setdefault(node, None)

    def nodes_of(self, indices: Iterable[int], strings: Iterable[str]) -> list[int]:
        return self.resolver.nodes(indices, strings)
