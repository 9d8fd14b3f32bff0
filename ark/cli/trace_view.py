"""How one agent's recorded trajectory reads in the terminal, the same in ``ark ask`` and ``ark trajectory show``.

Steps are numbered from 1 (a step is one model turn); a step's calls are listed under its number, lettered when it
made several ("2a", "2b"); a step without a call says so. Every call that looked for nodes ends with "→ N nodes",
"→ 0 nodes" included; a failed call says "error" and its kind. Everything from the graph, the model or code output
is printed as plain :class:`~rich.text.Text` or escaped markup (the console then escapes control characters).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..text import clean_inline

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..runtime.records import StepRecord, ToolCallRecord, Trajectory

CODE_OUTPUT_LINES = 12  # lines of a code call's output shown under it
ARGUMENT_CHARS = 90  # a call's arguments, shown on its line
# Keys of a call's structured result that list the nodes it looked for (searches, code touching nodes, answers).
NODE_LISTS = ("results", "touched", "added")


def print_trajectory(console: Console, trajectory: Trajectory, graph: KnowledgeGraph | None = None,
                     observation_chars: int | None = None) -> None:
    """Print one agent's header line and its numbered steps. ``graph`` (optional) names the nodes that calls'
    arguments give by index; ``observation_chars`` (optional) shows each call's observation cut to that length,
    and each step's wall time."""
    steps = trajectory.steps
    status = trajectory.stop_reason + (f" ({trajectory.error})" if trajectory.error else "")
    usage = trajectory.usage.total_tokens
    tokens = f" · {usage:,} tokens" if usage else ""
    console.print(f"[bold]Agent {trajectory.agent_index}[/] · {len(steps)} steps · {escape(status)}"
                  f"{tokens}", highlight=False)
    for number, step in enumerate(steps, start=1):
        _print_step(console, number, step, graph, observation_chars)


def step_labels(number: int, calls: int) -> list[str]:
    """The labels of a step's calls: ``["3"]`` for one call, ``["3a", "3b", ...]`` for several (``"3aa"`` after
    ``"3z"``)."""
    if calls <= 1:
        return [str(number)]
    return [f"{number}{_letters(position)}" for position in range(calls)]


def _letters(position: int) -> str:
    """0 → a, 25 → z, 26 → aa (spreadsheet column letters)."""
    out = ""
    position += 1
    while position:
        position, rest = divmod(position - 1, 26)
        out = chr(ord("a") + rest) + out
    return out


def _print_step(console: Console, number: int, step: StepRecord, graph: KnowledgeGraph | None,
                observation_chars: int | None) -> None:
    calls, observations = step.tool_calls, step.observations
    timing = f"  [dim]step {step.wall_s or 0:.2f} s[/]" if observation_chars is not None else ""
    if not calls:
        kind = "no tool call" if step.corrective else "answer"
        content = escape(clean_inline(step.content or "", ARGUMENT_CHARS))
        console.print(f"{_label(str(number))}[yellow]({kind})[/] {content}{timing}", highlight=False)
        return
    for position, (label, call) in enumerate(zip(step_labels(number, len(calls)), calls, strict=True)):
        observation = str(observations[position]) if position < len(observations) else ""
        code = _code_argument(call.arguments)
        shown = "code below" if code is not None else short_arguments(call.arguments, graph)
        console.print(f"{_label(label)}[cyan]{escape(call.name)}[/]({escape(shown)})"
                      f"{_outcome(call)}{timing if position == 0 else ''}", highlight=False)
        if code is not None:  # code-running tools: the code in full, then what it printed
            _print_block(console, code, "       │ ")
            if position < len(observations):
                _print_block(console, observation, "       → ", max_lines=CODE_OUTPUT_LINES)
        elif observation_chars is not None:
            console.print(Text("       " + clean_inline(observation, observation_chars), style="dim"))


def _label(label: str) -> str:
    """A call's number, right-aligned so that the names line up (``  3.  ``, `` 12b. ``)."""
    return f"{label + '.':>6} "


def _outcome(call: ToolCallRecord) -> str:
    """`` → N nodes`` for a call that looked for nodes, `` (error: kind)`` for a failed call, else nothing."""
    if not call.ok:
        return f" [red](error{': ' + escape(str(call.error)) if call.error else ''})[/]"
    count = node_count(call)
    return "" if count is None else f" → {count_of(count)}"


def node_count(call: ToolCallRecord) -> int | None:
    """How many nodes a call found, or None for a call that does not look for nodes (``finish``). A record from
    before calls kept their structured result counts only the nodes it names."""
    nodes, result = call.node_indices or [], call.result
    if nodes or (isinstance(result, dict) and any(isinstance(result.get(k), list) for k in NODE_LISTS)):
        return len(nodes)
    return None


def count_of(count: int, noun: str = "node") -> str:
    """``1 node``, ``0 nodes``, ``16 nodes``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _code_argument(raw: str) -> str | None:
    """The ``code`` argument of a call, when it has one (code interpreters)."""
    try:
        args = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        return None
    code = args.get("code") if isinstance(args, dict) else None
    return code if isinstance(code, str) else None


def _print_block(console: Console, text: str, prefix: str, max_lines: int | None = None) -> None:
    lines = str(text).rstrip("\n").splitlines() or [""]
    if max_lines is not None and len(lines) > max_lines:
        lines = [*lines[:max_lines], f"... ({len(lines) - max_lines} more lines)"]
    for line in lines:
        console.print(Text(prefix + line, style="dim" if prefix.strip() == "→" else ""), soft_wrap=True)


def short_arguments(raw: str, graph: KnowledgeGraph | None = None, limit: int = ARGUMENT_CHARS) -> str:
    """The arguments of a call in one short plain-text line (a node index shown with the node's name when
    ``graph`` is given)."""
    try:
        args = json.loads(raw)
    except (json.JSONDecodeError, TypeError):
        return clean_inline(str(raw), limit)
    if not isinstance(args, dict):
        return clean_inline(raw, limit)
    if "answer_nodes" in args and isinstance(args["answer_nodes"], list):
        return count_of(len(args["answer_nodes"]))
    parts = []
    for key, value in args.items():
        if key == "node_index" and isinstance(value, int) and graph is not None and graph.is_valid_index(value):
            value = f"{value}: {graph.name(value)}"
        text = " ".join(str(value).split())
        parts.append(f"{key}={text[:50] + '...' if len(text) > 50 else text}")
    joined = ", ".join(parts)
    return joined if len(joined) <= limit else joined[: limit - 3] + "..."
