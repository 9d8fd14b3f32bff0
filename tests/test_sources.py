"""The package's own sources: every module compiles without a warning (an invalid escape in a docstring is a
``SyntaxWarning`` today and a ``SyntaxError`` in a later Python)."""

from __future__ import annotations

import warnings
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ark"


def test_every_module_compiles_without_a_warning() -> None:
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                compile(path.read_text(encoding="utf-8"), str(path), "exec")
            except (SyntaxError, SyntaxWarning) as exc:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{getattr(exc, 'lineno', '?')}: {exc}")
    assert not problems, problems
