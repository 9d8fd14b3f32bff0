"""ARK driven by a real model: SmolLM2-135M-Instruct behind the real llama-cpp-python server on loopback, one
question, two steps. Skipped, with the install command, where either is missing. What a user relies on: the run
completes (tool_choice negotiated if the server refuses ``required``), every step is recorded, and whatever the
model answers is a node some observation showed it."""

from __future__ import annotations

import pytest

from tests.support import llama_server

pytestmark = [pytest.mark.slow, pytest.mark.skipif(llama_server.missing() is not None,
                                                   reason=llama_server.missing() or "")]


def test_ark_runs_one_question_against_the_real_llama_server_with_smollm2(tmp_path):
    from ark.llm import OpenAIChatClient, resolve_settings
    from ark.methods.ark.api import ARK
    from ark.methods.ark.options import ArkOptions
    from tests.support.graphs import build_clinical_graph, build_index

    graph = build_clinical_graph()
    try:
        server = llama_server.llama_server(threads=1)
        url = server.__enter__()
    except llama_server.ServerCrashed as exc:
        pytest.skip(f"the installed llama-cpp-python server crashes natively: {exc}; rebuild another version")
    try:
        settings = resolve_settings(base_url=url, model=llama_server.MODEL_ALIAS, api_key="none", environ={},
                                    config_path=tmp_path / "absent.toml", use_cache=False, temperature=0.0,
                                    max_tokens=256, timeout_s=900, max_retries=0)
        ark = ARK(graph, llm=OpenAIChatClient(settings), index=build_index(graph),
                  config=ArkOptions(n_agents=1, max_steps=2, tool_choice="auto"))  # 0.3.36 asserts on required
        result = ark.retrieve("Which gene is associated with Marfan syndrome?")
    finally:
        server.__exit__(None, None, None)
    [trajectory] = result.trajectories
    assert trajectory.error is None, trajectory.error
    assert 1 <= len(trajectory.steps) <= 2 and trajectory.usage.total_tokens > 0
    shown = {n for step in trajectory.steps for call in step.tool_calls if call.name != "add_to_answer"
             for n in call.node_indices}
    assert set(trajectory.answer) <= shown  # answers come from what was seen
