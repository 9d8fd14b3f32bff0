"""The local Hugging Face chat back-end: clear load errors, real generation in the ARK loop, broken calls handled."""

from __future__ import annotations

import asyncio
import json
import shutil

import pytest

pytest.importorskip("transformers")

from ark.llm import LLMError, OpenAIChatClient  # noqa: E402
from ark.llm.local_backend import LocalChatClient, make_chat_client  # noqa: E402


def _copy_with_template(base, tmp_path, template):
    folder = tmp_path / "model"
    shutil.copytree(base, folder)
    (folder / "chat_template.jinja").unlink()
    if template is not None:
        (folder / "chat_template.jinja").write_text(template)
    return folder


def test_models_that_cannot_chat_with_tools_are_refused_clearly(tiny_base, tmp_path):
    with pytest.raises(LLMError, match="no chat template"):
        LocalChatClient(_copy_with_template(tiny_base, tmp_path / "a", None))
    plain = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    with pytest.raises(LLMError, match="no tool support: it drops the tool schemas, tool calls"):
        LocalChatClient(_copy_with_template(tiny_base, tmp_path / "b", plain))
    with pytest.raises(LLMError, match="cannot load a tokenizer"):
        LocalChatClient(tmp_path / "missing")


def test_untrained_model_runs_through_the_loop_without_crashing(clinical_graph, tiny_base):
    """A random model writes garbage; the loop corrects it and the run ends normally with tokens counted."""
    from ark.methods.ark.api import ARK

    client = LocalChatClient(tiny_base, max_new_tokens=24)
    retrieval = ARK(clinical_graph, llm=client, n_agents=1, max_steps=2).retrieve("Which genes cause Marfan syndrome?")
    trajectory = retrieval.trajectories[0]
    assert trajectory.error is None and trajectory.stop_reason in ("max_steps", "finish")
    assert len(trajectory.steps) >= 1 and trajectory.usage.completion_tokens > 0
    assert client.calls == len(trajectory.steps) and client.usage_total.prompt_tokens > 0


def test_broken_tool_calls_get_corrective_observations(clinical_graph, tiny_base, monkeypatch):
    from ark.llm import Usage
    from ark.methods.ark.api import ARK
    from ark.methods.ark.loop import NO_TOOL_CALL_MESSAGE

    client = LocalChatClient(tiny_base)
    replies = iter([
        '<tool_call>\n{"name": "search_in_graph", "arguments": {"query": "Marfan}\n</tool_call>',  # broken JSON
        "Let me think.\n<tool_call>\nsearch Marfan\n</tool_call>",  # no tool name at all
        '<tool_call>\n{"name": "finish", "arguments": {}}\n</tool_call>',
    ])
    monkeypatch.setattr(client, "generate_text", lambda *a, **k: (next(replies), Usage(1, 1, 2)))
    trajectory = ARK(clinical_graph, llm=client, n_agents=1, max_steps=5).retrieve("Marfan?").trajectories[0]
    first, second, third = trajectory.steps
    assert first.tool_calls[0].name == "search_in_graph" and not first.tool_calls[0].parsed_ok
    assert not first.tool_calls[0].ok and first.observations[0]  # the loop answered with an observation
    assert second.tool_calls == [] and second.corrective.endswith(NO_TOOL_CALL_MESSAGE)
    assert second.corrective.startswith("No tool call could be read from your reply. Write each call as <tool_call>")
    assert "search Marfan" in second.content
    assert third.tool_calls[0].name == "finish" and trajectory.stop_reason == "finish"


def test_sampling_is_seeded_and_greedy_is_deterministic(tiny_base):
    messages = [{"role": "user", "content": "Find nodes that answer the question: Marfan?"}]
    sampled = LocalChatClient(tiny_base, temperature=1.0, seed=3, max_new_tokens=12)
    again = LocalChatClient(tiny_base, temperature=1.0, seed=3, max_new_tokens=12)
    other = LocalChatClient(tiny_base, temperature=1.0, seed=4, max_new_tokens=12)
    texts = [c.generate_text(messages, [])[0] for c in (sampled, again, other)]
    assert texts[0] == texts[1]
    assert texts[0] != texts[2] or sampled.generate_text(messages, [], agent_index=1)[0] != texts[0]
    greedy = LocalChatClient(tiny_base, max_new_tokens=12)
    assert greedy.generate_text(messages, [])[0] == greedy.generate_text(messages, [])[0]
    reply = asyncio.run(greedy.next_message(messages, []))
    assert reply.message.role == "assistant" and reply.usage.total_tokens > reply.usage.prompt_tokens


def test_make_chat_client_resolves_local_and_remote_models(tiny_base):
    from ark.llm import LLMSettings

    local = make_chat_client(f"hf:{tiny_base}", LLMSettings(temperature=0.0, max_tokens=7, seed=1))
    assert isinstance(local, LocalChatClient) and local.max_new_tokens == 7 and local.temperature == 0.0
    assert local.name == f"hf:{tiny_base}"
    remote = make_chat_client("some-model", LLMSettings(base_url="http://127.0.0.1:9/v1"))
    assert isinstance(remote, OpenAIChatClient) and remote.settings.model == "some-model"
    with pytest.raises(LLMError, match="give the model folder"):
        make_chat_client("hf:")
    with pytest.raises(LLMError, match="adapter needs a local model"):
        make_chat_client("some-model", LLMSettings(), adapter="x")
    assert json.loads((tiny_base / "config.json").read_text())["model_type"] == "qwen3"


def test_replies_are_cached_on_disk_per_conversation_and_agent(tiny_base, tmp_path):
    messages = [{"role": "user", "content": "Find nodes that answer the question: Marfan?"}]
    client = LocalChatClient(tiny_base, max_new_tokens=8, cache_dir=tmp_path / "cache")
    first = asyncio.run(client.next_message(messages, []))
    again = asyncio.run(client.next_message(messages, []))
    assert not first.cached and again.cached and again.message == first.message
    assert client.calls == 1 and client.cache_hits == 1 and again.usage == first.usage
    shared = asyncio.run(client.next_message(messages, [], agent_index=1))  # greedy: the same reply for any agent
    assert shared.cached and shared.message == first.message and client.calls == 1
    sampling = LocalChatClient(tiny_base, max_new_tokens=8, temperature=1.0, seed=0, cache_dir=tmp_path / "cache")
    asyncio.run(sampling.next_message(messages, []))
    asyncio.run(sampling.next_message(messages, [], agent_index=1))  # sampling: each agent its own sample
    assert sampling.calls == 2 and sampling.cache_hits == 0
    reopened = LocalChatClient(tiny_base, max_new_tokens=8, cache_dir=tmp_path / "cache")
    assert asyncio.run(reopened.next_message(messages, [])).cached and reopened.calls == 0
    longer = LocalChatClient(tiny_base, max_new_tokens=9, cache_dir=tmp_path / "cache")
    assert not asyncio.run(longer.next_message(messages, [])).cached  # other decoding settings, other key
