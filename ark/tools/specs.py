"""One typed spec per tool: a pydantic argument model plus a description, from which every schema is derived.

`to_openai_tools(config)` gives the chat-completions ``tools`` list (the same dicts TRL accepts as ``tools``);
`to_mcp_tools(config)` gives MCP ``{name, description, inputSchema}`` entries. Ablation switches in
:class:`~ark.tools.config.ToolConfig` drop the neighborhood tool or some of its parameters from the schemas.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .config import ToolConfig

SEARCH_IN_GRAPH = "search_in_graph"
SEARCH_IN_NEIGHBORHOOD = "search_in_neighborhood"
ADD_TO_ANSWER = "add_to_answer"
FINISH = "finish"


def _decode_json_string(value: Any) -> Any:
    """Models sometimes double-encode nested arguments as a JSON string; accept that."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


class SearchInGraphArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    query: str = Field(description="Keywords to match against node names and descriptions.")
    size: int | None = Field(default=None, description="Number of results to return (default 5, at most 30).")


class SearchInNeighborhoodArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    node_index: int = Field(description="Index of the node whose neighbors to explore, e.g. 123 for [123].")
    query: str | None = Field(default=None, description="Optional keywords; neighbors are ranked by relevance.")
    node_type: str | None = Field(default=None, description="Optional: keep only neighbors of this node type.")
    edge_type: str | None = Field(default=None, description="Optional: keep only edges of this relation type.")


class AnswerNode(BaseModel):
    model_config = ConfigDict(extra="ignore")

    node_index: int = Field(description="Index of a node to add to the answer.")
    reasoning: str = Field(default="", description="Why this node answers the question (one sentence).")

    @field_validator("reasoning", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value  # models often send "reasoning": null


class AddToAnswerArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    answer_nodes: list[AnswerNode] = Field(description="Nodes to add to the answer, most relevant first.")

    @field_validator("answer_nodes", mode="before")
    @classmethod
    def _accept_encoded(cls, value: Any) -> Any:
        value = _decode_json_string(value)
        return [value] if isinstance(value, dict) else value


class FinishArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")

    comment: str | None = Field(default=None, description="Optional short remark on the final answer.")


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its name, what it does (shown to the model) and its argument model (the one schema source)."""

    name: str
    description: str
    args_model: type[BaseModel]

    def parameters(self, drop: frozenset[str] = frozenset()) -> dict[str, Any]:
        """JSON schema of the arguments, flattened for function calling (no $refs, no titles, no null unions)."""
        schema = self.args_model.model_json_schema()
        clean = _clean_schema(schema, schema.get("$defs", {}))
        for name in drop:
            clean["properties"].pop(name, None)
            if name in clean.get("required", []):
                clean["required"].remove(name)
        return clean


TOOL_SPECS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            SEARCH_IN_GRAPH,
            "Search the whole graph: the nodes whose text best matches the query (BM25), as "
            "[index] name (type) with a matching snippet. Use it to find entities named in the question or "
            "nodes matching its description.",
            SearchInGraphArgs,
        ),
        ToolSpec(
            SEARCH_IN_NEIGHBORHOOD,
            "Explore the one-hop neighbors of a node (edges in both directions), optionally filtered by node "
            "type and relation type and ranked by a query. Lines show '-relation-> [index]' for edges from the "
            "node and '[index] ... <-relation-' for edges into it. At most 20 neighbors are shown.",
            SearchInNeighborhoodArgs,
        ),
        ToolSpec(
            ADD_TO_ANSWER,
            "Add nodes that answer the question to the answer list, in order of relevance. Nodes already "
            "added are kept where they are.",
            AddToAnswerArgs,
        ),
        ToolSpec(FINISH, "Finish the search when the answer list is complete.", FinishArgs),
    )
}


def enabled_specs(config: ToolConfig) -> list[tuple[ToolSpec, frozenset[str]]]:
    """The tools offered under ``config`` and, for each, the parameters removed by ablation switches."""
    out: list[tuple[ToolSpec, frozenset[str]]] = []
    for spec in TOOL_SPECS.values():
        drop: set[str] = set()
        if spec.name == SEARCH_IN_NEIGHBORHOOD:
            if not config.neighborhood_tool:
                continue
            if not config.neighborhood_query:
                drop.add("query")
            if not config.neighborhood_filters:
                drop.update({"node_type", "edge_type"})
        out.append((spec, frozenset(drop)))
    return out


def to_openai_tools(config: ToolConfig | None = None) -> list[dict[str, Any]]:
    """The chat-completions ``tools`` list for ``config`` (also valid as TRL's ``tools`` argument)."""
    config = config or ToolConfig()
    return [
        {"type": "function",
         "function": {"name": spec.name, "description": spec.description, "parameters": spec.parameters(drop)}}
        for spec, drop in enabled_specs(config)
    ]


def to_mcp_tools(config: ToolConfig | None = None) -> list[dict[str, Any]]:
    """MCP tool descriptors (``name``, ``description``, ``inputSchema``) for ``config``."""
    config = config or ToolConfig()
    return [{"name": spec.name, "description": spec.description, "inputSchema": spec.parameters(drop)}
            for spec, drop in enabled_specs(config)]


def _clean_schema(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_clean_schema(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _clean_schema(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out: dict[str, Any] = {}
    any_of = node.get("anyOf")
    if any_of is not None:
        non_null = [option for option in any_of if option.get("type") != "null"]
        if len(non_null) == 1:
            out.update(_clean_schema(non_null[0], defs))
        else:
            out["anyOf"] = _clean_schema(non_null, defs)
    for key, value in node.items():
        if key in ("title", "$defs", "anyOf") or (key == "default" and value is None):
            continue
        if key == "properties":  # keys here are argument names, not schema keywords
            out[key] = {name: _clean_schema(sub, defs) for name, sub in value.items()}
        else:
            out[key] = _clean_schema(value, defs)
    return out
