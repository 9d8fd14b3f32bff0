"""The agents' strategies as MCP prompts, and the two answer tools ARK's prompt names (``ark mcp``).

- Prompt ``ark`` (argument ``question``): the system prompt ARK's agents get (:func:`ark.methods.ark.prompt.
  render_system_prompt`, filled with this graph's node types, relations and schema lines, under the served tools'
  sizes), followed by the agents' first user message. A host that picks it runs ARK's loop with its own model.
- Tools ``add_to_answer`` and ``finish``: the agent's own argument schemas, so every tool ARK's prompt names is
  served. They keep no state (an MCP request may arrive without a session): ``add_to_answer`` checks the nodes and
  echoes them with their labels, and the answer is every node the conversation recorded, first recording first,
  as in the agent's answer list; ``finish`` says the answer is complete.
- Prompt ``graphscout`` and tool ``node_id_retriever``, where the ``graphdb`` extra is installed: GraphScout's solver
  prompt, retriever-only (:mod:`.mcp_graphscout`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from mcp.server.mcpserver.prompts.base import Prompt, UserMessage
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import Field

from ark.runtime.tools import (
    MAX_TEXT_ARGUMENT_CHARS,
    BoundTool,
    McpToolSchema,
    ToolResult,
    ToolSet,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ark.graph import KnowledgeGraph

    from .graph_tools import GraphTools

QUESTION = Annotated[str, Field(description="The question to answer from the graph, in plain language.")]
QUESTION_EXAMPLE = '{"question": "Which genes are linked to Marfan syndrome?"}'
HOST_NOTE = ("The prompt 'ark' gives ARK's own search strategy for a question (record answers with add_to_answer, "
             "then finish); the resources give the schema and one page per node.")


class QuestionPrompt(Prompt):
    """A prompt whose one argument is the question. A missing, empty or overlong question, or another argument, is
    refused as invalid parameters naming what to send (the SDK would answer any of them with an internal error)."""

    async def render(self, arguments: dict[str, Any] | None, context: Any) -> Any:
        arguments = arguments or {}
        unknown = sorted(set(arguments) - {"question"})
        question = str(arguments.get("question") or "").strip()
        if unknown:
            problem = f"unknown argument(s) {', '.join(map(repr, unknown))}: the only argument is 'question'"
        elif not question:
            problem = "the argument 'question' is missing or empty: send the question to answer"
        elif len(question) > MAX_TEXT_ARGUMENT_CHARS:
            problem = f"the question is {len(question):,} characters long; the limit is {MAX_TEXT_ARGUMENT_CHARS:,}"
        else:
            return await super().render({"question": question}, context)
        raise MCPError(INVALID_PARAMS, f"Prompt {self.name!r}: {problem}, e.g. {QUESTION_EXAMPLE}.")


class AnswerTools:
    """``add_to_answer`` and ``finish`` for an outside model (:mod:`.tools.answer`): nothing is stored."""

    def __init__(self, graph: KnowledgeGraph, max_chars: int) -> None:
        from .tools import answer

        self.graph = graph
        self.max_chars = max_chars
        self.tools = ToolSet([BoundTool(answer.ADD_SPEC, lambda args: answer.add(self, args)),
                              BoundTool(answer.FINISH_SPEC, lambda args: answer.done(self, args))],
                             per_trajectory=False)

    def mcp_schemas(self) -> list[McpToolSchema]:
        return self.tools.mcp_schemas()

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult:
        import json

        raw = arguments if isinstance(arguments, str) or arguments is None else json.dumps(arguments)
        return self.tools.execute(name, raw)


def ark_prompt_text(tools: GraphTools, question: str) -> str:
    """ARK's system prompt for the served graph and tool sizes, then the agents' first user message."""
    from ark.methods.ark.options import ArkOptions
    from ark.methods.ark.prompt import first_user_message, render_system_prompt

    system = render_system_prompt(tools.graph, tools.tool_config, ArkOptions().max_steps)
    return f"{system}\n{first_user_message(question)}"


def prompt_tools(tools: GraphTools) -> list[Any]:
    """The tools the prompts name beyond the graph tools: the answer tools, and GraphScout's retriever where its
    prompt is served (each with ``mcp_schemas()`` and ``aexecute()``, as :class:`GraphTools`)."""
    from .mcp_graphscout import GraphScoutTools, graphscout_available

    extra: list[Any] = [AnswerTools(tools.graph, tools.limits.max_chars)]
    if graphscout_available():
        extra.append(GraphScoutTools(tools.graph))
    return extra


def register_prompts(server: MCPServer, tools: GraphTools, extra: list[Any]) -> list[str]:
    """Add the prompts to ``server`` (``extra``: what :func:`prompt_tools` gave); returns their names."""
    from .mcp_graphscout import GraphScoutTools, graphscout_prompt

    g = tools.graph
    name = g.info.label()

    def ark(question: QUESTION) -> list[UserMessage]:
        return [UserMessage(ark_prompt_text(tools, question))]

    server.add_prompt(QuestionPrompt.from_function(
        ark, name="ark", title=f"ARK: find the nodes of {name} that answer a question",
        description=(f"ARK's agent strategy for {name!r} ({', '.join(g.node_types)}): anchor with search_in_graph, "
                     "expand typed neighbourhoods with search_in_neighborhood, add_to_answer the nodes that answer, "
                     "finish. The text ARK's own agents get, with this graph's types, relations and schema.")))
    names = ["ark"]
    for provider in extra:
        if isinstance(provider, GraphScoutTools):
            server.add_prompt(graphscout_prompt(provider))
            names.append("graphscout")
    return names
