"""The command blocks the README and docs/ show, run as a reader would run them (smolagents' test_all_docs.py is the
model). A fenced ``bash`` block runs when the line before it (blank lines aside) is a marker:

- ``<!-- runnable -->``: offline and fast; run in a fresh, empty ``ARK_HOME``;
- ``<!-- runnable hpo -->``: needs the built-in HPO graph; run in the test run's home with HPO built (slow).

Each block runs whole under ``bash -e -o pipefail`` (a command piped into another still fails the block) from the
repository root, with ``ark`` on ``PATH`` (this checkout's ``python -m ark.cli.main``), no model configured and a
time limit; a command that exits non-zero fails the test with
its output. Any other ``<!-- runnable ... -->`` marker is an error, so a typo never silently skips a block.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import USER_ENV_KEYS

ROOT = Path(__file__).resolve().parents[1]
KINDS = {"": 120, "hpo": 300}  # marker kind -> seconds a block may take
MARKER = re.compile(r"^<!--\s*runnable(?P<kind>\s+[a-z]+)?\s*-->\s*$")
FIRST_COMMANDS = [
    'pip install -e ".[test]"                                            # set up',
    "python -m pytest                                                    # test",
    'ark ask hpo "Which genes are implicated in Marfan syndrome?"        # the main job',
]


@dataclass(frozen=True)
class Block:
    """One runnable command block: where it is, its kind and its text."""

    path: Path
    line: int
    kind: str
    text: str

    @property
    def name(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def runnable_blocks(path: Path) -> list[Block]:
    """The blocks of ``path`` marked runnable; a marker not followed by a ``bash`` block, or of an unknown kind,
    raises ``ValueError`` naming the page and line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks = []
    for number, line in enumerate(lines, 1):
        match = MARKER.match(line.strip())
        if match is None:
            if line.strip().startswith("<!-- runnable"):
                raise ValueError(f"{path}:{number}: malformed marker {line.strip()!r}; use <!-- runnable --> "
                                 f"or <!-- runnable KIND --> with KIND in {sorted(k for k in KINDS if k)}")
            continue
        kind = (match.group("kind") or "").strip()
        if kind not in KINDS:
            raise ValueError(f"{path}:{number}: unknown runnable kind {kind!r}; valid: {sorted(k for k in KINDS if k)}")
        start = number
        while start < len(lines) and not lines[start].strip():
            start += 1
        if start >= len(lines) or lines[start].strip() != "```bash":
            raise ValueError(f"{path}:{number}: a runnable marker must be followed by a ```bash block")
        end = start + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end >= len(lines):
            raise ValueError(f"{path}:{start + 1}: the ```bash block is never closed")
        blocks.append(Block(path, start + 1, kind, "\n".join(lines[start + 1 : end])))
    return blocks


def all_blocks() -> list[Block]:
    return [block for page in doc_pages() for block in runnable_blocks(page)]


def _params() -> list:
    marks = {"": (), "hpo": (pytest.mark.slow,)}
    return [pytest.param(block, id=block.name, marks=marks[block.kind]) for block in all_blocks()]


def _ark_on_path(folder: Path) -> Path:
    """A ``bin`` folder whose ``ark`` runs this checkout's command line with this interpreter."""
    folder.mkdir(parents=True, exist_ok=True)
    ark = folder / "ark"
    ark.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ark.cli.main "$@"\n')
    ark.chmod(ark.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def run_block(block: Block, home: Path, bin_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key not in USER_ENV_KEYS}
    env.update(ARK_HOME=str(home), PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}", COLUMNS="120",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p))
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=KINDS[block.kind])


@pytest.mark.parametrize("block", _params())
def test_a_runnable_docs_block_runs(block: Block, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    home = request.getfixturevalue("hpo_home") if block.kind == "hpo" else tmp_path / "ark-home"
    done = run_block(block, home, _ark_on_path(tmp_path / "bin"))
    assert done.returncode == 0, f"{block.name} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"


def test_the_docs_mark_blocks_of_each_kind() -> None:
    kinds = {block.kind for block in all_blocks()}
    assert kinds == set(KINDS), f"runnable kinds found in the docs: {sorted(kinds)}"


def test_the_readme_opens_with_its_three_commands() -> None:
    """CI runs the README's test command: the first block keeps set-up, test and the main job, word for word."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    first = text.split("```bash\n", 1)[1].split("\n```", 1)[0]
    assert first.splitlines() == FIRST_COMMANDS


def test_a_failing_block_fails_and_bad_markers_are_refused(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("<!-- runnable -->\n\n```bash\nark methods no-such-method\n```\n")
    (block,) = runnable_blocks(page)
    assert block.text == "ark methods no-such-method" and block.line == 3
    assert run_block(block, tmp_path / "home", _ark_on_path(tmp_path / "bin")).returncode != 0
    piped = Block(page, 3, "", "ark methods no-such-method | cat")
    assert run_block(piped, tmp_path / "home", _ark_on_path(tmp_path / "bin")).returncode != 0
    for bad in ("<!-- runnable gpu -->\n```bash\nls\n```\n", "<!-- runnable -->\ntext\n", "<!-- runnabel -->\n"):
        page.write_text(bad)
        if "runnabel" in bad:
            assert runnable_blocks(page) == []  # not a marker at all: plain HTML comment
            continue
        with pytest.raises(ValueError, match="page.md:1"):
            runnable_blocks(page)


def table_row_words(page: Path) -> dict[int, int]:
    """The words of each table row of ``page`` (line number -> count), markup (``|``, backticks, stars) aside."""
    rows = {}
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("|") and not set(line) <= set("|-: "):
            rows[number] = len(re.sub(r"[|`*]", " ", line).split())
    return rows


def test_the_architecture_page_is_a_map(tmp_path: Path) -> None:
    """docs/ARCHITECTURE.md stays a one-page map: at most 80 words a table row (the detail lives in the modules)."""
    rows = table_row_words(ROOT / "docs" / "ARCHITECTURE.md")
    assert len(rows) >= 20, rows  # the folder table is read (37 rows on 2 December 2026, the longest 74 words)
    assert {line: words for line, words in rows.items() if words > 80} == {}
    wordy = tmp_path / "page.md"
    wordy.write_text("| a | b |\n|---|---|\n| `x` | " + "word " * 81 + "|\n", encoding="utf-8")
    assert table_row_words(wordy) == {1: 2, 3: 82}
