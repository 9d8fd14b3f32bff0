"""The prompting baselines (GraphScout's Table 1's seven, and ARK's and SeedER's LLM baselines) are registered
with their paper and docs page, and each refuses to run without a chat model with one line naming the fix (the
Python API and every command alike)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ark.methods import MethodError, method_specs

from .conftest import build

BASELINES = ["base-llm", "text-rag", "graph-rag", "cypher", "graph-cot", "polyg", "graph-counselor", "tog",
             "kar", "avatar"]
REPO = Path(__file__).parents[3]


def test_each_is_listed_with_its_paper_and_docs_page():
    specs = method_specs()
    for name in BASELINES:
        spec = specs[name]
        assert spec.uses_llm and not spec.offline and spec.paper
        page = REPO / spec.docs
        assert page.name == f"{name}.md" and page.is_file()
        assert "**Algorithm" in page.read_text() and "**Budgets.**" in page.read_text()


def test_ark_methods_shows_the_paper(cli_methods):
    result = cli_methods("methods", "graph-cot")
    assert result.exit_code == 0 and "paper: Jin et al., Graph Chain-of-Thought" in result.text
    assert "docs: docs/methods/graph-cot.md" in result.text
    assert "uses a chat model: --model / --base-url, required (no offline policy)" in result.text


@pytest.fixture
def cli_methods():
    from ark.cli.methods_cmd import register
    from tests.support.cli import cli_invoker

    return cli_invoker(register)


@pytest.mark.parametrize("name", BASELINES)
def test_without_a_model_the_method_names_the_fix(name, clinical):
    with pytest.raises(MethodError, match="--model NAME with --base-url"):
        build(name, clinical, None)


@pytest.mark.parametrize("name", BASELINES)
@pytest.mark.parametrize("offline", [False, True])
def test_the_cli_refuses_to_run_without_a_model_in_one_line(name, offline, cli, clinical_dir, tmp_path, no_llm):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "a", "query": "q", "answer": "x"}\n')
    flags = ["--offline"] if offline else []
    result = cli("eval", clinical_dir, "-m", name, "-q", queries, "--run-dir", tmp_path / "r", *flags)
    assert result.exit_code == 2, result.output
    assert result.output.strip().count("\n") == 0 and "has no offline policy" in result.text
    assert not (tmp_path / "r" / "results.jsonl").exists()
