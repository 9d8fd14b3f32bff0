"""``ark methods [NAME]``: every registered method with its options, defaults and one-line description.

Reads the registry's specs only: no method implementation and no optional extra is imported.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from .common import console, fail, guarded


def register(app: typer.Typer) -> None:
    app.command("methods")(guarded(methods))


def methods(
    name: Annotated[str | None, typer.Argument(help="Show one method's options with their descriptions.")] = None,
) -> None:
    """List the retrieval methods (for --method) and their options (for --set KEY=VALUE)."""
    from ..methods import MethodError, get_method_spec, method_specs
    from ..methods.options import describe_options

    try:
        specs = [get_method_spec(name)] if name else list(method_specs().values())
    except MethodError as exc:
        fail(str(exc))
    if name is None:
        table = Table(title="Methods (ark methods NAME shows one method's options)", title_justify="left")
        for column in ("method", "family", "description", "options"):
            table.add_column(column, overflow="fold")
        for spec in specs:
            options = _short_options(describe_options(spec.options))
            needs = f" (extra: {', '.join(spec.requires)})" if spec.requires else ""
            table.add_row(Text(spec.name), Text(spec.family), Text(spec.summary + needs), Text(options or "-"))
        console.print(table)
        return
    spec = specs[0]
    console.print(Text(f"{spec.name}: {spec.summary}"))
    if spec.paper:
        console.print(Text(f"paper: {spec.paper}"), style="dim")
    if spec.docs:
        console.print(Text(f"docs: {spec.docs}"), style="dim")
    if spec.uses_llm:
        fallback = "or the offline policy when none is configured" if spec.offline else "required (no offline policy)"
        console.print(f"uses a chat model: --model / --base-url, {fallback}", style="dim")
    if spec.default_truncate:
        console.print(Text(f"evaluations score its top {spec.default_truncate} by default (ark eval --truncate)"),
                      style="dim")
    table = Table(title=f"Options of {spec.name} (--set KEY=VALUE)", title_justify="left")
    for column in ("key", "type", "default", "description"):
        table.add_column(column, overflow="fold")
    for option in describe_options(spec.options):
        table.add_row(Text(option.key), Text(option.type), Text(repr(option.default)), Text(option.description))
    console.print(table)


def _short_options(options: list) -> str:
    """Top-level options as ``key=default``; a nested group as ``group.* (N options)``."""
    parts: list[str] = []
    groups: dict[str, int] = {}
    for option in options:
        group, dot, _ = option.key.partition(".")
        if dot:
            if group not in groups:
                parts.append(group)
            groups[group] = groups.get(group, 0) + 1
        else:
            parts.append(f"{option.key}={option.default!r}")
    return ", ".join(f"{p}.* ({groups[p]} options)" if p in groups else p for p in parts)
