"""The shared method flags (``--method``, ``--set``, the model flags...) reach a command as one MethodSelection through
its command class (:func:`ark.cli.method_options.method_command`), beside the command's own parameters."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from ark.cli.method_options import FLAGS, MethodSelection, method_command, method_selection


def _app(default_method: str | None) -> tuple[typer.Typer, list[tuple[str, bool, MethodSelection]]]:
    app = typer.Typer(add_completion=False)
    seen: list[tuple[str, bool, MethodSelection]] = []

    @app.command("run", cls=method_command(default_method))
    def run(ctx: typer.Context, name: str, progress: bool = False) -> None:
        seen.append((name, progress, method_selection(ctx)))

    return app, seen


def test_the_flags_become_one_selection_and_the_commands_own_parameters_stay_its_own() -> None:
    app, seen = _app("ark")
    words = ["x", "--set", "a=1", "--set", "b=2", "--candidate-types", "disease", "--seed", "3", "--progress",
             "--offline", "--method", "bm25", "--temperature", "0.5"]
    done = CliRunner().invoke(app, words)
    assert done.exit_code == 0, done.output
    ((name, progress, selection),) = seen
    assert (name, progress) == ("x", True)
    assert (selection.method, selection.sets, selection.candidate_types) == ("bm25", ["a=1", "b=2"], ["disease"])
    assert (selection.seed, selection.offline, selection.progress, selection.temperature) == (3, True, True, 0.5)


def test_flags_not_given_take_their_defaults_and_the_commands_default_method() -> None:
    for default in ("ark", None):
        app, seen = _app(default)
        assert CliRunner().invoke(app, ["x"]).exit_code == 0
        selection = seen[0][2]
        assert selection == MethodSelection(method=default, sets=[], config=None, model=None, base_url=None,
                                            offline=False, candidate_types=None, seed=0)


def test_the_help_lists_the_flags_after_the_commands_own_with_the_default_method() -> None:
    app, _ = _app("ark")
    page = CliRunner().invoke(app, ["--help"], env={"TERMINAL_WIDTH": "200"}).output
    assert page.index("--progress") < page.index("--method") < page.index("--allow-partial")
    assert "[default: ark]" in page and len(FLAGS) == 16


def test_a_command_without_the_class_has_no_selection_and_says_so() -> None:
    app = typer.Typer(add_completion=False)

    @app.command("plain")
    def plain(ctx: typer.Context) -> None:
        method_selection(ctx)

    done = CliRunner().invoke(app, [])
    assert isinstance(done.exception, RuntimeError)
    with pytest.raises(RuntimeError, match="cls=method_command"):
        raise done.exception
