"""Pieces every command shares: the consoles, one-line errors, interrupts, opening a graph with visible progress,
choosing the policy."""

from __future__ import annotations

import errno
import functools
import gc
import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer
from rich.console import (
    Console,
    ConsoleDimensions,
    ConsoleOptions,
    ConsoleRenderable,
    RenderableType,
    RenderHook,
    RenderResult,
)
from rich.markup import escape
from rich.segment import Segment

from ..progress import use_console
from ..runtime.interrupts import EXIT_INTERRUPTED, INTERRUPTED, announce_interrupt, exit_on_next_interrupt
from ..text import escape_log_output, terminal_safe

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..llm import ChatPolicy


class _TerminalSafe:
    """A renderable whose text segments pass :func:`~ark.text.terminal_safe` (rich's own control segments and the
    styles it adds around text are kept: only the text is escaped)."""

    def __init__(self, renderable: RenderableType) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for segment in console.render(self.renderable, options):
            if segment.control or segment.text.isprintable():
                yield segment
            else:
                yield Segment(terminal_safe(segment.text), segment.style)


class TerminalSafeHook(RenderHook):
    """Everything a console prints goes through :func:`~ark.text.terminal_safe`: node names, model replies and code
    output reach the terminal with control characters escaped (no screen clearing, clipboard writes or cursor moves
    from the data), whichever command or table prints them."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        return [_TerminalSafe(renderable) for renderable in renderables]


UNWRAPPED_WIDTH = 100_000  # the width of a console that is not a terminal: lines are never wrapped


class LineWidthConsole(Console):
    """A console whose width is ``line_width`` when set (``--width N``); otherwise the terminal's width on a
    terminal (or ``COLUMNS``, or Jupyter's), and on a pipe or file no width at all: a line is as long as its text,
    never wrapped at rich's default 80 columns (so ``grep`` and ``less -S`` see whole lines)."""

    line_width: int | None = None

    @property
    def size(self) -> ConsoleDimensions:
        size = super().size
        if self.line_width is not None:
            return ConsoleDimensions(self.line_width, size.height)
        if not (self.is_terminal or self.is_jupyter or os.environ.get("COLUMNS", "").isdigit()):
            return ConsoleDimensions(UNWRAPPED_WIDTH, size.height)
        return size

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]


GRAPH_HELP = "A graph: a built-in name (hpo), a name given at import (--name) or a graph directory."

WidthOption = Annotated[int | None, typer.Option(
    min=20, help="Wrap output at N columns (default: the terminal's width; no wrapping when piped or redirected).")]


def set_line_width(width: int | None) -> None:
    """Both consoles at ``width`` columns until the command ends (:func:`guarded` restores them; None: as
    :class:`LineWidthConsole` chooses)."""
    console.line_width = err_console.line_width = width


console = LineWidthConsole()
err_console = LineWidthConsole(stderr=True)
for _console in (console, err_console):
    _console.push_render_hook(TerminalSafeHook())
use_console(err_console)  # progress bars draw on stderr through the same escape as every line
escape_log_output()  # log lines (a failed request's path, an exception about a model's text) print escaped too


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a clear error on one line and exit with ``code``. ``message`` is shown verbatim (never read as rich
    markup: it often quotes user input such as paths and questions) and never wrapped (the terminal wraps it)."""
    err_console.print(f"[bold red]error:[/] {escape(one_line(message))}", highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (line breaks included) made one space."""
    return " ".join(str(text).split())


WRITE_ERRORS = (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.ENOSPC, errno.EISDIR, errno.EEXIST,
                errno.EDQUOT)


def describe_os_error(exc: OSError) -> str:
    """One line for a file-system error: the path, and why (``cannot write`` for the errors writes meet)."""
    if exc.filename is None:
        return os_error_reason(exc)
    verb = "cannot write " if exc.errno in WRITE_ERRORS else ""
    return f"{verb}{exc.filename}: {os_error_reason(exc)}"


