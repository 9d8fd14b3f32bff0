"""``ark mcp GRAPH``: the graph tools (:mod:`ark.serve.graph_tools`) as an MCP server, over stdio or streamable
HTTP, with the official ``mcp`` SDK (extra ``mcp``).

Each tool is published with the schema ARK already has for it (the agent's own for ARK's tools) and answers with
the observation text the agent would read plus the structured result (``structuredContent``); a refused call
(unknown node or type, bad or oversized arguments) is an error result (``isError``) whose text says what to send.
Every tool is read-only. Over HTTP the SDK's request-size limit and DNS-rebinding checks apply, and the address
rule of :mod:`ark.serve.binding`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import func_metadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations

from ark.runtime.tools import McpToolSchema, ToolResult, dumped

if TYPE_CHECKING:
    from .graph_tools import GraphTools

log = logging.getLogger(__name__)
MAX_REQUEST_BYTES = 256 * 1024  # HTTP bodies; a tool call's arguments are limited to 50,000 characters anyway
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


async def _no_arguments() -> None:  # the SDK wants function metadata; ARK's tools validate their own arguments
    return None


class ArkTool(Tool):
    """An MCP tool whose input schema is ARK's and whose raw arguments go to ARK's dispatcher, so the SDK never
    rejects a call before ARK can explain what to send."""

    async def run(self, arguments: dict[str, Any], context: Any, convert_result: bool = False) -> CallToolResult:
        try:
            result: ToolResult = await self.fn(arguments)
        except Exception:  # noqa: BLE001 - logged here; the caller gets one line, never a traceback
            log.exception("tool %s failed", self.name)
            return CallToolResult(content=[TextContent(text=f"{self.name} failed with an internal error; see the "
                                                            "server's log.")], is_error=True)
        return CallToolResult(content=[TextContent(text=result.text)], structured_content=dumped(result.data),
                              is_error=not result.ok)


class ServedTools(Protocol):
    """What the server publishes: tool descriptors, and a call of one by name (the graph tools, the answer tools,
    GraphScout's retriever)."""

    def mcp_schemas(self) -> list[McpToolSchema]: ...

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult: ...


def mcp_tools(tools: ServedTools) -> list[Tool]:
    """The SDK tool objects for every tool of ``tools``."""
    metadata = func_metadata(_no_arguments, structured_output=False)
    out: list[Tool] = []
    for schema in tools.mcp_schemas():
        name = schema["name"]

        async def call(arguments: dict[str, Any], name: str = name) -> ToolResult:
            return await tools.aexecute(name, arguments)

        declared = metadata.model_copy(update={"output_schema": schema.get("outputSchema")})
        out.append(ArkTool(fn=call, name=name, description=schema["description"], parameters=schema["inputSchema"],
                           fn_metadata=declared, is_async=True, annotations=READ_ONLY))
    return out


def build_mcp_server(tools: GraphTools, runs: list[Path] | None = None) -> MCPServer:
    """An MCP server over ``tools`` (its graph named in the instructions), with ARK's strategy as a prompt and the
    graph (and the run folders ``runs``) as resources (:mod:`.mcp_prompts`, :mod:`.mcp_resources`)."""
    from importlib.metadata import PackageNotFoundError, version

    g = tools.graph
    try:
        ark_version = version("ark-kg")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        ark_version = "0"
    name = g.info.label()
    instructions = (
        f"Read-only tools over the knowledge graph {name!r} ({g.num_nodes:,} nodes of types "
        f"{', '.join(g.node_types)}; {g.num_edges:,} edges of types {', '.join(g.relation_types)}). Find entities "
        "with search_in_graph, explore around them with search_in_neighborhood or search_in_surroundings, connect "
        "two nodes with find_paths, read a node with get_node, and ask retrieve for the evidence a retrieval method "
        "finds for a whole question. Nodes are shown as [index] name (type); tools take the index or the node id. "
        f"Results are capped at {tools.limits.max_rows} rows and {tools.limits.max_chars:,} characters.")
    from .mcp_prompts import HOST_NOTE, prompt_tools, register_prompts
    from .mcp_resources import register_resources

    extra = prompt_tools(tools)
    server = MCPServer("ark", instructions=f"{instructions} {HOST_NOTE}", version=ark_version,
                       tools=[*mcp_tools(tools), *(tool for more in extra for tool in mcp_tools(more))],
                       log_level="WARNING")
    register_prompts(server, tools, extra)
    register_resources(server, tools, runs)
    return server


def http_app(server: MCPServer, host: str) -> Any:
    """The streamable HTTP app at ``/mcp`` (request bodies limited to :data:`MAX_REQUEST_BYTES`)."""
    return server.streamable_http_app(streamable_http_path="/mcp", max_request_body_size=MAX_REQUEST_BYTES,
                                      host=host)
