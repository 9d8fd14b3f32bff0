"""``ark``'s top-level help page (drawn by :mod:`ark.cli.top_help`) and its errors are what typer prints for the
same app built the plain way, every module registered on a ``typer.Typer`` and rendered by typer's own renderer:
the oracle. Each side runs in a fresh interpreter (typer reads its colour settings when its renderer is imported),
plain at several widths and in colour."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

RENDER = """
import importlib, json, sys
import typer
from typer.testing import CliRunner
from ark.cli import main as cli

if sys.argv[1] == "typer":  # the whole app as typer builds it: commands first, then groups, in registration order
    app = typer.Typer(callback=cli._no_options, **cli.APP_SETTINGS)
    for module in ("graph_cmd", "ask_cmd", "eval_cmd", "experiment_cmd", "methods_cmd", "quiz_cmd", "trajectory_cmd",
                   "serve_cmd", "train_cmd", "model_cmd", "distill_cmd"):
        importlib.import_module(f"ark.cli.{module}").register(app)
else:
    app = cli.app
runner = CliRunner()
outputs = [(done.exit_code, done.output) for done in (runner.invoke(app, argv) for argv in json.loads(sys.argv[2]))]
print(json.dumps(outputs))
"""

ARGVS = [[], ["--help"], ["--help", "ask"], ["--help", "--no-such-flag"], ["--help", "--", "ask"], ["--no-such-flag"],
         ["no-such-command"], ["ak"], ["grap"], ["ask", "--help"], ["ask"], ["ask", "hpo", "q", "--top", "0"],
         ["graph"], ["graph", "--help"], ["graph", "nosuch"], ["eval", "compare", "--help"], ["train", "--help"],
         ["methods", "no-such-method"]]


def _render(side: str, env: dict[str, str]) -> list[list]:
    done = subprocess.run([sys.executable, "-c", RENDER, side, json.dumps(ARGVS)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("settings", [{"COLUMNS": "60"}, {"COLUMNS": "100"}, {"COLUMNS": "200"},
                                      {"COLUMNS": "80", "FORCE_COLOR": "1"}], ids=["60", "100", "200", "colour"])
def test_the_top_level_help_and_errors_are_typers(settings):
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR", "TERMINAL_WIDTH", "COLUMNS")}
    env.update(settings)
    ark, oracle = _render("ark", env), _render("typer", env)
    for argv, mine, typers in zip(ARGVS, ark, oracle, strict=True):
        assert mine == typers, argv
    assert "Commands" in ark[1][1] and "distill" in ark[1][1]
    if "FORCE_COLOR" in settings:
        assert "\x1b[" in ark[1][1]  # the colour case really has colour
