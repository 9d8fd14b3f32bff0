"""GraphScout's solver as an MCP prompt of ``ark mcp``, where the ``graphdb`` extra is installed.

The prompt ``graphscout`` (argument ``question``) is the solver's system prompt (:func:`ark.methods.graphscout.
prompt.render_system_prompt`: the task, the tools, the graph's node tables with their properties and relationship
tables, the ``\\answer{...}`` wrapper) in its retriever-only form (``code=False``, GraphScout's "w/o A_code"), then the
solver's first message; the tool it names, ``node_id_retriever``, is served (:class:`GraphScoutTools`).

The code interpreter is not served: its variables persist between calls, and an MCP request may come without a
session to keep them in (protocol 2026-07-28 gives every request its own), so a host could not rely on them.
"""

from __future__ import annotations

import importlib.util
import threading
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver.prompts.base import Prompt, UserMessage

from ark.runtime.tools import McpToolSchema, ToolResult

from .mcp_prompts import QUESTION, QuestionPrompt

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph

def graphscout_available() -> bool:
    """Whether the ``graphdb`` extra (the embedded Cypher engine the prompt describes) is installed."""
    return importlib.util.find_spec("ladybug") is not None


class GraphScoutTools:
    """``node_id_retriever`` over the solver's own node index (names, BM25 by default), built on first use."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        from ark.methods.graphscout.options import GraphScoutOptions

        self.graph = graph
        self.options = GraphScoutOptions(code_interpreter=False)
        self._lock = threading.Lock()
        self._schema: Any = None
        self._index: Any = None

    @property
    def schema(self) -> Any:
        """The Cypher schema the solver's prompt describes (node tables with their properties)."""
        with self._lock:
            if self._schema is None:
                from ark.graphdb.schema import build_schema
                from ark.graphdb.stream import scan_property_columns

                self._schema = build_schema(self.graph, property_columns=scan_property_columns(self.graph))
            return self._schema

    def _toolbox(self) -> Any:
        from ark.methods.graphscout.solver import open_node_index
        from ark.methods.graphscout.tools import Toolbox

        schema = self.schema
        with self._lock:
            if self._index is None:
                self._index = open_node_index(self.graph, self.options)
        return Toolbox(self.graph, schema, self._index, self.options)

    def mcp_schemas(self) -> list[McpToolSchema]:
        from ark.methods.graphscout.tools import node_id_retriever

        return [node_id_retriever.SPEC.mcp_schema()]

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult:
        import asyncio

        return await asyncio.to_thread(lambda: self._toolbox().execute(name, arguments))

    def prompt_text(self, question: str) -> str:
        from ark.methods.graphscout.prompt import render_system_prompt
        from ark.methods.graphscout.solver import FIRST_USER_MESSAGE

        options = self.options
        system = render_system_prompt(self.graph, self.schema, code=False, topk=options.retriever.default_topk,
                                      max_turns=options.max_turns, max_relations=options.examples)
        return f"{system}\n{FIRST_USER_MESSAGE.format(question=question)}"


def graphscout_prompt(scout: GraphScoutTools) -> Prompt:
    """The ``graphscout`` prompt over ``scout``'s graph."""
    name = scout.graph.info.label()

    def graphscout(question: QUESTION) -> list[UserMessage]:
        return [UserMessage(scout.prompt_text(question))]

    return QuestionPrompt.from_function(
        graphscout, name="graphscout", title=f"GraphScout: answer a question about {name}",
        description=(f"GraphScout's solver prompt for {name!r}, retriever-only: ground the question's entities with "
                     "node_id_retriever, then answer with the names wrapped as \\answer{...}."))
