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
from typing import TYPE_CHECKING, Any

import numpy as np

from ark.graph.csr import row_positions
from ark.runtime.tools import INVALID_ARGUMENTS, UNKNOWN_NAME, UNKNOWN_NODE, BoundTool, ToolResult, ToolSet
from ark.serve.tool_state import GraphState
from ark.text import clean_inline

from .graph_tool_args import (
    FIND_PATHS,
    GET_NODE,
    GRAPH_SCHEMA,
    RETRIEVE,
    SURROUNDINGS,
    FindPathsArgs,
    GetNodeArgs,
    GetNodeResult,
    GraphSchemaArgs,
    NeighbourGroup,
    NodeNotFound,
    NodeRef,
    RetrieveArgs,
    SurroundingsArgs,
    resolve_node,
    retrieve_spec,
)

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph
    from ark.index.graph_index import TextIndex
    from ark.methods.ark.tools import Toolbox

    from .questions import QuestionService

__all__ = ["GetNodeArgs", "GetNodeResult", "GraphSchemaArgs", "GraphTools", "NodeNotFound", "ResultLimits",
           "resolve_node"]

AGENT_STATE_TOOLS = frozenset({"add_to_answer", "finish"})  # one trajectory's answer list: nothing to read


@dataclass(frozen=True)
class ResultLimits:
    """Bounds on every result (users of Cypher MCP servers asked for these after overflowing their context)."""

    max_rows: int = 50
    max_chars: int = 6000
    default_rows: int = 10


def _as_text(arguments: str | dict | None) -> str | None:
    """Arguments as the JSON text a model would send, so the size limits apply to an HTTP client's object too."""
    return arguments if isinstance(arguments, str) or arguments is None else json.dumps(arguments)


def _footer(listed: int, total: int, what: str, more: str, capped: str | None) -> list[str]:
    """The lines after a list: how many of ``total`` it shows (with ``more``, how to narrow it), the row cap."""
    footer = ["", f"(Showing {listed} of {total} {what}.{more})"] if total > listed else []
    return [*footer, capped] if capped else footer


