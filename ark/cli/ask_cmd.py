"""``ark ask GRAPH QUESTION``: run one method on one question and show the answer and how it was found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..text import clean_inline, json_terminal_safe
from .common import (
    WidthOption,
    check_writable,
    console,
    err_console,
    fail,
    freeze_startup_objects,
    guarded,
    load_graph,
    one_line,
    set_line_width,
    spinner,
)
from .method_options import MethodSelection, build_retriever, method_options, resolve_choice
from .trace_view import print_trajectory

DEFAULT_METHOD = "ark"


def register(app: typer.Typer) -> None:
    app.command("ask")(guarded(ask))


@method_options(default_method=DEFAULT_METHOD)
def ask(
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help="Built-in graph name (e.g. hpo) or directory.")],
    question: Annotated[str, typer.Argument(help="The question, in plain language.")],
    top: Annotated[int, typer.Option(min=1, help="How many ranked nodes to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full record (ranking + trajectories) as JSON.")]
    = False,
    trajectories: Annotated[Path | None, typer.Option(
        help="Append the run's record to this JSONL file (packed; `ark trajectory show/export` read it).")] = None,
    svg: Annotated[Path | None, typer.Option(
        "--svg", help="Write the evidence drawing (anchors, followed edges, answers) to this SVG file.")] = None,
    width: WidthOption = None,
    *,
    selection: MethodSelection,
) -> None:
    """Answer QUESTION over GRAPH (default method: the ARK agents, with an LLM if configured, else the offline
    policy). Method options: --set KEY=VALUE, e.g. --set n_agents=5 --set max_steps=10."""
    from ..runtime.trajectory_file import pack_record
    from ..storage.jsonl import append_jsonl

    set_line_width(width)
    if not question.strip():
        fail("the question is empty")
    if trajectories is not None:
        check_writable(trajectories, "cannot write --trajectories")
    if svg is not None:
        check_writable(svg, "cannot write --svg")
    graph = load_graph(graph_name, quiet=as_json)
    choice = resolve_choice(selection, graph)
    retriever = build_retriever(choice, graph)
    freeze_startup_objects()
    try:
        with spinner(f"Running {choice.name} ..."):
            output = retriever.retrieve(question, max(top, 100))
    except Exception as exc:  # the LLM client raises LLMError with a clear message
        fail(f"{type(exc).__name__}: {one_line(str(exc))}", code=1)
    record = question_record(question, choice.name, output, graph)
    if trajectories is not None:
        try:
            append_jsonl(trajectories, [pack_record(record)])
        except OSError as exc:
            fail(f"cannot write --trajectories {trajectories}: {exc}")
    _check_agents(output.trajectories or [])
    if svg is not None:
        _write_svg(svg, record, graph, top)
    if as_json:
        print(json_terminal_safe(json.dumps(record, ensure_ascii=False)))
        return
    for trajectory in output.trajectories or []:
        print_trajectory(console, trajectory, graph)
    _print_ranking(question, output, record, graph, top)
    if record.get("confidence"):
        colour = {"high": "green", "medium": "yellow", "low": "red"}.get(record["confidence"], "white")
        console.print(Text.assemble(("Confidence: ", "bold"), (record["confidence"], colour),
                                    f" — {record['confidence_reason']}" if record.get("confidence_reason") else ""))
    if output.answer is not None:
        console.print(Text(f"Answer ({output.answer.type}): {output.answer.text}"))
    usage = record.get("usage", {}).get("total_tokens", 0)
    who = record.get("policy") or choice.name
    agents = f" · {len(output.trajectories)} agent(s)" if output.trajectories else ""
    console.print(f"[dim]{escape(who)}{agents} · {record.get('wall_s', 0):.2f} s"
                  + (f" · {usage:,} tokens" if usage else "") + "[/]", highlight=False)


def question_record(question: str, method: str, output: Any, graph: Any) -> dict[str, Any]:
    """The JSON record of one answered question: the method's own record (``ark``: the retrieval with its fused
    ranking) plus its trajectories under ``agents``; for other methods the ranking with ids, names and types."""
    if output.record is not None:
        record = dict(output.record)
    else:
        record = {"question": question, "method": method, "ranked": [
            {"index": i, "node_id": graph.node_id(i), "name": graph.name(i), "type": graph.node_type(i),
             "score": round(float(s), 6)} for i, s in zip(output.indices, output.scores, strict=False)]}
    if output.answer is not None:
        record["answer"] = output.answer.to_dict()
    if output.trajectories is not None:
        record["agents"] = output.trajectories
    return record


def _write_svg(path: Path, record: dict[str, Any], graph: Any, top: int) -> None:
    """The evidence drawing of ``record`` as a standalone SVG file (written whole)."""
    from ..runtime.evidence_graph import evidence_graph
    from ..runtime.evidence_svg import render_svg
    from ..storage.atomic import atomic_write_text

    drawing = evidence_graph(record, graph, top=top)
    try:
        atomic_write_text(path, '<?xml version="1.0" encoding="UTF-8"?>\n' + render_svg(drawing))
    except OSError as exc:
        fail(f"cannot write --svg {path}: {exc}")
    err_console.print(Text(f"Evidence drawing ({len(drawing.nodes)} node(s), {len(drawing.edges)} edge(s)): {path}"))


def _check_agents(trajectories: list[dict]) -> None:
    """Exit with the first error when every agent failed; warn that the answer is partial when some did (a method
    fails the question itself unless --allow-partial, so this sees failed agents only in a partial result)."""
    failed = [t for t in trajectories if t.get("error")]
    if failed and len(failed) == len(trajectories):
        fail(f"every agent failed; first error: {failed[0]['error']}", code=1)
    if failed:
        err_console.print(f"[yellow]warning:[/] partial answer (--allow-partial): {len(failed)} of "
                          f"{len(trajectories)} agent(s) failed; first error: {escape(one_line(failed[0]['error']))}",
                          highlight=False, soft_wrap=True)


def _print_ranking(question: str, output: Any, record: dict[str, Any], graph: Any, top: int) -> None:
    # Names, questions and model-written reasoning are data, not rich markup: cells are plain Text.
    if not output.indices:
        console.print("[yellow]No node was added to the answer.[/]")
        return
    votes = {int(node["index"]): node.get("votes") for node in record.get("ranked", []) if "votes" in node}
    reasons: dict[int, str] = {}
    for trajectory in output.trajectories or []:
        for index, reason in (trajectory.get("reasoning") or {}).items():
            reasons.setdefault(int(index), reason)
    title = f"Nodes touched while answering: {question}" if output.answer is not None else f"Answer to: {question}"
    console.print(Text(title, style="italic"))  # its own line: a table wraps its title at the table's width
    table = Table()
    columns = ("#", "id", "name", "type", "votes" if votes else "score", "evidence")
    for column in columns:
        table.add_column(column, overflow="fold", justify="right" if column in ("#", "votes", "score") else "left")
    ranks = tied_ranks(output.indices, record.get("ranked", []))
    for rank, (index, score) in enumerate(zip(output.indices[:top], output.scores[:top], strict=False), start=1):
        evidence = reasons.get(index) or clean_inline(graph.text(index), 80)
        weight = str(votes.get(index, "")) if votes else f"{score:.3f}"
        table.add_row(*(Text(cell) for cell in (ranks.get(index, str(rank)), graph.node_id(index), graph.name(index),
                                                 graph.node_type(index), weight, evidence)))
    console.print(table)
    if any(r.endswith("=") for r in ranks.values()):
        console.print("[dim]n= : tied answers (same rank group: the graph does not distinguish them)[/]",
                      highlight=False)


def tied_ranks(indices: list[int], ranked: list[dict[str, Any]]) -> dict[int, str]:
    """Each shown node's rank as a competition rank of its tie group ("1=", "1=", "3"), from the record's
    ``tie_group``; empty where the method records no groups."""
    group = {int(node["index"]): node.get("tie_group") for node in ranked if node.get("tie_group")}
    if not group:
        return {}
    first: dict[int, int] = {}
    size: dict[int, int] = {}
    for rank, index in enumerate(indices, start=1):
        g = group.get(index)
        if g is not None:
            first.setdefault(g, rank)
            size[g] = size.get(g, 0) + 1
    return {i: f"{first[g]}{'=' if size[g] > 1 else ''}" for i, g in group.items() if g in first}
