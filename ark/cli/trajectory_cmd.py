"""``ark trajectory show FILE``: render one recorded retrieval (question, each agent's calls, the fused ranking);
``ark trajectory export FILE --out OUT``: the records unpacked, in the ARK authors' format, or as SFT samples."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from .common import WidthOption, check_writable, console, fail, guarded, set_line_width
from .trace_view import print_trajectory

trajectory_app = typer.Typer(help="Inspect recorded agent trajectories (JSONL files).", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(trajectory_app, name="trajectory")


EXPORT_FORMATS = ("records", "reference", "sft")


def _read_records(file: Path):
    """The file's records (unpacked one at a time as they are used), or exit with one line."""
    from ..runtime.trajectory_file import TrajectoryRecords

    if not file.is_file():
        fail(f"no such file: {file}")
    try:
        records = TrajectoryRecords(file)
    except (ValueError, UnicodeDecodeError) as exc:
        fail(f"{file} is not a JSONL trajectory file: {exc}")
    if not len(records):
        fail(f"{file} holds no records")
    return records


@trajectory_app.command("show")
@guarded
def show(
    file: Annotated[Path, typer.Argument(help="A trajectory JSONL file (one record per question) or JSON file.")],
    index: Annotated[int, typer.Option("--index", "-n", min=0, help="Which record of the file (0-based).")] = 0,
    observation_chars: Annotated[int, typer.Option(min=20, help="Characters of each observation to show.")] = 160,
    top: Annotated[int, typer.Option(min=1, help="How many fused nodes to show.")] = 20,
    width: WidthOption = None,
) -> None:
    """Show one record: per agent its steps numbered as `ark ask` numbers them (a step's calls lettered), each call
    with a short observation, then the ranking."""
    set_line_width(width)
    records = _read_records(file)
    if not 0 <= index < len(records):
        fail(f"--index {index} is out of range: {file} holds {len(records)} record(s) (0..{len(records) - 1})")
    record = _checked(file, records, index)
    render(record, observation_chars, top)


@trajectory_app.command("export")
@guarded
def export(
    file: Annotated[Path, typer.Argument(help="A trajectory JSONL file (packed or not).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="JSONL file to write.")],
    to: Annotated[str, typer.Option("--to", help="records: the full records, unpacked (readable with jq); "
                                    "reference: the ARK authors' per-question JSON; sft: one chat sample per "
                                    "agent.")] = "records",
) -> None:
    """Write a trajectory file's records unpacked, in the reference format, or as SFT distillation samples."""
    from ..runtime.records import Retrieval
    from ..storage.jsonl import write_jsonl_atomic

    if to not in EXPORT_FORMATS:
        fail(f"unknown --to {to!r}; valid: {', '.join(EXPORT_FORMATS)}")
    if out.resolve() == file.resolve():
        fail(f"--out {out} is the file being read; choose another path")
    records = _read_records(file)
    check_writable(out, "cannot write --out")

    def rows():
        for index in range(len(records)):
            record = _checked(file, records, index)
            if to == "records":
                yield record
                continue
            retrieval = Retrieval.from_dict({**record, "agents": record.get("agents", record.get("trajectories"))})
            if to == "reference":
                yield {"id": record["id"], **retrieval.to_reference_format()} if "id" in record \
                    else retrieval.to_reference_format()
            else:
                yield from retrieval.to_sft_samples()

    write_jsonl_atomic(out, rows())
    console.print(f"Wrote {to} of {len(records)} record(s) to {out}")


def _checked(file: Path, records, index: int) -> dict:
    """Record ``index`` unpacked, or exit naming what is wrong with it."""
    from ..runtime.trajectory_file import TrajectoryFormatError

    try:
        record = records[index]
    except TrajectoryFormatError as exc:
        fail(str(exc))
    problem = retrieval_record_problem(record)
    if problem is not None:
        fail(f"{file}, record {index} is not a retrieval record ({problem}). Give a trajectory file: the "
             "--trajectories file of `ark ask`, or an eval run's trajectories.jsonl (not its results.jsonl)")
    return record


def retrieval_record_problem(record: object) -> str | None:
    """Why ``record`` cannot be shown as a retrieval (``Retrieval.to_dict()`` or a trajectories.jsonl line), or
    None when it can."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an object"
    agents = record.get("agents", record.get("trajectories"))
    if agents is None:
        return "no 'agents' or 'trajectories' field"
    if not isinstance(agents, list) or not all(isinstance(a, dict) for a in agents):
        return "its agents are not a list of trajectory objects"
    ranked = record.get("ranked", [])
    if not isinstance(ranked, list) or not all(isinstance(n, dict) for n in ranked):
        return "'ranked' is not a list of ranked-node objects"
    return None


def render(record: dict, observation_chars: int = 160, top: int = 20) -> None:
    """Print one retrieval record: ``Retrieval.to_dict()`` (``ark ask``) or a line of an eval run's
    ``trajectories.jsonl`` (the same record with its agents under ``trajectories``)."""
    from ..runtime.records import Trajectory

    agents_list = [Trajectory.from_dict(a) for a in record.get("agents") or record.get("trajectories") or []]
    question = record.get("question") or (agents_list[0].question if agents_list else "")
    console.print(f"[bold]Question:[/] {escape(str(question))}" + (f"  [dim]({escape(str(record['id']))})[/]"
                                                                 if "id" in record else ""))
    config = record.get("config", {})
    agents = config.get("n_agents", len(agents_list))
    console.print(f"[dim]policy {escape(str(record.get('policy') or '?'))} · "
                  f"graph {escape(str(record.get('graph') or '?'))} · "
                  f"{agents} agent(s) · max {config.get('max_steps', '?')} steps · "
                  f"fusion {config.get('fusion', '?')} · {record.get('wall_s', 0):.2f} s[/]")
    for agent in agents_list:
        print_trajectory(console, agent, observation_chars=observation_chars)
        added = ", ".join(escape(f"[{i}] {n}") for i, n in zip(agent.answer, agent.answer_ids, strict=False))
        console.print(f"[bold]Added:[/] {added or 'nothing'}", highlight=False)
    ranked = record.get("ranked", [])
    if not ranked:
        console.print("[yellow]The fused ranking is empty.[/]")
        return
    table = Table(title="Fused ranking", title_justify="left")
    numeric = ("#", "index", "votes", "score")
    for column in ("#", "index", "id", "name", "type", "votes", "score"):
        table.add_column(column, overflow="fold", justify="right" if column in numeric else "left")
    for rank, node in enumerate(ranked[:top], start=1):
        table.add_row(str(rank), str(node.get("index")), escape(str(node.get("node_id", ""))),
                      escape(str(node.get("name", ""))), escape(str(node.get("type", ""))),
                      str(node.get("votes", "")), f"{node.get('score', 0):.3f}")
    console.print(table)
    if len(ranked) > top:
        console.print(f"[dim]... and {len(ranked) - top} more[/]")
