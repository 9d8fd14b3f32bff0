"""The graph section of the GraphScout solver's system prompt (GraphScout Appendix B.4.2 lists its parts: the
domain, the backend, node types with their properties, edge types, and code examples): written here in our own
words, with Cypher examples built from the graph's own schema and real node ids, so every example runs (a test
executes each one against the engine).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from string import Template
from typing import Any

import numpy as np

from ...graph import KnowledgeGraph
from ...graph.csr import row_positions
from ...graphdb.engine import CypherEngine
from ...graphdb.schema import CypherSchema

MAX_RELATION_EXAMPLES = 6
DIALECT_NOTES = {
    "ladybug": ("Cypher dialect of the embedded engine (Kùzu-compatible): use label(r) for a relationship's type "
                "and label(n) for a node's table; variable-length paths are written -[:rel*1..3]->."),
    "neo4j": "Neo4j Cypher: use type(r) for a relationship's type and labels(n) for a node's labels.",
}


@dataclass(frozen=True)
class CypherExample:
    purpose: str
    cypher: str
    params: dict[str, Any]

    def code(self) -> str:
        return f"rows = cypher({self.cypher!r}, {self.params!r})\nprint(rows)"


EDGE_SAMPLE_NODES = 8192  # source nodes whose adjacency is read at a time while looking for an example edge


def _edge_sample(graph: KnowledgeGraph, relation: str, source_type: str, target_type: str) -> tuple[int, int] | None:
    """A (source, target) edge of this kind whose source has a handful (2-20, else any) of such edges: the lowest
    such source and its first such edge. Sources are read a block of :data:`EDGE_SAMPLE_NODES` at a time, so memory
    is bounded by the block, not by the graph's edges (GRBench Amazon has 311M), and the scan stops at the first
    block that holds one."""
    relation_code = graph.relation_types.index(relation)
    target_code = graph.node_types.index(target_type)
    sources = graph.nodes_of_type(source_type)
    type_codes = np.asarray(graph.node_type_codes)
    fallback: tuple[int, int] | None = None
    for start in range(0, len(sources), EDGE_SAMPLE_NODES):
        block = sources[start:start + EDGE_SAMPLE_NODES].astype(np.int64)
        positions, lengths = row_positions(graph.indptr, block)
        if not len(positions):
            continue
        owners, codes = np.repeat(block, lengths), np.asarray(graph.code_array[positions])
        targets = np.asarray(graph.neighbor_array[positions])
        keep = ((codes & 1) == 0) & ((codes >> 1) == relation_code) & (type_codes[targets] == target_code)
        if not keep.any():
            continue
        values, first, counts = np.unique(owners[keep], return_index=True, return_counts=True)
        good = np.flatnonzero((counts >= 2) & (counts <= 20))
        if len(good):
            return int(values[good[0]]), int(targets[keep][first[good[0]]])
        fallback = fallback or (int(values[0]), int(targets[keep][first[0]]))
    return fallback


def engine_schema(engine: CypherEngine) -> CypherSchema:
    """The schema of ``engine``, which GraphScout's prompt, tools and scripted policy are written against."""
    if engine.schema is None:
        raise ValueError(f"GraphScout needs a Cypher engine that knows its schema; this {engine.dialect} engine was "
                         "opened without one (open it with ark.graphdb.open_cypher)")
    return engine.schema


def _node_type(schema: CypherSchema, label: str) -> str:
    """The graph node type behind the node table ``label`` (a relationship pair's endpoint)."""
    table = schema.node_table(label)
    if table is None:
        raise KeyError(f"no node table {label!r} in the schema; valid: {', '.join(n.label for n in schema.nodes)}")
    return table.node_type


def cypher_examples(graph: KnowledgeGraph, schema: CypherSchema,
                    max_relations: int = MAX_RELATION_EXAMPLES) -> list[CypherExample]:
    """Examples for the prompt: finding nodes by name, a node's relations, then for the most frequent relations a
    one-hop listing, a count, an existence check, a top-k aggregation and (where relations chain) a two-hop query."""
    examples: list[CypherExample] = []
    biggest = max(schema.nodes, key=lambda spec: spec.count)
    nodes = graph.nodes_of_type(biggest.node_type)
    first = next((int(i) for i in nodes[:1000] if max(map(len, (graph.name(int(i)) or "x").split())) >= 5),
                 int(nodes[0]))
    word = max((graph.name(first) or graph.node_id(first)).split(), key=len)
    examples.append(CypherExample(
        f"find {biggest.label} nodes whose name contains a word",
        f"MATCH (n:{biggest.label}) WHERE lower(n.name) CONTAINS lower($text) RETURN n.id, n.name LIMIT 5",
        {"text": word}))
    examples.append(CypherExample(
        "which relations a node has, and to what",
        "MATCH (n {id: $id})-[r]-(m) RETURN label(r) AS relation, label(m) AS neighbor, count(*) AS n "
        "ORDER BY n DESC", {"id": graph.node_id(first)}))
    pairs = sorted(((p.count, spec, p) for spec in schema.rels for p in spec.pairs), key=lambda x: -x[0])
    used: list[tuple[Any, Any]] = []
    for _, spec, pair in pairs:
        if len(used) >= max_relations:
            break
        source_type = _node_type(schema, pair.source)
        target_type = _node_type(schema, pair.target)
        sample = _edge_sample(graph, spec.relation, source_type, target_type)
        if sample is None:
            continue
        used.append((spec, pair))
        a, b = graph.node_id(sample[0]), graph.node_id(sample[1])
        hop = f"(a:{pair.source} {{id: $id}})-[:{spec.label}]->(b:{pair.target})"
        if len(used) == 1:
            examples.append(CypherExample(f"list the {pair.target} nodes a {pair.source} reaches by {spec.label}",
                                          f"MATCH {hop} RETURN b.id, b.name LIMIT 10", {"id": a}))
            examples.append(CypherExample("count them (no LIMIT when counting)",
                                          f"MATCH {hop} RETURN count(DISTINCT b) AS n", {"id": a}))
            examples.append(CypherExample(
                "check whether two given nodes are linked",
                f"MATCH (a:{pair.source} {{id: $a}})-[:{spec.label}]->(b:{pair.target} {{id: $b}}) "
                "RETURN count(*) > 0 AS linked", {"a": a, "b": b}))
            examples.append(CypherExample(
                f"the {pair.target} nodes reached from the most {pair.source} nodes",
                f"MATCH (a:{pair.source})-[:{spec.label}]->(b:{pair.target}) RETURN b.name, count(a) AS n "
                "ORDER BY n DESC LIMIT 5", {}))
        else:
            examples.append(CypherExample(f"{pair.source} -{spec.label}-> {pair.target}, from the other end",
                                          f"MATCH (a:{pair.source})-[:{spec.label}]->(b:{pair.target} {{id: $id}}) "
                                          "RETURN a.id, a.name LIMIT 10", {"id": b}))
    for spec, pair in used:  # a two-hop chain: (x)-[first]->(pair.source)-[spec]->(pair.target)
        for other, left in used:
            if left.target == pair.source and (other, left) != (spec, pair):
                sample = _edge_sample(graph, other.relation, _node_type(schema, left.source),
                                      _node_type(schema, left.target))
                if sample is None:
                    continue
                examples.append(CypherExample(
                    f"two hops: {left.source} -{other.label}-> {left.target} -{spec.label}-> {pair.target}",
                    f"MATCH (x:{left.source} {{id: $id}})-[:{other.label}]->(m:{left.target})-[:{spec.label}]->"
                    f"(y:{pair.target}) RETURN y.name, count(DISTINCT m) AS via ORDER BY via DESC LIMIT 10",
                    {"id": graph.node_id(sample[0])}))
                return examples
    return examples


