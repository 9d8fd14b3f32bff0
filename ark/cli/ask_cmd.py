"""``ark ask GRAPH QUESTION``: run the ARK agents on one question and show the answer and how it was found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from ..agent.fusion import FUSIONS
from ..tools.observations import clean_inline
from .common import console, err_console, fail, load_graph, make_policy


def register(app: typer.Typer) -> None:
    app.command("ask")(ask)


def ask(
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help="Built-in graph name (e.g. hpo) or directory.")],
    question: Annotated[str, typer.Argument(help="The question, in plain language.")],
    agents: Annotated[int, typer.Option("--agents", min=1, help="Parallel agents whose answers are fused.")] = 3,
    steps: Annotated[int, typer.Option("--steps", min=1, help="Maximum steps per agent.")] = 20,
    model: Annotated[str | None, typer.Option(help="Chat model name (else ARK_MODEL).")] = None,
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint (else OPENAI_BASE_URL).")] = None,
    offline: Annotated[bool, typer.Option(help="Use the offline policy even if a model is configured.")] = False,
    fusion: Annotated[str, typer.Option(help=f"Fusion of the agents' lists: {', '.join(FUSIONS)}.")] = "votes",
    top: Annotated[int, typer.Option(min=1, help="How many ranked nodes to show.")] = 10,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full record (ranking + trajectories) as JSON.")]
    = False,
    trajectories: Annotated[Path | None, typer.Option(help="Append the run's record to this JSONL file.")] = None,
) -> None:
    """Answer QUESTION over GRAPH with the ARK agent (an LLM if configured, else the offline policy)."""
    from ..agent import ARK
    from ..index import open_index

    if fusion not in FUSIONS:
        fail(f"unknown fusion {fusion!r}; valid: {', '.join(FUSIONS)}")
    if not question.strip():
        fail("the question is empty")
    graph = load_graph(graph_name, quiet=as_json)
    with err_console.status("Opening the text index (built on first use) ..."):
        index = open_index(graph, kind="bm25", progress=False)
    policy = make_policy(model=model, base_url=base_url, offline=offline)
    ark = ARK(graph, llm=policy, index=index, n_agents=agents, max_steps=steps, fusion=fusion,
              trajectory_path=trajectories)
    try:
        with err_console.status(f"Running {agents} agent(s) ..."):
            result = ark.retrieve(question)
    except Exception as exc:  # the LLM client raises LLMError with a clear message
        fail(f"{type(exc).__name__}: {exc}")
    _check_agents(result)
    if as_json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return
    _print_trace(result, graph)
    _print_ranking(result, graph, top)
    usage = result.usage
    console.print(f"[dim]{escape(result.policy)} · {len(result.trajectories)} agent(s) · {result.wall_s:.2f} s"
                  + (f" · {usage.total_tokens:,} tokens" if usage.total_tokens else "") + "[/]", highlight=False)


def _check_agents(result) -> None:
    """Exit with the first error when every agent failed (e.g. the endpoint rejected the key); warn when some did.

    The loop records a policy failure in the trajectory instead of raising (one agent must not sink the others),
    so without this check an unreachable or misconfigured endpoint would look like an empty answer and exit 0.
    """
    failed = [t for t in result.trajectories if t.error]
    if failed and len(failed) == len(result.trajectories):
        fail(f"every agent failed; first error: {failed[0].error}", code=1)
    if failed:
        err_console.print(f"[yellow]warning:[/] {len(failed)} of {len(result.trajectories)} agent(s) failed; "
                          f"first error: {escape(failed[0].error or '')}", highlight=False)


def _print_ranking(result, graph, top: int) -> None:
    # Names, questions and model-written reasoning are data, not rich markup: cells are plain Text.
    table = Table(title=Text(f"Answer to: {result.question}"), title_justify="left")
    for column in ("#", "id", "name", "type", "votes", "evidence"):
        table.add_column(column, overflow="fold", justify="right" if column in ("#", "votes") else "left")
    reasons: dict[int, str] = {}
    for trajectory in result.trajectories:
        for index, reason in trajectory.reasoning.items():
            reasons.setdefault(int(index), reason)
    for rank, node in enumerate(result.ranked[:top], start=1):
        evidence = reasons.get(node.index) or clean_inline(graph.text(node.index), 80)
        table.add_row(*(Text(cell) for cell in (str(rank), node.node_id, node.name, node.type, str(node.votes),
                                                 evidence)))
    if not result.ranked:
        console.print("[yellow]No node was added to the answer.[/]")
        return
    console.print(table)


def _print_trace(result, graph) -> None:
    for trajectory in result.trajectories:
        status = trajectory.stop_reason + (f" ({trajectory.error})" if trajectory.error else "")
        console.print(f"[bold]Agent {trajectory.agent_index}[/] · {len(trajectory.steps)} steps · {escape(status)}",
                      highlight=False)
        for step in trajectory.steps:
            for call in step.tool_calls:
                found = f" → {len(call.node_indices)} node(s)" if call.node_indices else ""
                mark = "" if call.ok else " [red](error)[/]"
                line = escape(f"{call.name}({_short_args(call.arguments, graph)})")
                console.print(f"  {step.index + 1:>2}. {line}{found}{mark}", highlight=False)


def _short_args(raw: str, graph, limit: int = 90) -> str:
    """The arguments of a call in one short plain-text line (node indices shown with the node's name)."""
    try:
        args = json.loads(raw)
    except json.JSONDecodeError:
        return raw[:limit]
    if not isinstance(args, dict):
        return raw[:limit]
    if "answer_nodes" in args and isinstance(args["answer_nodes"], list):
        return f"{len(args['answer_nodes'])} node(s)"
    parts = []
    for key, value in args.items():
        if key == "node_index" and isinstance(value, int) and graph.is_valid_index(value):
            value = f"{value}: {graph.name(value)}"
        text = str(value)
        parts.append(f"{key}={text[:50] + '...' if len(text) > 50 else text}")
    joined = ", ".join(parts)
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."