def os_error_reason(exc: OSError) -> str:
    """Why a write failed, with a hint for the usual causes."""
    hints = {
        errno.EROFS: "the file system is read-only; choose an output on a writable disk",
        errno.EACCES: "no permission; choose a folder you can write to",
        errno.EPERM: "not permitted; choose a folder you can write to",
        errno.ENOTDIR: "a parent of this path is a file, not a folder",
        errno.ENOSPC: "the disk is full",
        errno.EISDIR: "it is a folder; give a file path",
        errno.ENOENT: "files cannot be created there",
        errno.EINVAL: "not a place for an output file",
    }
    hint = hints.get(exc.errno or 0)
    reason = exc.strerror or str(exc)
    return f"{reason} ({hint})" if hint else reason


def guarded(command: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a command so that an unwritable output is one error line (exit 2) instead of a traceback, and Ctrl-C
    prints :data:`INTERRUPTED` (exit 130). Every write is whole-line or atomic, so a rerun resumes safely."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        widths = console.line_width, err_console.line_width
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            exit_on_next_interrupt()  # the process is ending: a second Ctrl-C must not print a traceback
            announce_interrupt(lambda: err_console.print(f"[yellow]{INTERRUPTED}[/]", soft_wrap=True))
            raise typer.Exit(EXIT_INTERRUPTED) from None
        except OSError as exc:
            fail(describe_os_error(exc))
        finally:
            console.line_width, err_console.line_width = widths  # a --width holds for its own command only

    return wrapper


class CommandProcess:
    """Whether this process is the ``ark`` command itself (set by its entry point), not a program or a test that
    runs the app in-process."""

    is_command = False


def freeze_startup_objects() -> None:
    """End of a command's start-up: what exists now (modules, the graph, its index, the method) lives until the
    process ends, so the cyclic garbage collector stops walking it, during the run and in the interpreter's final
    collection (~80 M instructions of an offline ``ark ask``). Objects made afterwards (the run's records, the files
    it writes) are collected and finalised at exit as usual; call this before the command opens a file of its own.
    Only in the ``ark`` process: a program running the app in-process keeps its collector as it was."""
    if CommandProcess.is_command:
        gc.freeze()


def check_writable(path: Path, what: str) -> None:
    """Exit with one line unless a file could be written at ``path`` (nothing is created; see
    :func:`~ark.storage.atomic.probe_writable`)."""
    from ..storage.atomic import probe_writable

    try:
        probe_writable(path)
    except OSError as exc:
        where = f" (at {exc.filename})" if exc.filename and Path(exc.filename) != Path(path).absolute() else ""
        fail(f"{what} {path}: {os_error_reason(exc)}{where}")


def spinner(text: str) -> AbstractContextManager[Any]:
    """``err_console.status(text)``: a spinner on a terminal (or in Jupyter). Elsewhere rich shows nothing for it
    (it is transient), so none is made: no import of rich's live display, no refresh thread."""
    if err_console.is_terminal or err_console.is_jupyter:
        return err_console.status(text)
    return nullcontext()


@contextmanager
def progress_status(text: str) -> Iterator[Callable[[str], None]]:
    """A spinner showing ``text`` on a terminal; yields ``update(text)``. Off a terminal (logs, CI, pipes) each
    update is printed as a line instead, so long first-use work is never silent."""
    if err_console.is_terminal:
        with err_console.status(text) as status:
            yield lambda update: status.update(update)
    else:
        yield lambda update: err_console.print(update, highlight=False, soft_wrap=True)


def load_graph(name_or_path: str, quiet: bool = False) -> KnowledgeGraph:
    """Open a built-in graph (building it on first use, with a spinner) or a graph directory."""
    from ..loaders import open_graph

    started = time.perf_counter()
    built: list[str] = []

    def show(text: str) -> None:  # what is built and why: a line that stays (a spinner's text would not)
        built.append(text)
        err_console.print(text, style="dim", highlight=False, soft_wrap=True)

    try:  # no spinner: opening maps files (fast), and a first build draws its own progress bar
        graph = open_graph(name_or_path, status=show)
    except (ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    if built:
        err_console.print(f"[dim]Graph {escape(repr(graph.info.name or name_or_path))} built in "
                          f"{time.perf_counter() - started:.1f} s: {graph.path}[/]", soft_wrap=True)
    if not quiet and graph.info.credit:
        err_console.print(f"[dim]Graph {escape(repr(graph.info.name or name_or_path))}: uses the "
                          f"{escape(str(graph.info.credit))}.[/]")
    return graph


def make_policy(
    model: str | None = None,
    base_url: str | None = None,
    temperature: float | None = None,
    offline: bool = False,
    adapter: str | None = None,
    max_tokens: int | None = None,
    max_tool_calls_per_turn: int | None = None,
    timeout_s: float | None = None,
    max_retries: int | None = None,
    announce_offline: bool = True,
) -> ChatPolicy | None:
    """The configured chat model, or ``None`` (meaning: the offline policy) when no model is configured.

    ``hf:PATH`` (a local Hugging Face model, e.g. a distilled student, optionally with a LoRA ``adapter``) runs in
    this process through :mod:`ark.llm.local_backend`; any other model name goes to the OpenAI-compatible
    endpoint. ``announce_offline=False`` leaves out the note that the offline policy runs (for callers that refuse
    to run without a model).
    """
    if offline:
        err_console.print("[yellow]Using the offline policy (no LLM): a deterministic baseline, not a model.[/]")
        return None
    from ..llm.settings import LOCAL_PREFIX, resolve_settings

    try:  # resolve_settings ignores the overrides left None
        settings = resolve_settings(model=model, base_url=base_url, temperature=temperature, max_tokens=max_tokens,
                                    max_tool_calls_per_turn=max_tool_calls_per_turn, timeout_s=timeout_s,
                                    max_retries=max_retries)
    except ValueError as exc:
        fail(str(exc))
    if settings.model and settings.model.startswith(LOCAL_PREFIX):
        local = _local_model(settings, adapter)
        if max_tool_calls_per_turn is not None:  # the flag wins over the cap a student's training data raised
            local.max_tool_calls_per_turn = max_tool_calls_per_turn  # type: ignore[attr-defined]  # the loop reads it
        return local
    if adapter is not None:
        fail(f"--adapter {adapter} needs a local model (--model hf:PATH), not {settings.model or 'no model'!r}")
    problem = settings_problem(settings, model, base_url)
    if problem is not None:
        fail(problem)
    if not settings.configured():
        if not announce_offline:
            return None
        err_console.print(
            "[yellow]No LLM configured (--model/--base-url or ARK_MODEL/OPENAI_BASE_URL): using the offline policy, "
            "a deterministic baseline, not a model.[/]"
        )
        return None
    from ..llm import OpenAIChatClient  # the openai SDK costs ~0.4 s of imports: only when a model is configured

    return OpenAIChatClient(settings)


def settings_problem(settings: Any, model: str | None, base_url: str | None) -> str | None:
    """Why half-given LLM settings cannot reach a model, or None (complete, or nothing given: the offline policy).

    A model without an endpoint or key (``--model gpt-4.1`` and no ``OPENAI_API_KEY``) or an endpoint without a
    model is an error, never a silent fall-back to the offline policy.
    """
    import os

    from ..llm.settings import ENV_VARS

    if settings.configured() or not (settings.model or settings.base_url):
        return None
    if settings.model:
        source = "--model" if model else (f"{ENV_VARS['model']}" if os.environ.get(ENV_VARS["model"])
                                           else "the [llm] table of $ARK_HOME/config.toml")
        return (f"model {settings.model!r} (from {source}) has no endpoint to call: set OPENAI_API_KEY for "
                "api.openai.com, or give --base-url (or OPENAI_BASE_URL) for another OpenAI-compatible server; "
                "--offline runs the offline policy instead")
    source = "--base-url" if base_url else "OPENAI_BASE_URL or $ARK_HOME/config.toml"
    return (f"endpoint {settings.base_url} (from {source}) has no model: give --model (or set ARK_MODEL); "
            "--offline runs the offline policy instead")


def _local_model(settings, adapter: str | None) -> ChatPolicy:
    """``--model hf:PATH``: the model loaded in this process (needs the ``train`` extra)."""
    from ..llm import LLMError

    try:
        from ..llm.local_backend import make_chat_client

        with err_console.status(f"Loading {settings.model} ..."):
            return make_chat_client(settings.model, settings, adapter=adapter)
    except LLMError as exc:
        fail(str(exc))
    except ImportError as exc:
        fail(f"--model {settings.model} runs the model in this process and needs the train extra: "
             f"pip install 'ark-kg[train]' ({exc})")
