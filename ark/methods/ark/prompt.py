"""The system prompt: a markdown template (``system_prompt.md``) filled with the graph's types and schema."""

from __future__ import annotations

from importlib import resources
from string import Template

from ark.graph import KnowledgeGraph

from .options import ToolConfig

FIRST_USER_MESSAGE = "Find nodes that answer the question: {question}"
MAX_SCHEMA_LINES = 60

_NEIGHBORHOOD_LINES = {
    (True, True): "- `search_in_neighborhood(node_index, query, node_types, edge_types)`: the neighbors of one node\n"
                  "  (both edge directions), optionally filtered to sets of node types and relation types (lists,\n"
                  "  e.g. `node_types=[\"disease\", \"gene\"]`) and ranked by `query`; the best $budget are shown.\n"
                  "  `-rel-> [i]` is an edge from the node to [i]; `[i] ... <-rel-` an edge from [i] to it.",
    (True, False): "- `search_in_neighborhood(node_index, node_types, edge_types)`: the neighbors of one node (both\n"
                   "  edge directions), optionally filtered to sets of node types and relation types (lists); the\n"
                   "  first $budget are shown. `-rel-> [i]` is an edge from the node to [i]; `[i] ... <-rel-` an\n"
                   "  edge from [i] to it.",
    (False, True): "- `search_in_neighborhood(node_index, query)`: the neighbors of one node (both edge\n"
                   "  directions), ranked by `query`; the best $budget are shown. `-rel-> [i]` is an edge from the\n"
                   "  node to [i]; `[i] ... <-rel-` an edge from [i] to it.",
    (False, False): "- `search_in_neighborhood(node_index)`: the neighbors of one node (both edge directions); the\n"
                    "  first $budget are shown. `-rel-> [i]` is an edge from the node to [i]; `[i] ... <-rel-` an\n"
                    "  edge from [i] to it.",
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


def _examples_for(examples: str, filters: bool, query: bool) -> str:
    """The worked examples using only the neighbourhood parameters the ablation offers."""
    if not query:
        examples = examples.replace('query="protein folding", ', "")
    if not filters:  # filter by the query instead where there is one
        for wanted in ("gene", "author", "paper"):
            examples = examples.replace(f', node_types=["{wanted}"]', f', query="{wanted}"' if query and
                                        wanted != "paper" else "")
    return examples


def render_system_prompt(graph: KnowledgeGraph, config: ToolConfig | None = None, max_steps: int = 20) -> str:
    """The system prompt for ``graph`` under the tool configuration (ablations change the tool list, strategies
    and examples; the global search sizes and the neighbour budget are the configuration's) and step budget."""
    config = config or ToolConfig()
    sizes = {"default_size": config.default_global_size, "max_size": config.max_global_size,
             "budget": config.neighborhood_budget, "max_steps": max_steps}
    if config.neighborhood_tool:
        tool = _NEIGHBORHOOD_LINES[(config.neighborhood_filters, config.neighborhood_query)]
        strategies, examples = _read("strategies_full.md"), _read("examples_full.md")
        examples = _examples_for(examples, config.neighborhood_filters, config.neighborhood_query)
    else:
        tool, strategies, examples = "", _read("strategies_global_only.md"), _read("examples_global_only.md")
    text = Template(_read("system_prompt.md")).substitute(
        node_types=", ".join(graph.node_types),
        relation_types=", ".join(graph.relation_types) or "(none)",
        schema=schema_lines(graph),
        neighborhood_tool=Template(tool).substitute(sizes),
        strategies=Template(strategies.strip()).substitute(sizes),
        examples=examples.strip(),
        **sizes,
    )
    return text.replace("\n\n- `add_to_answer", "\n- `add_to_answer").strip() + "\n"


def first_user_message(question: str) -> str:
    return FIRST_USER_MESSAGE.format(question=question)
