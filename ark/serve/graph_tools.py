"""The graph tools an outside agent calls (``ark mcp``, and ``POST /api/tools/NAME`` of ``ark serve``).

- ARK's own exploration tools (``search_in_graph``, ``search_in_neighborhood``, and whatever else ARK's
  :class:`~ark.methods.ark.tools.Toolbox` offers except its answer-list tools), with the schemas
  (:meth:`Toolbox.mcp_tools`) and observations the agent gets: a call runs in a fresh toolbox, so nothing carries over
  between calls (no budgets, no answer list).
- ``get_node``: one node by id or index: text, properties and neighbour counts by relation and type.
- ``graph_schema``: node and edge types with counts, and which types each relation connects.
- ``search_in_surroundings``: the nodes within 1 or 2 hops of one node, filtered by node and edge types and ranked
  by a query (the ARK authors' chat app's ``searchInSurroundings{nodeId, query, nodeType, edgeType, k}``).
- ``find_paths``: the paths of length at most 2 between two nodes (our addition).
- ``retrieve``: evidence for a question from any registered method (:mod:`ark.serve.questions`): the ranked nodes
  with what supports each, never a generated answer.

Every tool is a :class:`~ark.runtime.tools.ToolSpec` and a handler returning a
:class:`~ark.runtime.tools.ToolResult` (``text`` for a model, ``data`` for programs), dispatched by
:class:`~ark.runtime.tools.ToolSet`: bad or oversized arguments get the same explanatory refusals the agent gets.
Results are bounded: at most :attr:`ResultLimits.max_rows` rows (a call's ``limit`` is capped to it, and says so)
and :attr:`ResultLimits.max_chars` characters of text. Everything is read-only.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ark.runtime.tools import INVALID_ARGUMENTS, BoundTool, ToolResult, ToolSet, ToolSpec
from ark.serve.tool_state import GraphState
from ark.text import clean_inline

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph

    from .questions import QuestionService

UNKNOWN_NODE = "unknown_node"
UNKNOWN_NAME = "unknown_name"
AGENT_STATE_TOOLS = frozenset({"add_to_answer", "finish"})  # one trajectory's answer list: nothing to read
RETRIEVE = "retrieve"


@dataclass(frozen=True)
class ResultLimits:
    """Bounds on every result (users of Cypher MCP servers asked for these after overflowing their context)."""

    max_rows: int = 50
    max_chars: int = 6000
    default_rows: int = 10


class NodeNotFound(ValueError):
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


NodeRef = int | str
NODE_FIELD = "A node: its index as shown in brackets ([123] -> 123) or its id (e.g. HP:0001250)."


class GetNodeArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    node: NodeRef = Field(description=NODE_FIELD)


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


class RetrieveArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The question, in plain language.")
    method: str = Field(default="ark", description="A registered retrieval method (see the tool description).")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="The method's options, e.g. {\"n_agents\": 5} for ark.")
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


class GraphTools:
    """The tools over one graph and its BM25 index (see the module doc); ``questions`` serves ``retrieve``."""

    def __init__(self, graph: KnowledgeGraph, index: Any, limits: ResultLimits | None = None,
                 questions: QuestionService | None = None) -> None:
        from ark.methods.ark.options import ToolConfig

        self.state = GraphState(graph, index, questions)  # follows the graph's versions
        self.limits = lim = limits or ResultLimits()
        self.questions = questions
        self.tool_config = ToolConfig(max_observation_chars=lim.max_chars,
                                      max_global_size=min(ToolConfig().max_global_size, lim.max_rows),
                                      neighborhood_budget=min(ToolConfig().neighborhood_budget, lim.max_rows))
        own = [BoundTool(GET_NODE, self.get_node), BoundTool(GRAPH_SCHEMA, self.graph_schema),
               BoundTool(SURROUNDINGS, self.surroundings), BoundTool(FIND_PATHS, self.find_paths)]
        if questions is not None:  # validated here, run by aexecute (the methods are asynchronous)
            spec = retrieve_spec(questions.method_summaries())
            own.append(BoundTool(spec, lambda args: ToolResult("", {"args": args})))
        self.own = ToolSet(own)
        self.exploration = [name for name in self._toolbox().tools.names if name not in AGENT_STATE_TOOLS]

    @property
    def graph(self) -> KnowledgeGraph:  # the call's version (one per call), else the newest
        return self.state.graph

    @property
    def index(self) -> Any:
        return self.state.index

    def _toolbox(self):
        from ark.methods.ark.tools import Toolbox

        return Toolbox(self.graph, self.index, self.tool_config)

    # ------------------------------------------------------------------ schemas and dispatch
    @property
    def names(self) -> list[str]:
        return [*self.exploration, *self.own.names]

    def mcp_schemas(self) -> list[dict[str, Any]]:
        """MCP tool descriptors (``name``, ``description``, ``inputSchema``): ARK's own schemas first."""
        ark_tools = [s for s in self._toolbox().mcp_tools() if s["name"] in self.exploration]
        return [*ark_tools, *self.own.mcp_schemas()]

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run a synchronous tool (every tool but ``retrieve``); bad calls become explanatory results."""
        raw = arguments if isinstance(arguments, str) or arguments is None else json.dumps(arguments)
        if name in self.exploration:
            with self.state.one_version():  # the whole call sees one version
                return self._toolbox().execute(name, raw)
        if name == RETRIEVE:
            return ToolResult.failure("retrieve runs asynchronously: call aexecute", INVALID_ARGUMENTS)
        if name not in self.own.tools:
            return ToolResult.failure(f"Unknown tool {name!r}. Available tools: {', '.join(self.names)}.",
                                      "unknown_tool", tool=name)
        with self.state.one_version():
            return self.own.execute(name, raw)

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run any tool; ``retrieve`` awaits the method, the others run in a worker thread."""
        import asyncio

        if name != RETRIEVE or self.questions is None:
            return await asyncio.to_thread(self.execute, name, arguments)
        raw = arguments if isinstance(arguments, str) or arguments is None else json.dumps(arguments)
        checked = self.own.execute(name, raw)
        if not checked.ok:
            return checked
        with self.state.one_version():
            return await self.retrieve(checked.data["args"])

    # ------------------------------------------------------------------ helpers
    def _node(self, ref: NodeRef) -> int | ToolResult:
        try:
            return resolve_node(self.graph, ref)
        except NodeNotFound as exc:
            return ToolResult.failure(str(exc), UNKNOWN_NODE, node=ref)

    def _label(self, node: int) -> str:
        from ark.methods.ark.tools.observations import node_label

        g = self.graph
        return node_label(node, g.name(node), g.node_type(node), 120)

    def _rows(self, limit: int | None) -> tuple[int, str | None]:
        wanted = self.limits.default_rows if limit is None else limit
        rows = min(wanted, self.limits.max_rows)
        return rows, (f"(limit capped at {self.limits.max_rows} rows)" if wanted > rows else None)

    def _codes(self, names: list[str] | None, resolve: Callable[[str], str], valid: list[str],
               what: str) -> list[int] | ToolResult | None:
        if not names:
            return None
        try:
            return sorted({valid.index(resolve(name)) for name in names})
        except ValueError as exc:
            return ToolResult.failure(f"{str(exc)[0].upper()}{str(exc)[1:]}.", UNKNOWN_NAME, **{what: names})

    def _fit(self, header: list[str], entries: list[list[str]], footer: list[str]) -> tuple[str, int]:
        from .fit import fit_entries

        text, shown = fit_entries(header, entries, footer, self.limits.max_chars)
        return text.rstrip(), shown

    def _edge_text(self, a: int, b: int, relations: np.ndarray | None = None) -> str:
        """How ``a`` and ``b`` are joined: ``-rel->`` for edges a→b, ``<-rel-`` for b→a (comma-joined types)."""
        found = self.graph.neighbors(a)
        keep = np.asarray(found.nodes) == b
        if relations is not None:
            keep &= np.isin(np.asarray(found.relations), relations)
        codes, outgoing = np.asarray(found.relations)[keep], np.asarray(found.outgoing)[keep]
        names = self.graph.relation_types
        out = ",".join(dict.fromkeys(names[c] for c in codes[outgoing]))
        into = ",".join(dict.fromkeys(names[c] for c in codes[~outgoing]))
        return " ".join(part for part in (f"-{out}->" if out else "", f"<-{into}-" if into else "") if part)

    # ------------------------------------------------------------------ tools
    def get_node(self, args: GetNodeArgs) -> ToolResult:
        node = self._node(args.node)
        if isinstance(node, ToolResult):
            return node
        g = self.graph
        found = g.neighbors(node)
        nodes, rels, out = np.asarray(found.nodes), np.asarray(found.relations), np.asarray(found.outgoing)
        groups: list[dict[str, Any]] = []
        if len(nodes):
            key = np.stack([rels.astype(np.int64), out.astype(np.int64), g.node_type_codes[nodes].astype(np.int64)])
            combos, counts = np.unique(key, axis=1, return_counts=True)
            for (rel, outgoing, type_code), count in zip(combos.T.tolist(), counts.tolist(), strict=True):
                groups.append({"relation": g.relation_types[rel], "direction": "out" if outgoing else "in",
                               "node_type": g.node_types[type_code], "count": int(count)})
            groups.sort(key=lambda row: -row["count"])
        properties = g.properties(node)
        text = g.text(node) or ""
        lines = [f"{self._label(node)} · id {g.node_id(node)}"]
        described = [f"{row['relation']} {'->' if row['direction'] == 'out' else '<-'} {row['node_type']}: "
                     f"{row['count']}" for row in groups]
        lines.append(f"Neighbours: {len(np.unique(nodes))} ({'; '.join(described) or 'none'})")
        if properties:
            lines.append("Properties: " + clean_inline(json.dumps(properties, ensure_ascii=False), 1000))
        budget = max(self.limits.max_chars - sum(len(line) + 1 for line in lines) - 40, 0)
        shown_text = text if len(text) <= budget else text[:budget].rstrip() + " ..."
        lines.append("Text: " + shown_text)
        if len(shown_text) < len(text):
            lines.append(f"(Text cut to {budget} of {len(text)} characters.)")
        data = {"index": node, "id": g.node_id(node), "name": g.name(node), "type": g.node_type(node),
                "text": shown_text, "text_chars": len(text), "properties": properties,
                "degree": g.degree(node), "neighbours": groups}
        return ToolResult("\n".join(lines), data=data, node_indices=[node])

    def graph_schema(self, _args: GraphSchemaArgs) -> ToolResult:
        g = self.graph
        types = g.type_counts()
        relations = g.relation_counts()
        triples = sorted(g.schema, key=lambda t: -t.count)
        name = g.metadata.get("name", "graph")
        lines = [f"Graph {name!r}: {g.num_nodes:,} nodes, {g.num_edges:,} edges.",
                 "Node types: " + ", ".join(f"{t} ({n:,})" for t, n in types.items()),
                 "Edge types: " + ", ".join(f"{r} ({n:,})" for r, n in relations.items()), "Connections:"]
        entries = [[f"  {t.source_type} -{t.relation}-> {t.target_type} ({t.count:,})"] for t in triples]
        text, shown = self._fit(lines, entries, [])
        data = {"name": name, "nodes": g.num_nodes, "edges": g.num_edges, "node_types": types,
                "edge_types": relations,
                "connections": [{"source_type": t.source_type, "relation": t.relation, "target_type": t.target_type,
                                 "count": t.count} for t in triples[:shown]], "omitted": len(triples) - shown}
        return ToolResult(text, data=data)

    def surroundings(self, args: SurroundingsArgs) -> ToolResult:
        g = self.graph
        centre = self._node(args.node)
        if isinstance(centre, ToolResult):
            return centre
        type_codes = self._codes(args.node_types, g.resolve_node_type, g.node_types, "node_types")
        rel_codes = self._codes(args.edge_types, g.resolve_relation, g.relation_types, "edge_types")
        for problem in (type_codes, rel_codes):
            if isinstance(problem, ToolResult):
                return problem
        rows, capped = self._rows(args.limit)
        rel_array = None if rel_codes is None else np.asarray(rel_codes)
        first, _ = self._expand(np.asarray([centre]), rel_array)
        found = [(node, 1, -1) for node in first.tolist() if node != centre]
        if args.hops == 2 and len(first):
            second, parents = self._expand(first, rel_array)
            seen = set(first.tolist()) | {centre}
            found += [(n, 2, p) for n, p in zip(second.tolist(), parents.tolist(), strict=True) if n not in seen]
        candidates = np.asarray([n for n, _, _ in found], dtype=np.int64)
        hops = np.asarray([h for _, h, _ in found], dtype=np.int64)
        via = np.asarray([p for _, _, p in found], dtype=np.int64)
        if type_codes is not None and len(candidates):
            keep = np.isin(g.node_type_codes[candidates], type_codes)
            candidates, hops, via = candidates[keep], hops[keep], via[keep]
        query = (args.query or "").strip()
        matching = None
        if query and len(candidates):
            scores = np.asarray(self.index.score(query, candidates), dtype=np.float64)
            matching = int(np.count_nonzero(scores > 0))
        else:
            scores = np.zeros(len(candidates))
        order = np.lexsort((candidates, hops, -scores))
        filters = [f"query={query!r}"] if query else []
        filters += [f"node_types={','.join(g.node_types[c] for c in type_codes)}"] if type_codes else []
        filters += [f"edge_types={','.join(g.relation_types[c] for c in rel_codes)}"] if rel_codes else []
        where = f"Surroundings of {self._label(centre)} within {args.hops} hop{'s' if args.hops == 2 else ''}" + (
            f" ({', '.join(filters)})" if filters else "")
        data: dict[str, Any] = {"center": centre, "hops": args.hops, "query": query or None, "total": len(candidates),
                                "matching": matching, "results": []}
        if not len(candidates):
            return ToolResult(f"{where} found no nodes. Widen the filters or use 2 hops.", data=data)
        match_note = f" ({matching} match the query)" if matching is not None else ""
        header = [f"{where} found {len(candidates)} node{'s' if len(candidates) != 1 else ''}{match_note}:", ""]
        from ark.methods.ark.tools.observations import snippet

        terms = self._terms(query) if query else []
        entries, results = [], []
        for rank, position in enumerate(order[:rows].tolist(), start=1):
            node, hop, parent = int(candidates[position]), int(hops[position]), int(via[position])
            if hop == 1:
                route = f"1 hop: {self._edge_text(centre, node, rel_array)}"
            else:
                route = (f"2 hops: {self._edge_text(centre, parent, rel_array)} {self._label(parent)} "
                         f"{self._edge_text(parent, node, rel_array)}")
            score = float(scores[position])
            line = f"{rank}. {self._label(node)} | {route}" + (f" | Score: {score:.3f}" if query else "")
            lines = [line]
            context = snippet(g.text(node), terms, 160) if terms else None
            if context:
                lines.append(f"    Context: {context}")
            entries.append(lines)
            results.append({"index": node, "id": g.node_id(node), "hops": hop, "via": parent if hop == 2 else None,
                            "score": round(score, 6)})
        footer = []
        if len(candidates) > len(entries):
            footer = ["", f"(Showing {len(entries)} of {len(candidates)} nodes. Add a query or filters to refine.)"]
        if capped:
            footer.append(capped)
        text, shown = self._fit(header, entries, footer)
        data["results"] = results[:shown]
        data["omitted"] = len(results) - shown
        return ToolResult(text, data=data, node_indices=[r["index"] for r in results[:shown]])

    def _expand(self, frontier: np.ndarray, relations: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Unique neighbours of ``frontier`` (both directions, optionally only some relations) and, for each, the
        first frontier node it was reached from; vectorised over the CSR rows."""
        g = self.graph
        starts, ends = g.indptr[frontier].astype(np.int64), g.indptr[frontier + 1].astype(np.int64)
        lengths = ends - starts
        if not lengths.sum():
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        positions = np.arange(int(lengths.sum()), dtype=np.int64) + offsets
        nodes = np.asarray(g.neighbor_array)[positions].astype(np.int64)
        parents = np.repeat(frontier.astype(np.int64), lengths)
        if relations is not None:
            keep = np.isin(np.asarray(g.code_array)[positions] >> 1, relations)
            nodes, parents = nodes[keep], parents[keep]
        unique, first = np.unique(nodes, return_index=True)
        return unique, parents[first]

    def _terms(self, query: str) -> list[str]:
        return self._toolbox().highlight_terms(query)

    def find_paths(self, args: FindPathsArgs) -> ToolResult:
        g = self.graph
        ends = [self._node(args.source), self._node(args.target)]
        for end in ends:
            if isinstance(end, ToolResult):
                return end
        source, target = int(ends[0]), int(ends[1])
        rel_codes = self._codes(args.edge_types, g.resolve_relation, g.relation_types, "edge_types")
        if isinstance(rel_codes, ToolResult):
            return rel_codes
        rel_array = None if rel_codes is None else np.asarray(rel_codes)
        rows, capped = self._rows(args.limit)
        direct = self._edge_text(source, target, rel_array) if source != target else ""
        middles = np.empty(0, dtype=np.int64)
        if args.max_hops == 2:
            around_source, _ = self._expand(np.asarray([source]), rel_array)
            around_target, _ = self._expand(np.asarray([target]), rel_array)
            middles = np.intersect1d(around_source, around_target)
            middles = middles[(middles != source) & (middles != target)]
            degrees = np.diff(g.indptr)[middles] if len(middles) else middles
            middles = middles[np.lexsort((middles, degrees))] if len(middles) else middles
        head = f"Paths of length ≤ {args.max_hops} between {self._label(source)} and {self._label(target)}"
        data: dict[str, Any] = {"source": source, "target": target, "direct": direct or None,
                                "two_hop_total": int(len(middles)), "results": []}
        if not direct and not len(middles):
            return ToolResult(f"{head}: none found." + ("" if args.max_hops == 2 else " Try max_hops=2."), data=data)
        count = f"{'1 direct edge' if direct else 'no direct edge'}, {len(middles)} two-hop path" + (
            "s" if len(middles) != 1 else "")
        header = [f"{head}: {count}:", ""]
        entries: list[list[str]] = []
        if direct:
            entries.append([f"{self._label(source)} {direct} {self._label(target)}"])
        results = []
        for middle in middles[:rows].tolist():
            entries.append([f"{self._label(source)} {self._edge_text(source, middle, rel_array)} {self._label(middle)} "
                            f"{self._edge_text(middle, target, rel_array)} {self._label(target)}"])
            results.append({"via": middle, "id": g.node_id(middle)})
        footer = []
        if len(middles) > len(results):
            footer = ["", f"(Showing {len(results)} of {len(middles)} two-hop paths.)"]
        if capped:
            footer.append(capped)
        text, shown = self._fit(header, entries, footer)
        kept = shown - (1 if direct else 0)
        data["results"] = results[:max(kept, 0)]
        data["omitted"] = len(results) - len(data["results"])
        return ToolResult(text, data=data, node_indices=[source, target, *(r["via"] for r in data["results"])])

    async def retrieve(self, args: RetrieveArgs) -> ToolResult:
        """Evidence for a question from any registered method (see :mod:`ark.serve.questions`)."""
        from .questions import RequestError

        assert self.questions is not None
        rows, capped = self._rows(args.limit)
        try:
            answered = await self.questions.ask(args.question, args.method, args.options, top=rows)
        except RequestError as exc:
            return ToolResult.failure(str(exc), exc.kind)
        g = self.graph  # the call's version: the answer's, unless an update landed while it ran
        if g.metadata.get("graph_version", 0) != answered.get("graph_version", 0):
            return ToolResult.failure("the graph changed while the question ran: ask again", "graph_changed")
        who = answered["llm"] or args.method
        header = [f"{args.method} ({who}) ranked {answered['total']} node(s) for: {args.question!r} "
                  f"({answered['wall_s']:.2f} s):", ""]
        entries = []
        for row in answered["ranked"]:
            weight = f"votes {row['votes']}" if row.get("votes") is not None else f"score {row['score']:.3f}"
            lines = [f"{row['rank']}. {self._label(row['index'])} · id {row['id']} - {weight}"]
            lines += [f"    Evidence: {clean_inline(reason, 300)}" for reason in row["evidence"][:3]]
            lines.append(f"    Text: {clean_inline(g.text(row['index']), 200)}")
            entries.append(lines)
        footer = [capped] if capped else []
        answered.pop("evidence_graph", None)  # the page's drawing: not for a model
        if not entries:
            return ToolResult(f"{args.method} found no node for: {args.question!r}", data={**answered, "answer": None})
        text, shown = self._fit(header, entries, footer)
        data = {key: value for key, value in answered.items() if key not in ("answer", "agents")}
        data["ranked"] = answered["ranked"][:shown]
        data["omitted"] = len(answered["ranked"]) - shown
        return ToolResult(text, data=data, node_indices=[row["index"] for row in data["ranked"]])
