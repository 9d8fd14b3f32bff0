"""Fixtures of the prompting baselines' tests: the clinical graph (in memory and saved), a real chat client on the
scripted loopback server, and ``ark eval`` through typer's CliRunner against that server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import cli_invoker
from tests.support.graphs import build_clinical_graph, save_clinical_graph


@pytest.fixture(scope="session")
def clinical():
    return build_clinical_graph()


@pytest.fixture(scope="session")
def clinical_dir(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("graphs") / "clinical")


@pytest.fixture
def chat(openai_server, tmp_path):
    """A real OpenAIChatClient talking to the scripted server (no cache)."""
    from ark.llm import OpenAIChatClient, resolve_settings

    settings = resolve_settings(base_url=openai_server.base_url, model="test-model", api_key="k", environ={},
                                config_path=tmp_path / "absent.toml", use_cache=False)
    return OpenAIChatClient(settings)


@pytest.fixture
def cli():
    from ark.cli.eval_cmd import register

    return cli_invoker(register)


@pytest.fixture
def eval_run(cli, clinical_dir, tmp_path, no_llm, openai_server):
    """``ark eval CLINICAL -m METHOD`` through the scripted server on ``rows``; returns (result, summary, per-query
    rows by id)."""

    def run(method: str, rows: list[dict], *sets: str):
        queries = tmp_path / "qa.jsonl"
        queries.write_text("".join(json.dumps(row) + "\n" for row in rows))
        run_dir = tmp_path / f"run-{method}"
        options = [part for value in sets for part in ("--set", value)]
        result = cli("eval", clinical_dir, "-m", method, "-q", queries, "--run-dir", run_dir, "--no-progress",
                     "--model", "test-model", "--base-url", openai_server.base_url, *options)
        assert result.exit_code == 0, result.output
        summary = json.loads((run_dir / "summary.json").read_text())
        per_query = {json.loads(line)["id"]: json.loads(line) for line in
                     (run_dir / "per_query.jsonl").read_text().splitlines()}
        return result, summary, per_query

    return run


def build(name: str, graph, llm, **options):
    """Method ``name`` on ``graph`` with ``llm`` as its chat model."""
    from ark.methods import MethodContext, build_method

    return build_method(name, graph, options, MethodContext(llm=llm))


def user_text(request: dict) -> str:
    """Everything the request's non-assistant messages say."""
    return "\n".join(m.get("content") or "" for m in request["messages"] if m["role"] != "assistant")
