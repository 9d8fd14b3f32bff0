"""`--timeout` and `--max-retries` beside the `[llm]` table: a slow server's first turn times out with the prompt's
length and the settings to raise, after exactly the tries asked for (the scripted loopback server as the model)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from tests.support.graphs import ONE_HOP, save_clinical_graph
from tests.support.openai_server import tool_reply

QUESTION, _ = ONE_HOP
pytestmark = pytest.mark.usefixtures("isolated_env")  # tests/conftest.py: own ARK_HOME, no LLM variables


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("graphs") / "clinical")


def test_a_first_turn_over_the_timeout_names_the_prompt_length_and_the_settings(graph_dir, openai_server,
                                                                              monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    openai_server.responder = lambda body: tool_reply(("finish", {}), delay_s=1.5)  # slower than the timeout
    result = CliRunner().invoke(app, ["ask", str(graph_dir), QUESTION, "--base-url", openai_server.base_url,
                                      "--model", "slow-cpu", "--set", "n_agents=1", "--timeout", "0.3",
                                      "--max-retries", "1"])
    assert result.exit_code != 0
    text = " ".join(result.output.split())
    assert "timed out: no complete reply within 0.3 s per try" in text and "(tried 2 times)" in text
    assert "the first turn's prompt was" in text and "characters with the tool schemas (about" in text
    assert "raise --timeout (timeout_s under [llm]" in text and "lower --max-retries" in text
    assert openai_server.request_count == 2  # --max-retries 1: one retry, not the default four


def test_the_flags_override_the_config_file(graph_dir, openai_server, monkeypatch, tmp_path):
    home = Path(__import__("os").environ["ARK_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text("[llm]\ntimeout_s = 0.2\nmax_retries = 3\n")
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    openai_server.responder = lambda body: tool_reply(("finish", {}), delay_s=0.6)
    result = CliRunner().invoke(app, ["ask", str(graph_dir), QUESTION, "--base-url", openai_server.base_url,
                                      "--model", "slow-cpu", "--set", "n_agents=1", "--timeout", "5",
                                      "--max-retries", "0"])
    assert result.exit_code == 0, result.output  # 5 s is enough; the file's 0.2 s would not be
    assert openai_server.request_count == 1
