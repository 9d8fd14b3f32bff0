"""The page ``ark --help`` (and ``ark`` alone) prints, drawn with rich as typer draws it.

Written by hand because typer's renderer (``typer.rich_utils``) imports ``rich.markdown`` (markdown-it) and
``rich.traceback`` (pygments) at its top: ~0.2 G instructions, half of what ``ark --help`` may cost, for markdown
help and tracebacks this page never shows. This module draws the same page with rich alone: the usage line, the
app's help, its one option (``--help``) and the command table (names and help from ``main.COMMANDS``, so no
command's module is imported). typer stays the oracle: tests/cli/test_top_help.py compares the page with typer's
rendering of the whole app at several widths, plain and in colour. Every other page and every error is typer's.

Kept by hand on purpose (issue 47 asked for public API): typer's one public way to draw a help page is the group's
``format_help``, which imports ``typer.rich_utils`` and asks every command for its help (importing every command's
module); tests/cli/test_startup.py holds ``ark --help`` to neither. The page reads the group through its public
calls and attributes only (``get_usage``, ``get_params``, each option's ``opts`` and ``help``).
"""

from __future__ import annotations

import inspect
import os
from typing import Any

from rich.align import Align
from rich.columns import Columns
from rich.console import Console, Group
from rich.highlighter import RegexHighlighter
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

# typer's styles (typer.rich_utils' STYLE_* defaults)
THEME = {"option": "bold cyan", "switch": "bold green", "negative_option": "bold magenta",
         "negative_switch": "bold red", "types": "bold yellow", "types_sep": "dim", "usage": "yellow"}
TABLE_STYLE: dict[str, Any] = {"show_header": False, "expand": True, "box": None, "show_lines": False, "leading": 0,
                               "border_style": None, "row_styles": None, "pad_edge": False, "padding": (0, 1)}


class OptionHighlighter(RegexHighlighter):
    """Options, switches, ``<types>`` and ``Usage:``, as typer highlights them."""

    highlights = [r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])", r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
                  r"(?P<types>\<[^\>]+\>)", r"(?P<usage>Usage: )"]


class TypesHighlighter(RegexHighlighter):
    """Dims the brackets around an option's type."""

    highlights = [r"^(?P<types_sep>(\[|<))", r"(?P<types_sep>\|)", r"(?P<types_sep>(\]|>))(\.\.\.)?$"]


HIGHLIGHT = OptionHighlighter()


def console() -> Console:
    """A console set up as typer's: colour forced by GITHUB_ACTIONS, FORCE_COLOR or PY_COLORS, width by
    TERMINAL_WIDTH."""
    force = True if any(os.getenv(name) for name in ("GITHUB_ACTIONS", "FORCE_COLOR", "PY_COLORS")) else None
    if os.getenv("_TYPER_FORCE_DISABLE_TERMINAL"):
        force = False
    width = os.getenv("TERMINAL_WIDTH")
    return Console(theme=Theme(THEME), highlighter=HIGHLIGHT, color_system="auto", force_terminal=force,
                   width=int(width) if width else None)


def print_page(group: Any, ctx: Any, listing: dict[str, str]) -> None:
    """Print the help of ``group`` (the ``ark`` app) with the commands of ``listing`` (name: help)."""
    out = console()
    out.print(Padding(HIGHLIGHT(group.get_usage(ctx)), 1), style="bold")
    if group.help:
        out.print(Padding(Align(_help_text(group.help), pad=False), (0, 1, 1, 1)))
    options = Table(highlight=True, **TABLE_STYLE)
    for param in group.get_params(ctx):
        options.add_row(*_option_row(param, ctx))
    if options.row_count:
        out.print(Panel(options, border_style="dim", title="Options", title_align="left"))
    commands = Table(highlight=False, **TABLE_STYLE)
    commands.add_column(style="bold cyan", no_wrap=True, width=max(map(len, listing), default=0))
    commands.add_column("Description", justify="left", no_wrap=False, ratio=10)
    for name, text in listing.items():
        commands.add_row(Text(name), HIGHLIGHT(Text.from_markup(inspect.cleandoc(text).split("\n\n")[0].strip())))
    if commands.row_count:
        out.print(Panel(commands, border_style="dim", title="Commands", title_align="left"))


def _help_text(text: str) -> Group:
    first, *rest = inspect.cleandoc(text).partition("\f")[0].split("\n\n")
    parts = [HIGHLIGHT(Text.from_markup(first.replace("\n", " ").strip()))]
    if rest:
        parts += [Text(""), HIGHLIGHT(Text.from_markup("\n\n".join(rest), style="dim"))]
    return Group(*parts)


def _option_row(param: Any, ctx: Any) -> list[Any]:
    """A row of the options table: long names, short names, their negative forms, the type, the help."""
    def names(opts: list[str], long: bool) -> str:
        return ",".join(opt for opt in opts if ("--" in opt) == long)

    negative = _NegativeHighlighter()
    display_type = getattr(param, "display_type_rich", None)  # typer's label of the option's type
    label = display_type(ctx) if display_type is not None else None
    help_lines = " ".join((param.help or "").split("\n")).strip()
    return [HIGHLIGHT(names(param.opts, True)), HIGHLIGHT(names(param.opts, False)),
            negative(names(param.secondary_opts, True)), negative(names(param.secondary_opts, False)),
            TypesHighlighter()(Text(label or "", style="bold yellow", overflow="fold")),
            Columns([HIGHLIGHT(Text.from_markup(help_lines))] if help_lines else [])]


class _NegativeHighlighter(RegexHighlighter):
    highlights = [r"(^|\W)(?P<negative_switch>\-\w+)(?![a-zA-Z0-9])",
                  r"(^|\W)(?P<negative_option>\-\-[\w\-]+)(?![a-zA-Z0-9])"]
