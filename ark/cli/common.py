"""Pieces every command shares: the consoles, opening a graph with visible progress, choosing the policy."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..llm import ChatPolicy

console = Console()
err_console = Console(stderr=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a clear error and exit with ``code``. ``message`` is shown verbatim (never read as rich markup: it
    often quotes user input such as paths and questions)."""
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(code)


def load_graph(name_or_path: str, quiet: bool = False) -> KnowledgeGraph:
    """Open a built-in graph (building it on first use, with a spinner) or a graph directory."""
    from ..loaders import open_graph

    try:
        with err_console.status("Opening graph ...") as status:
            graph = open_graph(name_or_path, status=lambda text: status.update(text))
    except (ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    if not quiet and graph.metadata.get("credit"):
        err_console.print(f"[dim]Graph {graph.metadata.get('name', name_or_path)!r}: uses the "
                          f"{graph.metadata['credit']}.[/]")
    return graph


def make_policy(
    model: str | None = None,
    base_url: str | None = None,
    temperature: float | None = None,
    offline: bool = False,
) -> ChatPolicy | None:
    """The configured LLM client, or ``None`` (meaning: the offline policy) when no model is configured."""
    if offline:
        err_console.print("[yellow]Using the offline policy (no LLM): a deterministic baseline, not a model.[/]")
        return None
    from ..llm import OpenAIChatClient, resolve_settings

    overrides = {"model": model, "base_url": base_url, "temperature": temperature}
    settings = resolve_settings(**{k: v for k, v in overrides.items() if v is not None})
    if not settings.configured():
        err_console.print(
            "[yellow]No LLM configured (--model/--base-url or ARK_MODEL/OPENAI_BASE_URL): using the offline policy, "
            "a deterministic baseline, not a model.[/]"
        )
        return None
    return OpenAIChatClient(settings)
