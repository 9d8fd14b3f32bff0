"""GraphScout's tools bound to one graph, its Cypher schema, a node index and one trajectory's sandbox.

:class:`Toolbox` keeps what one trajectory touched (the nodes its tool calls returned or were given, first-seen
order) and its telemetry. It never raises for bad input: :class:`~ark.runtime.tools.ToolSet` answers malformed
calls, each tool module its own cases, and the sandbox turns whatever the code does into an observation.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ark.graph import KnowledgeGraph
from ark.runtime.tools import BoundTool, ToolResult, ToolSet, parse_arguments

from ..options import GraphScoutOptions
from . import code_interpreter, node_id_retriever


@dataclass
class Telemetry:
    """Counts over one trajectory's tool calls."""

    retriever_calls: int = 0
    code_calls: int = 0
    failed_code_calls: int = 0
    cypher_queries: int = 0
    invalid_calls: int = 0
    repeated_calls: int = 0

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


class NodeResolver:
    """Maps what a query mentioned (node ids, unique node names) to node indices; built once per graph."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph
        names: dict[str, int] = {}
        shared: set[str] = set()
        for i in range(graph.num_nodes):
            name = graph.name(i)
            if not name:
                continue
            if name in names:
                shared.add(name)
            names[name] = i
        self.unique_names = {name: i for name, i in names.items() if name not in shared}

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
            elif text in self.unique_names:
                found.setdefault(self.unique_names[text], None)
        return list(found)


class Toolbox:
    """The tools of one trajectory: ``node_id_retriever`` always, ``code_interpreter`` unless ablated.

    ``sandbox_factory`` gives the trajectory's :class:`~ark.sandbox.CodeSandbox` on the first code call (the owner
    resets and closes it); ``schema`` is the Cypher schema (labels shown by the retriever).
    """

    def __init__(self, graph: KnowledgeGraph, schema: Any, index: Any, config: GraphScoutOptions | None = None,
                 sandbox_factory: Callable[[], Any] | None = None, resolver: NodeResolver | None = None) -> None:
        self.graph = graph
        self.schema = schema
        self.index = index
        self.config = config or GraphScoutOptions()
        self.resolver = resolver or NodeResolver(graph)
        self._sandbox_factory = sandbox_factory
        self._sandbox: Any = None
        self.telemetry = Telemetry()
        self.touched: dict[int, None] = {}
        self.finished = False  # no tool ends a GraphScout trajectory: the final answer is a text turn
        self.failure: str | None = None  # why the trajectory cannot go on (the sandbox could not start)
        self._seen_calls: set[str] = set()
        bound = [BoundTool(node_id_retriever.SPEC, lambda args: node_id_retriever.run(self, args))]
        if self.config.code_interpreter:
            if sandbox_factory is None:
                raise ValueError("the code interpreter needs a sandbox_factory")
            bound.append(BoundTool(code_interpreter.SPEC, lambda args: code_interpreter.run(self, args)))
        self.tools = ToolSet(bound)

    @property
    def names(self) -> list[str]:
        return self.tools.names

    def openai_tools(self) -> list[dict[str, Any]]:
        return self.tools.openai_schemas()

    def sandbox(self) -> Any:
        if self._sandbox is None:
            assert self._sandbox_factory is not None
            self._sandbox = self._sandbox_factory()
        return self._sandbox

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run tool ``name`` with its raw JSON ``arguments``; every failure becomes an explanatory observation."""
        name = str(name or "")
        if name in self.tools.tools:
            self._note_repeat(name, arguments)
        result = self.tools.execute(name, arguments)
        if not result.ok and result.error in ("invalid_json", "invalid_arguments", "unknown_tool"):
            self.telemetry.invalid_calls += 1
        self.touched.update(dict.fromkeys(result.node_indices))
        return result

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """:meth:`execute` in a worker thread: code runs and embeddings must not block the event loop."""
        return await asyncio.to_thread(self.execute, name, arguments)

    def _note_repeat(self, name: str, arguments: str | dict | None) -> None:
        parsed, problem = parse_arguments(arguments)
        key = name + "\x00" + (json.dumps(parsed, sort_keys=True, default=str) if problem is None else str(arguments))
        if key in self._seen_calls:
            self.telemetry.repeated_calls += 1
        self._seen_calls.add(key)

    # ----------------------------------------------------------------- helpers the tool modules share
    def search(self, query: str, size: int) -> list[tuple[int, float]]:
        """Top-``size`` ``(node, score)`` pairs from the node index (either result shape it may return)."""
        result = self.index.search(query, size)
        if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], np.ndarray):
            return [(int(i), float(s)) for i, s in zip(result[0].tolist(), result[1].tolist(), strict=True)]
        return [(int(i), float(s)) for i, s in result]

    def nodes_of(self, indices: Iterable[int], strings: Iterable[str]) -> list[int]:
        return self.resolver.nodes(indices, strings)
