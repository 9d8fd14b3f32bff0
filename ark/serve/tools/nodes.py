"""Node references in the served tools' arguments: :func:`resolve_node` reads one (an index or a node id)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ark.errors import ArkError

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph

NODE_FIELD = "A node: its index as shown in brackets ([123] -> 123) or its id (e.g. HP:0001250)."


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


def one_as_list(value: object) -> object:
    """Accept one name where a list of names is expected (a pydantic before-validator)."""
    return [value] if isinstance(value, str) else value
