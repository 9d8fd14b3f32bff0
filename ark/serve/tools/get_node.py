"""``get_node(node)``: one node by index or id: its text, properties and neighbour counts by relation and type."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ark.runtime.node_args import NodeRef
from ark.runtime.tools import ToolResult, ToolSpec
from ark.text import clean_inline

from .nodes import NODE_FIELD

if TYPE_CHECKING:
    from ..graph_tools import GraphTools

NAME = "get_node"


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


SPEC = ToolSpec(NAME, "One node by index or id: its name, type, text, properties and how many neighbours it has by "
                "relation, direction and node type.", GetNodeArgs, example='{"node": "HP:0001250"}',
                result_model=GetNodeResult)


def run(box: GraphTools, args: GetNodeArgs) -> ToolResult:
    node = box.node(args.node)
    if isinstance(node, ToolResult):
        return node
    g = box.graph
    found = g.neighbors(node)
    nodes, rels, out = np.asarray(found.nodes), np.asarray(found.relations), np.asarray(found.outgoing)
    groups: list[NeighbourGroup] = []
    if len(nodes):
        key = np.stack([rels.astype(np.int64), out.astype(np.int64), g.node_type_codes[nodes].astype(np.int64)])
        combos, counts = np.unique(key, axis=1, return_counts=True)
        for (rel, outgoing, type_code), count in zip(combos.T.tolist(), counts.tolist(), strict=True):
            groups.append(NeighbourGroup(relation=g.relation_types[rel], direction="out" if outgoing else "in",
                                         node_type=g.node_types[type_code], count=int(count)))
        groups.sort(key=lambda row: -row.count)
    properties = g.properties(node)
    text = g.text(node) or ""
    lines = [f"{box.label(node)} · id {g.node_id(node)}"]
    described = [f"{row.relation} {'->' if row.direction == 'out' else '<-'} {row.node_type}: {row.count}"
                 for row in groups]
    lines.append(f"Neighbours: {len(np.unique(nodes))} ({'; '.join(described) or 'none'})")
    if properties:
        lines.append("Properties: " + clean_inline(json.dumps(properties, ensure_ascii=False), 1000))
    budget = max(box.limits.max_chars - sum(len(line) + 1 for line in lines) - 40, 0)
    shown_text = text if len(text) <= budget else text[:budget].rstrip() + " ..."
    lines.append("Text: " + shown_text)
    if len(shown_text) < len(text):
        lines.append(f"(Text cut to {budget} of {len(text)} characters.)")
    data = GetNodeResult(index=node, id=g.node_id(node), name=g.name(node), type=g.node_type(node), text=shown_text,
                         text_chars=len(text), properties=properties, degree=g.degree(node), neighbours=groups)
    return ToolResult("\n".join(lines), data=data, node_indices=[node])
