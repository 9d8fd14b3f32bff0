"""The arguments and specs of the graph tools outside agents call (:mod:`ark.serve.graph_tools`): what their schemas
show, and :func:`resolve_node`, which reads a node reference (an index or a node id)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, field_validator

from ark.errors import ArkError
from ark.runtime.node_args import NodeRef
from ark.runtime.tools import ToolSpec

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph

RETRIEVE = "retrieve"


class NodeNotFound(ValueError, ArkError):
    """A node reference that names no node (the message says what to send)."""


def resolve_node(graph: KnowledgeGraph, ref: int | str) -> int:
    """The index of the node ``ref`` names: an index (``123``, ``"123"``, ``"[123]"``) or a node id (``HP:0001250``).

    A string that is a node id wins over reading it as an index; :class:`NodeNotFound` says what was wrong."""
    if isinstance(ref, bool):
        raise NodeNotFound(f"node must be an index or an id, got {ref!r}")
    if isinstance(ref, str):
        text = ref.strip()
        if graph.has_node(text):
            return graph.index_of(text)
        inner = text[1:-1].strip() if text.startswith("[") and text.endswith("]") else text
        if not inner.lstrip("-").isdigit():
            raise NodeNotFound(f"Node {ref!r} not found: it is not a node id of this graph (ids look like "
                               f"{graph.node_id(0)!r}) nor a node index. Use search_in_graph to find nodes.")
        ref = int(inner)
    if not graph.is_valid_index(int(ref)):
        raise NodeNotFound(f"Node {ref} does not exist: node indices run from 0 to {graph.num_nodes - 1}. Use "
                           "search_in_graph to find nodes and their indices.")
    return int(ref)


def _as_list(value: Any) -> Any:
    """Accept one name where a list of names is expected."""
    return [value] if isinstance(value, str) else value


NODE_FIELD = "A node: its index as shown in brackets ([123] -> 123) or its id (e.g. HP:0001250)."


class GetNodeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    node: NodeRef = Field(description=NODE_FIELD)


class NeighbourGroup(BaseModel):
    """How many neighbours a node has by one relation, direction (``out``: node -> neighbour) and node type."""

    relation: str
    direction: Literal["out", "in"]
    node_type: str
    count: int


class GetNodeResult(BaseModel):
    """One node: index, id, name, type, its text as shown (``text_chars``: the whole text's length), properties,
    degree and its neighbours grouped (most first)."""

    index: int
    id: str
    name: str
    type: str
    text: str
    text_chars: int
    properties: dict[str, JsonValue]
    degree: int
    neighbours: list[NeighbourGroup]


class GraphSchemaArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SurroundingsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    node: NodeRef = Field(description="The centre node: " + NODE_FIELD)
    query: str | None = Field(default=None, description="Optional keywords; nodes are ranked by relevance (BM25).")
    node_types: list[str] | None = Field(default=None, description="Optional: keep only nodes of these types.")
    edge_types: list[str] | None = Field(default=None, description="Optional: follow only edges of these types.")
    hops: Literal[1, 2] = Field(default=1, description="Search 1 or 2 hops around the node (both directions).")
    limit: int | None = Field(default=None, ge=1, description="Rows to show (default 10, at most 50).")

    one_name_as_list = field_validator("node_types", "edge_types", mode="before")(_as_list)


class FindPathsArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: NodeRef = Field(description="One end: " + NODE_FIELD)
    target: NodeRef = Field(description="The other end: " + NODE_FIELD)
    max_hops: Literal[1, 2] = Field(default=2, description="Longest path: 1 (direct edges) or 2 (via one node).")
    edge_types: list[str] | None = Field(default=None, description="Optional: follow only edges of these types.")
    limit: int | None = Field(default=None, ge=1, description="Paths to show (default 10, at most 50).")

    one_name_as_list = field_validator("edge_types", mode="before")(_as_list)


class ModelChoice(BaseModel):
    """A request's chat model settings (``model`` and ``base_url`` only on a server started with
    ``--allow-request-models``; :mod:`ark.serve.questions`)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, description="Chat model name (default: the server's; only on a server "
                                                        "started with --allow-request-models).")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint (default: the server's; only "
                                                           "on a server started with --allow-request-models; the "
                                                           "server's API key is never sent to another endpoint).")
    temperature: float | None = Field(default=None, ge=0, le=2, description="Sampling temperature.")
    offline: bool = Field(default=False, description="Use the offline policy (no model).")


class RetrieveArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The question, in plain language.")
    method: str = Field(default="ark", description="A registered retrieval method (see the tool description).")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="The method's per-request options, e.g. {\"n_agents\": 5} for ark "
                                                "(sandbox, timeouts, embedders and model folders are the server's).")
    preset: str | None = Field(default=None, description="An options preset under `options`: \"paper\" = the "
                                                         "method's paper's settings (ark, seeder, graphscout).")
    model: ModelChoice | None = Field(default=None, description="LLM methods: the chat model (default: the "
                                                                "server's).")
    limit: int | None = Field(default=None, ge=1, description="Ranked nodes to return (default 10, at most 50).")


GET_NODE = ToolSpec("get_node", "One node by index or id: its name, type, text, properties and how many neighbours "
                    "it has by relation, direction and node type.", GetNodeArgs, example='{"node": "HP:0001250"}')
GRAPH_SCHEMA = ToolSpec("graph_schema", "The graph's schema: node types and edge types with their counts, and which "
                        "node types each edge type connects (source -relation-> target).", GraphSchemaArgs)
SURROUNDINGS = ToolSpec(
    "search_in_surroundings",
    "Search the nodes within 1 or 2 hops of a node (edges in both directions), optionally only of some node types, "
    "following only some edge types, ranked by a query. Each row shows how the node is reached from the centre.",
    SurroundingsArgs, example='{"node": 123, "query": "seizure", "node_types": ["disease"], "hops": 2}')
FIND_PATHS = ToolSpec(
    "find_paths",
    "The paths of length 1 or 2 between two nodes: direct edges, then paths through one intermediate node (the "
    "least connected intermediates first: they are the most specific links).",
    FindPathsArgs, example='{"source": "HP:0001250", "target": "OMIM:607208"}')


def retrieve_spec(methods: dict[str, str]) -> ToolSpec:
    listed = "; ".join(f"{name}: {summary}" for name, summary in methods.items())
    return ToolSpec(
        RETRIEVE,
        "Retrieve evidence for a question with a retrieval method: the ranked nodes, each with what supports it "
        f"(agents' reasoning, votes, a text snippet), not a written answer. Methods: {listed}.",
        RetrieveArgs, example='{"question": "Which genes are linked to Dravet syndrome?", "method": "ark"}')
