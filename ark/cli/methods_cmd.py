"""``ark methods [NAME]``: every registered method with its options, defaults and one-line description.

Reads the registry's specs only: no method implementation and no optional extra is imported.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from .common import console, fail, guarded


def register(app: typer.Typer) -> None:
    app.command("methods")(guarded(methods))


def methods(
    name: Annotated[str | None, typer.Argument(help="Show one method's options with their descriptions.")] = None,
    show_preset: Annotated[str | None, typer.Option(
        "--show-preset", metavar="PRESET", help="List what a preset (paper) changes, per method: the option, its "
        "default, the paper's value and where the paper states it.")] = None,
) -> None:
    """List the retrieval methods (for --method) and their options (for --set KEY=VALUE)."""
    from ..methods import MethodError, get_method_spec, method_specs
    from ..methods.options import describe_options

    try:
        specs = [get_method_spec(name)] if name else list(method_specs().values())
    except MethodError as exc:
        fail(str(exc))
    if show_preset is not None:
        _show_preset(show_preset, specs)
        return
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
    for preset in spec.presets:
        console.print(Text(f"--preset {preset.name}: {preset.paper}'s settings ({', '.join(preset.keys())}; "
                           f"ark methods {spec.name} --show-preset {preset.name})"), style="dim")
    table = Table(title=f"Options of {spec.name} (--set KEY=VALUE)", title_justify="left")
    for column in ("key", "type", "default", "description"):
        table.add_column(column, overflow="fold")
    for option in describe_options(spec.options):
        table.add_row(Text(option.key), Text(option.type), Text(repr(option.default)), Text(option.description))
    console.print(table)


def _show_preset(name: str, specs: list) -> None:
    """The table of ``ark methods --show-preset NAME``: every method with that preset, each option it changes."""
    from ..methods.options import describe_options
    from ..methods.presets import PresetError, check_preset_name

    try:
        check_preset_name(name)
    except PresetError as exc:
        fail(str(exc))
    having = [spec for spec in specs if any(p.name == name for p in spec.presets)]
    if not having:
        fail(f"no method shown has the preset {name!r}; the methods with it: "
             f"{', '.join(s.name for s in _all_with(name)) or 'none'}")
    table = Table(title=f"--preset {name}: the options it sets (--config and --set still override them)",
                  title_justify="left")
    for column in ("method", "option", "default", name, "source"):
        table.add_column(column, overflow="fold")
    for spec in having:
        preset = next(p for p in spec.presets if p.name == name)
        defaults = {o.key: o.default for o in describe_options(spec.options)}
        for setting in preset.settings:
            table.add_row(Text(spec.name), Text(setting.key), Text(json.dumps(defaults.get(setting.key))),
                          Text(json.dumps(setting.value)), Text(f"{preset.paper}, {setting.source}"))
        if spec.name == "seeder" and name == "paper":
            _seeder_training_rows(table)
    console.print(table)


def _seeder_training_rows(table: Table) -> None:
    """``ark train seeder --preset paper``: Appendix D.2's network and Table 7's column for the graph."""
    from ..methods.seeder.config import PAPER_COLUMNS, paper_training_values

    columns = {column: paper_training_values(column) for column in PAPER_COLUMNS}
    table.add_row(Text("seeder (ark train seeder)"), Text("architecture"), Text('"ours"'), Text('"paper"'),
                  Text("SeedER, Appendix D.2"))
    for key in columns["prime"]:
        shown = " / ".join(f"{column} {json.dumps(values[key])}" for column, values in columns.items())
        table.add_row(Text("seeder (ark train seeder)"), Text(key), Text("-"), Text(shown),
                      Text("SeedER, Table 7 (the graph's STaRK dataset; PRIME's elsewhere)"))


def _all_with(name: str) -> list:
    from ..methods import method_specs

    return [spec for spec in method_specs().values() if any(p.name == name for p in spec.presets)]


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
