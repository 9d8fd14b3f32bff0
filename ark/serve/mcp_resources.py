"""The graph (and, with ``--runs``, run folders) as MCP resources of ``ark mcp``.

- ``ark://GRAPH/schema``: node and edge types with counts, which types each relation connects, and statistics
  (degrees, nodes without text).
- ``ark://GRAPH/node/{id}`` (a template): one node's page: the ``get_node`` tool (name, type, id, properties,
  text, neighbour counts by relation and type) and its neighbours by relation and direction, a few named per group.
  ``{id}`` is a node id (``HP:0001250``; percent-encoded or not) or an index.
- With run folders (:class:`ark.serve.runs.RunBrowser`, as ``ark serve --runs`` browses them): ``ark://GRAPH/runs``
  (the runs and their metrics), one resource per run ``ark://GRAPH/runs/{run}`` (config, metrics, the questions it
  got wrong) and ``ark://GRAPH/runs/{run}/trajectories/{position}`` (one question's record, long texts cut).

``GRAPH`` is the graph's name made URI-safe. Every page is bounded by the server's ``--max-chars`` (a node page by
twice that: its ``get_node`` part and its neighbour list each); nothing is written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from .graph_tools import GraphTools

NAMED_PER_GROUP = 8  # neighbours named per (relation, direction, type) group on a node page
RECORD_TEXT_CHARS = 1500  # each string of a trajectory record served as a resource


def graph_slug(tools: GraphTools) -> str:
    """The graph's name as a URI host: lower case letters, digits and dashes."""
    name = tools.graph.info.label().lower()
    return re.sub(r"[^a-z0-9-]+", "-", name).strip("-") or "graph"


def schema_page(tools: GraphTools) -> str:
    """The schema tool's text and the graph's degree statistics."""
    import pyarrow.compute as pc

    from .tools import graph_schema

    g = tools.graph
    degrees = np.diff(np.asarray(g.indptr))
    texts = pc.utf8_trim_whitespace(g.nodes.column("text"))
    no_text = int(pc.sum(pc.or_kleene(pc.is_null(texts), pc.equal(texts, ""))).as_py() or 0)
    stats = ["", "Statistics:",
             f"  degree: mean {degrees.mean():.2f}, median {np.median(degrees):g}, max {degrees.max():,} "
             f"(node [{int(degrees.argmax())}] {g.name(int(degrees.argmax()))}); isolated nodes: "
             f"{int((degrees == 0).sum()):,}" if len(degrees) else "  (no nodes)"]
    stats.append(f"  nodes without text: {no_text:,}")
    return graph_schema.run(tools, graph_schema.GraphSchemaArgs()).text + "\n" + "\n".join(stats)


def node_page(tools: GraphTools, ref: str) -> str:
    """One node's page (see the module doc); an unknown node is a resource error naming what to send."""
    from mcp.server.mcpserver.exceptions import ResourceError

    from ark.methods.ark.tools.observations import node_label

    from .fit import fit_entries
    from .tools import get_node

    g = tools.graph
    text = ref.strip()
    ref_value = int(text) if text.isdigit() and not g.has_node(text) else text
    result = get_node.run(tools, get_node.GetNodeArgs(node=ref_value))
    if not result.ok:
        raise ResourceError(result.text)
    data = result.data
    assert isinstance(data, get_node.GetNodeResult)
    found = g.neighbors(data.index)
    nodes, rels, out = (np.asarray(found.nodes), np.asarray(found.relations), np.asarray(found.outgoing))
    entries = []
    for group in data.neighbours:
        keep = ((rels == g.relation_types.index(group.relation)) & (out == (group.direction == "out"))
                & (np.asarray(g.node_type_codes)[nodes] == g.node_types.index(group.node_type)))
        members = list(dict.fromkeys(nodes[keep].tolist()))
        arrow = "->" if group.direction == "out" else "<-"
        named = ", ".join(node_label(n, g.name(n), g.node_type(n), 120) for n in members[:NAMED_PER_GROUP])
        more = f" and {len(members) - NAMED_PER_GROUP} more" if len(members) > NAMED_PER_GROUP else ""
        entries.append([f"- {group.relation} {arrow} {group.node_type} ({group.count}): {named}{more}"])
    neighbours, _ = fit_entries(["", "Neighbours by relation:"], entries, [], tools.limits.max_chars)
    return result.text + ("\n" + neighbours if entries else "")


