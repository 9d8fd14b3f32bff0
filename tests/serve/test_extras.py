"""Without their extras, ``ark mcp`` and ``ark serve`` stop with one line naming the extra to install."""

from __future__ import annotations

import importlib.util

from typer.testing import CliRunner

from ark.cli.main import app


def test_missing_extra_is_named(monkeypatch):
    real = importlib.util.find_spec
    missing = {"mcp", "fastapi"}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name in missing else real(name, *a))
    for command, extra in (("mcp", "ark-kg[mcp]"), ("serve", "ark-kg[serve]")):
        result = CliRunner().invoke(app, [command, "hpo"])
        assert result.exit_code == 2 and extra in " ".join(result.output.split()), result.output
