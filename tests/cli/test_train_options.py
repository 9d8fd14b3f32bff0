"""The trained retrievers' ``ark train`` commands share their flags (ark/cli/train_options.py): each takes the graph,
``--out/-o``, ``--set/-s`` (repeatable), ``--seed`` (>= 0) and, where torch trains, ``--threads`` (>= 1),
``--force`` and ``--progress/--no-progress``, with its own help; bad values are refused naming the flag."""

from __future__ import annotations

import pytest
import typer

from ark.cli.train_cmd import register
from tests.support.cli import cli_invoker

SHARED = {"--out": ("-o",), "--set": ("-s",), "--seed": ()}
TORCH = {"--threads": (), "--force": (), "--progress": ("--no-progress",)}
COMMANDS = {"avatar": SHARED, "mor": {**SHARED, **TORCH}, "mfar": {**SHARED, **TORCH},
            "seeder": {**SHARED, **TORCH}}


def _options(name: str) -> dict[str, object]:
    app = typer.Typer()
    register(app)
    command = typer.main.get_command(app).commands["train"].commands[name]
    return {opt: param for param in command.params for opt in (*param.opts, *param.secondary_opts)}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_train_command_takes_the_shared_flags_with_its_own_help(name):
    options = _options(name)
    for flag, aliases in COMMANDS[name].items():
        assert flag in options, f"ark train {name} lacks {flag}"
        assert all(options[alias] is options[flag] for alias in aliases)
        assert options[flag].help
    assert options["--set"].multiple and options["--seed"].default == 0
    assert "KEY=VALUE" in options["--set"].help
    assert f"models/{name}-GRAPH" in options["--out"].help


@pytest.mark.parametrize(("args", "message"), [(("--seed", "-1"), "--seed"), (("--threads", "0"), "--threads")])
def test_the_shared_bounds_are_checked_before_any_work(args, message, tmp_path):
    cli = cli_invoker(register)
    result = cli("train", "mfar", "hpo", "--queries", tmp_path / "q.jsonl", *args)
    assert result.exit_code == 2 and message in result.text