def _clip(value: Any, limit: int) -> Any:
    """``value`` with every string longer than ``limit`` cut (a record stays valid JSON, only shorter)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + f" ... [{len(value) - limit} characters cut]"
    if isinstance(value, list):
        return [_clip(item, limit) for item in value]
    if isinstance(value, dict):
        return {key: _clip(item, limit) for key, item in value.items()}
    return value


def _run_reader(read: Callable[[], Any]) -> str:
    from mcp.server.mcpserver.exceptions import ResourceError

    from .runs import RunNotFound

    try:
        return json.dumps(read(), ensure_ascii=False, indent=1, default=str)
    except RunNotFound as exc:
        raise ResourceError(str(exc)) from None


def register_resources(server: MCPServer, tools: GraphTools, runs: list[Path] | None = None) -> list[str]:
    """Add the resources (and templates) to ``server``; returns their URIs."""
    from mcp.server.mcpserver.resources.templates import ResourceSecurity

    slug, name = graph_slug(tools), tools.graph.info.label()
    base = f"ark://{slug}"
    server.resource(f"{base}/schema", name="schema", title=f"Schema of {name}", mime_type="text/plain",
                    description="Node and edge types with counts, which node types each relation connects, degree "
                                "statistics.")(lambda: schema_page(tools))

    def node(id: str) -> str:  # noqa: A002 - the template's variable name
        return node_page(tools, id)

    server.resource(f"{base}/node/{{id}}", name="node", title=f"A node of {name}", mime_type="text/plain",
                    description="One node by id (e.g. " + tools.graph.node_id(0) + ") or index: name, type, "
                                "properties, text, and its neighbours by relation and type.",
                    security=ResourceSecurity(exempt_params={"id"}))(node)  # an id is looked up, never a path
    uris = [f"{base}/schema", f"{base}/node/{{id}}"]
    if runs:
        uris += _register_runs(server, base, runs)
    return uris


def _register_runs(server: MCPServer, base: str, roots: list[Path]) -> list[str]:
    from .runs import RunBrowser

    browser = RunBrowser(roots)
    server.resource(f"{base}/runs", name="runs", title="Run folders", mime_type="application/json",
                    description="The run folders served (--runs): method, graph, model, queries, hit@1, MRR.")(
        lambda: _run_reader(browser.list))
    uris = [f"{base}/runs"]
    def reader(run: str) -> Callable[[], str]:
        return lambda: _run_reader(lambda: browser.detail(run))

    for run in browser.runs():  # listed by name; runs added later are still read through the template
        server.resource(f"{base}/runs/{run}", name=f"run {run}", mime_type="application/json",
                        description=f"Run {run}: config, metrics overall and per template, the questions it got "
                                    "wrong.")(reader(run))
        uris.append(f"{base}/runs/{run}")

    def run_detail(run: str) -> str:
        return _run_reader(lambda: browser.detail(run))

    def trajectory(run: str, position: int) -> str:
        return _run_reader(lambda: _clip(browser.trajectory(run, position), RECORD_TEXT_CHARS))

    server.resource(f"{base}/runs/{{run}}", name="run", mime_type="application/json",
                    description="One run folder by name: config, metrics, the questions it got wrong.")(run_detail)
    server.resource(f"{base}/runs/{{run}}/trajectories/{{position}}", name="trajectory",
                    mime_type="application/json",
                    description=f"One question's record of a run (its agents' steps; strings cut to "
                                f"{RECORD_TEXT_CHARS} characters), by position 0, 1, ...")(trajectory)
    return [*uris, f"{base}/runs/{{run}}", f"{base}/runs/{{run}}/trajectories/{{position}}"]