class GraphTools:
    """The tools over one graph and its BM25 index (see the module doc); ``questions`` serves ``retrieve``."""

    def __init__(self, graph: KnowledgeGraph, index: TextIndex, limits: ResultLimits | None = None,
                 questions: QuestionService | None = None) -> None:
        from ark.methods.ark.options import ToolConfig

        self.state = GraphState(graph, index, questions)  # follows the graph's versions
        self.limits = lim = limits or ResultLimits()
        self.questions = questions
        self.tool_config = ToolConfig(max_observation_chars=lim.max_chars,
                                      max_global_size=min(ToolConfig().max_global_size, lim.max_rows),
                                      neighborhood_budget=min(ToolConfig().neighborhood_budget, lim.max_rows))
        self.own = [BoundTool(GET_NODE, self.get_node), BoundTool(GRAPH_SCHEMA, self.graph_schema),
                    BoundTool(SURROUNDINGS, self.surroundings), BoundTool(FIND_PATHS, self.find_paths)]
        if questions is not None:  # validated here, run by aexecute (the methods are asynchronous)
            spec = retrieve_spec(questions.method_summaries())
            self.own.append(BoundTool(spec, lambda args: ToolResult("", {"args": args})))
        self.exploration = [name for name in self._toolbox().names if name not in AGENT_STATE_TOOLS]

    @property
    def graph(self) -> KnowledgeGraph:  # the call's version (one per call), else the newest
        return self.state.graph

    @property
    def index(self) -> TextIndex:
        return self.state.index

    def _toolbox(self) -> Toolbox:
        """ARK's tools in a fresh toolbox: nothing (budgets, answer list) carries over between calls."""
        from ark.methods.ark.tools import Toolbox

        return Toolbox(self.graph, self.index, self.tool_config)

    def _tools(self, name: str | None = None) -> ToolSet:
        """One call's tools: ARK's exploration tools first, then the graph tools (only these for a call of one of
        them: no toolbox to build); a server's calls are independent, so the set remembers none of them."""
        if any(tool.spec.name == name for tool in self.own):
            return ToolSet(self.own, per_trajectory=False)
        ark_tools = [tool for tool in self._toolbox().tools.bound if tool.spec.name in self.exploration]
        return ToolSet([*ark_tools, *self.own], per_trajectory=False)

    # ------------------------------------------------------------------ schemas and dispatch
    @property
    def names(self) -> list[str]:
        return [*self.exploration, *(tool.spec.name for tool in self.own)]

    def mcp_schemas(self) -> list[dict[str, Any]]:
        """MCP tool descriptors (``name``, ``description``, ``inputSchema``): ARK's own schemas first."""
        return self._tools().mcp_schemas()

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run a synchronous tool (every tool but ``retrieve``); bad calls become explanatory results."""
        if name == RETRIEVE and self.questions is not None:
            return ToolResult.failure("retrieve runs asynchronously: call aexecute", INVALID_ARGUMENTS)
        with self.state.one_version():  # the whole call sees one version
            return self._tools(name).execute(name, _as_text(arguments))

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run any tool; ``retrieve`` awaits the method, the others run in a worker thread."""
        import asyncio

        if name != RETRIEVE or self.questions is None:
            return await asyncio.to_thread(self.execute, name, arguments)
        checked = self._tools(name).execute(name, _as_text(arguments))
        if not checked.ok:
            return checked
        with self.state.one_version():
            args = checked.data.get("args") if isinstance(checked.data, dict) else None
            assert isinstance(args, RetrieveArgs)
            return await self.retrieve(args)

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
            text = f"{str(exc)[0].upper()}{str(exc)[1:]}."
            if what == "node_types":
                return ToolResult.failure(text, UNKNOWN_NAME, node_types=names)
            return ToolResult.failure(text, UNKNOWN_NAME, edge_types=names)

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
        lines = [f"{self._label(node)} · id {g.node_id(node)}"]
        described = [f"{row.relation} {'->' if row.direction == 'out' else '<-'} {row.node_type}: {row.count}"
                     for row in groups]
        lines.append(f"Neighbours: {len(np.unique(nodes))} ({'; '.join(described) or 'none'})")
        if properties:
            lines.append("Properties: " + clean_inline(json.dumps(properties, ensure_ascii=False), 1000))
        budget = max(self.limits.max_chars - sum(len(line) + 1 for line in lines) - 40, 0)
        shown_text = text if len(text) <= budget else text[:budget].rstrip() + " ..."
        lines.append("Text: " + shown_text)
        if len(shown_text) < len(text):
            lines.append(f"(Text cut to {budget} of {len(text)} characters.)")
        data = GetNodeResult(index=node, id=g.node_id(node), name=g.name(node), type=g.node_type(node),
                             text=shown_text, text_chars=len(text), properties=properties, degree=g.degree(node),
                             neighbours=groups)
        return ToolResult("\n".join(lines), data=data, node_indices=[node])

    def graph_schema(self, _args: GraphSchemaArgs) -> ToolResult:
        g = self.graph
        types = g.type_counts()
        relations = g.relation_counts()
        triples = sorted(g.schema, key=lambda t: -t.count)
        name = g.info.label()
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
        if isinstance(type_codes, ToolResult):
            return type_codes
        if isinstance(rel_codes, ToolResult):
            return rel_codes
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
        entries: list[list[str]] = []
        results: list[dict[str, Any]] = []
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
        more = " Add a query or filters to refine."
        text, shown = self._fit(header, entries, _footer(len(entries), len(candidates), "nodes", more, capped))
        data["results"] = results[:shown]
        data["omitted"] = len(results) - shown
        return ToolResult(text, data=data, node_indices=[r["index"] for r in results[:shown]])

    def _expand(self, frontier: np.ndarray, relations: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Unique neighbours of ``frontier`` (both directions, optionally only some relations) and, for each, the
        first frontier node it was reached from; vectorised over the CSR rows."""
        g = self.graph
        positions, lengths = row_positions(g.indptr, frontier)
        if not len(positions):
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
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
        source, target = self._node(args.source), self._node(args.target)
        if isinstance(source, ToolResult):
            return source
        if isinstance(target, ToolResult):
            return target
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
        text, shown = self._fit(header, entries, _footer(len(results), len(middles), "two-hop paths", "", capped))
        kept = shown - (1 if direct else 0)
        data["results"] = results[:max(kept, 0)]
        data["omitted"] = len(results) - len(data["results"])
        return ToolResult(text, data=data, node_indices=[source, target, *(r["via"] for r in data["results"])])

    async def retrieve(self, args: RetrieveArgs) -> ToolResult:
        """Evidence for a question from any registered method (see :mod:`ark.serve.questions`)."""
        from .questions import ModelSettings, RequestError

        assert self.questions is not None
        rows, capped = self._rows(args.limit)
        chosen = args.model
        model = None if chosen is None else ModelSettings(model=chosen.model, base_url=chosen.base_url,
                                                          temperature=chosen.temperature, offline=chosen.offline)
        try:
            answered = await self.questions.ask(args.question, args.method, args.options, model=model, top=rows,
                                                preset=args.preset)
        except RequestError as exc:
            return ToolResult.failure(str(exc), exc.kind)
        g = self.graph  # the call's version: the answer's, unless an update landed while it ran
        if g.info.version != answered.get("graph_version", 0):
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
