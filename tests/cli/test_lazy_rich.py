"""typer's renderer imported through :mod:`ark.cli.lazy_rich` prints exactly what it prints without the hook (help,
usage errors, markdown help, an uncaught exception's traceback) while ``rich.markdown`` and ``rich.traceback`` are
imported only when they are used. Each case runs in fresh interpreters, with and without the hook, compared."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

DEMO_APP = """
import sys
import typer
if sys.argv[1] == "hooked":
    from ark.cli import lazy_rich
    lazy_rich.install()
app = typer.Typer(rich_markup_mode=sys.argv[2] or None, pretty_exceptions_show_locals=False, add_completion=False)

@app.command()
def hello(name: str, count: int = typer.Option(1, min=1, help="How many **times** [bold]to greet[/].")) -> None:
    '''Greet NAME, *politely*.

    A second paragraph with `code` and [red]markup[/red].'''
    if name == "boom":
        raise ValueError("the demo command failed")
    print(f"hello {name}" * count)

@app.command()
def other() -> None:
    '''Another command.'''

app(sys.argv[3:])
"""

CLI = """
import sys
if sys.argv[1] == "hooked":
    sys.argv = ["ark", *sys.argv[2:]]
    from ark.cli.main import main
    main()
else:
    sys.argv = ["ark", *sys.argv[2:]]
    from ark.cli.main import app
    app()
"""

SHOW_MODULES = """
import sys, atexit
atexit.register(lambda: print("MODULES", "rich.markdown" in sys.modules, "rich.traceback" in sys.modules,
                              file=sys.__stderr__))
"""


def _run(code: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "100", "TERM": "dumb", "_TYPER_FORCE_DISABLE_TERMINAL": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.parametrize("argv", [["--help"], ["ask", "--help"], ["ask"], ["--no-such-flag"], ["graph"],
                                  ["eval", "run", "--help"], ["ask", "hpo", "q", "--top", "0"]])
def test_the_ark_command_prints_what_typer_prints_without_the_hook(argv):
    hooked, plain = _run(CLI, "hooked", *argv), _run(CLI, "plain", *argv)
    assert (hooked.returncode, hooked.stdout, hooked.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    assert hooked.stdout or hooked.stderr


@pytest.mark.parametrize("mode", ["rich", "markdown", ""])
@pytest.mark.parametrize("argv", [["--help"], ["hello", "--help"], ["hello"], ["hello", "x", "--count", "0"],
                                  ["hello", "boom"]])
def test_help_errors_markdown_and_tracebacks_are_unchanged(mode, argv):
    hooked, plain = _run(DEMO_APP, "hooked", mode, *argv), _run(DEMO_APP, "plain", mode, *argv)
    assert (hooked.returncode, hooked.stdout, hooked.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    if argv == ["hello", "boom"]:
        assert "the demo command failed" in hooked.stderr and hooked.returncode == 1


def test_help_does_not_import_markdown_or_traceback_and_an_error_imports_traceback_when_shown():
    help_run = _run(SHOW_MODULES + DEMO_APP, "hooked", "rich", "hello", "--help")
    assert "MODULES False False" in help_run.stderr
    markdown_run = _run(SHOW_MODULES + DEMO_APP, "hooked", "markdown", "hello", "--help")
    assert "MODULES True False" in markdown_run.stderr  # markdown help: the real Markdown renders it
    crash = _run(SHOW_MODULES + DEMO_APP, "hooked", "rich", "hello", "boom")
    assert "MODULES False True" in crash.stderr and "Traceback (most recent call last)" in crash.stderr


def test_the_renderer_holds_the_real_classes_behind_the_placeholders():
    code = ("from ark.cli import lazy_rich; lazy_rich.install()\n"
            "import sys, typer.rich_utils as r\n"
            "assert 'rich.markdown' not in sys.modules and 'rich.traceback' not in sys.modules\n"
            "import rich.markdown, rich.traceback\n"
            "assert type(r.Markdown('x')) is rich.markdown.Markdown\n"
            "assert r.Traceback.from_exception.__self__ is rich.traceback.Traceback\n"
            "assert sys.modules['rich.markdown'].Markdown is rich.markdown.Markdown\n"
            "print('ok')")
    done = _run(code)
    assert done.stdout.strip() == "ok", done.stderr
