"""``ark ask GRAPH QUESTION``: run one method on one question and show the answer and how it was found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..text import clean_inline, json_terminal_safe
from .common import (
    GRAPH_HELP,
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
from .method_options import build_retriever, method_command, method_selection, resolve_choice
from .trace_view import print_trajectory

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..methods.base import MethodOutput

DEFAULT_METHOD = "ark"


def register(app: typer.Typer) -> None:
    app.command("ask", cls=method_command(DEFAULT_METHOD))(guarded(ask))


def ask(
    ctx: typer.Context,
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)],
    question: Annotated[str, typer.Argument(help="The question, in plain language.")],
    top: Annotated[int, typer.Option(min=1, help="How many ranked nodes to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full record (ranking + trajectories) as JSON.")]
    = False,
    trajectories: Annotated[Path | None, typer.Option(
        help="Append the run's record to this JSONL file (packed; `ark trajectory show/export` read it).")] = None,
    svg: Annotated[Path | None, typer.Option(
        "--svg", help="Write the evidence drawing (anchors, followed edges, answers) to this SVG file.")] = None,
    width: WidthOption = None,
) -> None:
    """Answer QUESTION over GRAPH (default method: the ARK agents, with an LLM if configured, else the offline
    policy). Method options: --set KEY=VALUE, e.g. --set n_agents=5 --set max_steps=10."""
    selection = method_selection(ctx)
    from ..runtime.trajectory_file import pack_record
    from ..sandbox.usage import SANDBOX_USAGE
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
    sandboxes_before = SANDBOX_USAGE.snapshot()
    try:
        with spinner(f"Running {choice.name} ..."):
            output = retriever.retrieve(question, max(top, 100))  # closes the method: its sandbox workers ended
    except Exception as exc:  # the LLM client raises LLMError with a clear message
        fail(f"{type(exc).__name__}: {one_line(str(exc))}", code=1)
    record = question_record(question, choice.name, output, graph)
    sandbox_usage = SANDBOX_USAGE.since(sandboxes_before)
    if sandbox_usage is not None:  # the workers' CPU time, outside this process's own
        record["sandbox_usage"] = sandbox_usage.to_json()
    if trajectories is not None:
        try:
            append_jsonl(trajectories, [pack_record(record)])
        except OSError as exc:
            fail(f"cannot write --trajectories {trajectories}: {exc}")
    _check_agents(output)
    if svg is not None:
        _write_svg(svg, question, output, graph, top)
    if as_json:
        print(json_terminal_safe(json.dumps(record, ensure_ascii=False)))
        return
    for trajectory in output.trajectories or []:
        print_trajectory(console, trajectory, graph)
    _print_ranking(question, output, graph, top)
    typed = output.record
    if typed is not None and typed.confidence:
        colour = {"high": "green", "medium": "yellow", "low": "red"}.get(typed.confidence, "white")
        console.print(Text.assemble(("Confidence: ", "bold"), (typed.confidence, colour),
                                    f" — {typed.confidence_reason}" if typed.confidence_reason else ""))
    if output.answer is not None:
        console.print(Text(f"Answer ({output.answer.type}): {output.answer.text}"))
    usage = typed.total_tokens() if typed is not None else 0
    who = (typed.policy if typed is not None else "") or choice.name
    agents = f" · {len(output.trajectories)} agent(s)" if output.trajectories else ""
    wall_s = typed.wall_s if typed is not None else 0.0
    sandbox = f" · sandbox CPU {sandbox_usage.worker_cpu_s:.2f} s" if sandbox_usage is not None else ""
    console.print(f"[dim]{escape(who)}{agents} · {wall_s:.2f} s"
                  + (f" · {usage:,} tokens" if usage else "") + sandbox + "[/]", highlight=False)


def question_record(question: str, method: str, output: MethodOutput, graph: KnowledgeGraph) -> dict[str, Any]:
    """The JSON record of one answered question (for ``--json``, ``--trajectories`` and ``--svg``): the method's
    own record (``ark``: the retrieval with its fused ranking) plus its trajectories under ``agents``; for methods
    without a record the ranking with ids, names and types."""
    record = output.record_dict()
    if record is None:
        record = {"question": question, "method": method, "ranked": [
            {"index": i, "node_id": graph.node_id(i), "name": graph.name(i), "type": graph.node_type(i),
             "score": round(float(s), 6)} for i, s in zip(output.indices, output.scores, strict=False)]}
    if output.answer is not None:
        record["answer"] = output.answer.to_dict()
    agents = output.trajectory_dicts()
    if agents is not None:
        record["agents"] = agents
    return record


def _write_svg(path: Path, question: str, output: MethodOutput, graph: KnowledgeGraph, top: int) -> None:
    """The evidence drawing of the answer as a standalone SVG file (written whole)."""
    from ..runtime.evidence_graph import AnswerMark, evidence_graph_of
    from ..runtime.evidence_svg import render_svg
    from ..storage.atomic import atomic_write_text

    votes, ties = output.votes(), output.tie_groups()
    answers = [AnswerMark(index, votes.get(index), ties.get(index)) for index in output.indices]
    drawing = evidence_graph_of(question, output.trajectories or [], answers, graph, top=top)
    try:
        atomic_write_text(path, '<?xml version="1.0" encoding="UTF-8"?>\n' + render_svg(drawing))
    except OSError as exc:
        fail(f"cannot write --svg {path}: {exc}")
    err_console.print(Text(f"Evidence drawing ({len(drawing.nodes)} node(s), {len(drawing.edges)} edge(s)): {path}"))


def _check_agents(output: MethodOutput) -> None:
    """Exit with the first error when every agent failed; warn that the answer is partial when some did (a method
    fails the question itself unless --allow-partial, so this sees failed agents only in a partial result)."""
    failed, total = output.failed_agents(), len(output.trajectories or [])
    if failed and len(failed) == total:
        fail(f"every agent failed; first error: {failed[0].error}", code=1)
    if failed:
        err_console.print(f"[yellow]warning:[/] partial answer (--allow-partial): {len(failed)} of "
                          f"{total} agent(s) failed; first error: {escape(one_line(str(failed[0].error)))}",
                          highlight=False, soft_wrap=True)


def _print_ranking(question: str, output: MethodOutput, graph: KnowledgeGraph, top: int) -> None:
    # Names, questions and model-written reasoning are data, not rich markup: cells are plain Text.
    if not output.indices:
        console.print("[yellow]No node was added to the answer.[/]")
        return
    votes = output.votes()
    title = f"Nodes touched while answering: {question}" if output.answer is not None else f"Answer to: {question}"
    console.print(Text(title, style="italic"))  # its own line: a table wraps its title at the table's width
    table = Table()
    columns = ("#", "id", "name", "type", "votes" if votes else "score", "evidence")
    for column in columns:
        table.add_column(column, overflow="fold", justify="right" if column in ("#", "votes", "score") else "left")
    ranks = tied_ranks(output.indices, output.tie_groups())
    for rank, (index, score) in enumerate(zip(output.indices[:top], output.scores[:top], strict=False), start=1):
        evidence = next(iter(output.evidence(index)), None) or clean_inline(graph.text(index), 80)
        weight = str(votes.get(index, "")) if votes else f"{score:.3f}"
        table.add_row(*(Text(cell) for cell in (ranks.get(index, str(rank)), graph.node_id(index), graph.name(index),
                                                 graph.node_type(index), weight, evidence)))
    console.print(table)
    if any(r.endswith("=") for r in ranks.values()):
        console.print("[dim]n= : tied answers (same rank group: the graph does not distinguish them)[/]",
                      highlight=False)


def tied_ranks(indices: list[int], group: dict[int, int]) -> dict[int, str]:
    """Each shown node's rank as a competition rank of its tie group ("1=", "1=", "3"), from the record's tie
    groups (:meth:`MethodOutput.tie_groups`); empty where the method records no groups."""
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
