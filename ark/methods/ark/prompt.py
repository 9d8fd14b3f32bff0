"""The system prompt: a markdown template (``system_prompt.md``) filled with the graph's types and schema."""

from __future__ import annotations

from importlib import resources
from string import Template

from ark.graph import KnowledgeGraph

from .options import ToolConfig

FIRST_USER_MESSAGE = "Find nodes that answer the question: {question}"
MAX_SCHEMA_LINES = 60

_NEIGHBORHOOD_LINES = {
    (True, True): "- `search_in_neighborhood(node_index, query, node_type, edge_type)`: the neighbors of one node\n"
                  "  (both edge directions), optionally filtered by node type and relation type and ranked by\n"
                  "  `query`. `-rel-> [i]` is an edge from the node to [i]; `[i] ... <-rel-` an edge from [i] to it.",
    (True, False): "- `search_in_neighborhood(node_index, node_type, edge_type)`: the neighbors of one node (both\n"
                   "  edge directions), optionally filtered by node type and relation type. `-rel-> [i]` is an\n"
                   "  edge from the node to [i]; `[i] ... <-rel-` an edge from [i] to it.",
    (False, True): "- `search_in_neighborhood(node_index, query)`: the neighbors of one node (both edge\n"
                   "  directions), ranked by `query`. `-rel-> [i]` is an edge from the node to [i];\n"
                   "  `[i] ... <-rel-` an edge from [i] to it.",
    (False, False): "- `search_in_neighborhood(node_index)`: the neighbors of one node (both edge directions).\n"
                    "  `-rel-> [i]` is an edge from the node to [i]; `[i] ... <-rel-` an edge from [i] to it.",
}


def _read(name: str) -> str:
    return resources.files("ark.methods.ark").joinpath(name).read_text(encoding="utf-8")


def schema_lines(graph: KnowledgeGraph, limit: int = MAX_SCHEMA_LINES) -> str:
    """Compact ``- source -relation-> target (count)`` lines, most frequent first, at most ``limit``."""
    triples = sorted(graph.schema, key=lambda t: (-t.count, t.relation, t.source_type, t.target_type))
    lines = [f"- {t.source_type} -{t.relation}-> {t.target_type} ({t.count:,})" for t in triples[:limit]]
    if len(triples) > limit:
        lines.append(f"- ... and {len(triples) - limit} rarer combinations")
    return "\n".join(lines) or "- (no edges)"


def render_system_prompt(graph: KnowledgeGraph, config: ToolConfig | None = None) -> str:
    """The system prompt for ``graph`` under the tool configuration (ablations change the tool list)."""
    config = config or ToolConfig()
    if config.neighborhood_tool:
        tool = _NEIGHBORHOOD_LINES[(config.neighborhood_filters, config.neighborhood_query)]
        strategies = _read("strategies_full.md")
    else:
        tool, strategies = "", _read("strategies_global_only.md")
    text = Template(_read("system_prompt.md")).substitute(
        node_types=", ".join(graph.node_types),
        relation_types=", ".join(graph.relation_types) or "(none)",
        schema=schema_lines(graph),
        neighborhood_tool=tool,
        strategies=strategies.strip(),
    )
    return text.replace("\n\n- `add_to_answer", "\n- `add_to_answer").strip() + "\n"


def first_user_message(question: str) -> str:
    return FIRST_USER_MESSAGE.format(question=question)