def render_graph_section(graph: KnowledgeGraph, schema: CypherSchema, examples: list[CypherExample] | None = None,
                         dialect: str = "ladybug", code: bool = True) -> str:
    """The system prompt's description of the graph: domain, backend, node tables and their properties, edge
    tables with their endpoints, and (with ``code``) how to query it from code, with examples."""
    name = graph.info.label("knowledge")
    description = graph.info.description
    lines = [f"The {name} knowledge graph" + (f": {str(description).rstrip('.')}" if description else "") + ".",
             f"Backend: {'an embedded graph database' if dialect == 'ladybug' else 'Neo4j'}, read-only. "
             f"{DIALECT_NOTES.get(dialect, '')}",
             "", schema.describe()]
    if not code:
        return "\n".join(lines)
    examples = cypher_examples(graph, schema) if examples is None else examples
    lines += ["", "Query it from the code interpreter with cypher(query, params=None, limit=None), which returns a "
                  "list of dicts (one per row). Pass values as $parameters. Examples:"]
    for example in examples:
        lines.append(f"# {example.purpose}")
        lines.append(example.code())
    return "\n".join(lines)


def _read(name: str) -> str:
    return resources.files("ark.methods.graphscout").joinpath(name).read_text(encoding="utf-8")


def tool_lines(code: bool, topk: int, limits: Any = None) -> str:
    """The tools paragraph of the system prompt (the retriever-only ablation drops the code interpreter)."""
    lines = [f"- node_id_retriever(queries, topk={topk}): for each mention in `queries`, the most similar nodes with "
             "their id, type (the Cypher label) and name. Use it to find the ids of the entities in the question."]
    if code:
        timeout = f"{limits.timeout_s:g} s" if limits is not None else "a few seconds"
        rows = f"{limits.cypher_max_rows:,}" if limits is not None else "a limited number of"
        lines.append(
            "- code_interpreter(code): runs Python in a sandbox; variables persist between calls. Inside it, "
            "cypher(query, params=None, limit=None) runs a read-only Cypher query and returns the rows as a list of "
            f"dicts. Print what you need to see. Each call may run {timeout}; a query may return at most {rows} "
            "rows (aggregate with count() or collect(), or pass limit=N).")
    else:
        lines.append("- There is no code interpreter: answer from what the retriever returns.")
    return "\n".join(lines)


def render_system_prompt(graph: KnowledgeGraph, schema: CypherSchema, *, code: bool = True, topk: int = 2,
                         max_turns: int = 10, limits: Any = None, max_relations: int = MAX_RELATION_EXAMPLES,
                         dialect: str = "ladybug") -> str:
    """The solver's system prompt (our wording; the parts follow GraphScout Appendix B.4.2): the task, the tools,
    the graph (domain, node types and their properties, edge types, Cypher examples from the graph's own schema)
    and the answer wrapper."""
    examples = cypher_examples(graph, schema, max_relations) if code else []
    return Template(_read("system_prompt.md")).substitute(
        tool_lines=tool_lines(code, topk, limits),
        graph_section=render_graph_section(graph, schema, examples, dialect=dialect, code=code),
        max_turns=max_turns,
    ).strip() + "\n"


def solver_system_prompt(graph: KnowledgeGraph, schema: CypherSchema, options: Any, engine: Any,
                         pool: Any = None) -> str:
    """The solver's system prompt under its options: the user's own, else ours for this graph and engine."""
    return options.system_prompt or render_system_prompt(
        graph, schema, code=options.code_interpreter, topk=options.retriever.default_topk,
        max_turns=options.max_turns, limits=pool.limits if pool is not None else None,
        max_relations=options.examples, dialect=getattr(engine, "dialect", "ladybug"))
