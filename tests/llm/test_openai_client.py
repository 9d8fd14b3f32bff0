"""OpenAIChatClient against a real loopback OpenAI-compatible server (tests/support/openai_server.py)."""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ark.llm import (
    ChatPolicy,
    LLMError,
    LLMSettings,
    OpenAIChatClient,
    PolicyReply,
    ResponseCache,
    Usage,
    openai_client,
    request_key,
)
from tests.support.openai_server import ScriptedOpenAIServer, http_error, raw_reply, text_reply, tool_reply

TOOLS = [{
    "type": "function",
    "function": {
        "name": "search_in_graph",
        "description": "Search nodes by text.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
    },
}]
MESSAGES = [{"role": "system", "content": "You retrieve evidence."}, {"role": "user", "content": "seizures?"}]


def make_client(server: ScriptedOpenAIServer, cache_dir: Path | None = None, **settings) -> OpenAIChatClient:
    values = {"base_url": server.base_url, "model": "test-model", "api_key": "sk-test",
              "cache_dir": cache_dir, "max_retries": 2, "timeout_s": 10.0}
    values.update(settings)
    return OpenAIChatClient(LLMSettings(**values))


async def ask(client: OpenAIChatClient, agent_index: int = 0, messages: list[dict] = MESSAGES,
              tools: list[dict] = TOOLS, accept: bool = True, **kwargs) -> PolicyReply:
    """The next reply, accepted as a reader that parsed it would (the cue for the client to cache it)."""
    reply = await client.next_message(messages, tools, agent_index=agent_index, **kwargs)
    if accept:
        reply.accept()
    return reply


def run(coro):
    return asyncio.run(coro)


def test_tool_call_reply_is_parsed_with_usage(openai_server):
    openai_server.enqueue(tool_reply(("search_in_graph", {"query": "seizure"}), prompt_tokens=120,
                                     completion_tokens=15))
    client = make_client(openai_server)

    reply = run(ask(client))

    assert reply.message.to_openai() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1_0", "type": "function",
                        "function": {"name": "search_in_graph", "arguments": '{"query": "seizure"}'}}],
    }
    assert reply.usage == Usage(120, 15, 135)
    assert not reply.cached and reply.latency_s > 0
    assert client.calls == 1 and client.usage_total == Usage(120, 15, 135)
    assert client.name == "openai:test-model"
    assert isinstance(client, ChatPolicy)


def test_request_carries_tools_tool_choice_and_sampling(openai_server):
    openai_server.enqueue(text_reply("ok"), text_reply("ok"))
    client = make_client(openai_server, temperature=0.3, max_tokens=256, seed=40)

    run(ask(client, agent_index=2))
    run(ask(client, tools=[], tool_choice="auto"))

    sent, sent_without_tools = openai_server.requests
    assert sent["tools"] == TOOLS and sent["tool_choice"] == "required"
    assert sent["messages"] == MESSAGES and sent["model"] == "test-model"
    assert sent["temperature"] == 0.3 and sent["max_tokens"] == 256
    assert sent["seed"] == 42  # settings.seed + agent_index
    assert "tools" not in sent_without_tools and "tool_choice" not in sent_without_tools
    assert sent_without_tools["seed"] == 40
    assert openai_server.headers[0]["authorization"] == "Bearer sk-test"


def test_malformed_arguments_and_plain_text_are_returned_as_is(openai_server):
    openai_server.enqueue(tool_reply(("no_such_tool", '{"query": "unterminated'), content="thinking"),
                          text_reply("I am done."))
    client = make_client(openai_server)

    odd = run(ask(client))
    plain = run(ask(client, agent_index=1))

    assert odd.message.content == "thinking"
    assert odd.message.to_openai()["tool_calls"][0]["function"] == {"name": "no_such_tool",
                                                                   "arguments": '{"query": "unterminated'}
    assert plain.message.to_openai() == {"role": "assistant", "content": "I am done."}


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_error_then_success_is_retried(openai_server, status):
    openai_server.enqueue(http_error(status), tool_reply(("search_in_graph", {"query": "x"})))
    client = make_client(openai_server)

    reply = run(ask(client))

    assert reply.message.tool_calls[0].name == "search_in_graph"
    assert openai_server.request_count == 2
    assert client.calls == 1


def test_retries_exhausted_raises_llm_error(openai_server):
    openai_server.enqueue(*[http_error(500, "overloaded")] * 3)
    client = make_client(openai_server, max_retries=2)

    with pytest.raises(LLMError, match="HTTP 500") as info:
        run(ask(client))

    assert openai_server.request_count == 3  # first try + 2 retries
    assert "overloaded" in str(info.value) and openai_server.base_url in str(info.value)


@pytest.mark.parametrize("body", ["<html><body>502 Bad Gateway</body></html>", '{"choices": "none"}', ""])
def test_a_200_body_that_is_not_a_completion_is_retried_then_named(openai_server, monkeypatch, body):
    monkeypatch.setattr(openai_client, "MALFORMED_RETRY_BASE_S", 0.001)
    openai_server.enqueue(raw_reply(body), text_reply("recovered"))
    client = make_client(openai_server, max_retries=2)
    assert run(ask(client)).message.content == "recovered"
    assert openai_server.request_count == 2

    openai_server.enqueue(*[raw_reply(body)] * 3)
    with pytest.raises(LLMError) as info:
        run(ask(client))
    message = str(info.value)
    assert openai_server.base_url in message and "HTTP 200" in message and "tried 3 times" in message
    assert ("502 Bad Gateway" in message) if body.startswith("<html>") else True
    assert openai_server.request_count == 5


def test_timeout_then_success_is_retried(openai_server):
    openai_server.enqueue(text_reply("late", delay_s=1.0), text_reply("on time"))
    client = make_client(openai_server, timeout_s=0.3)

    reply = run(ask(client))

    assert reply.message.content == "on time"
    assert openai_server.request_count == 2


def test_rejected_api_key_raises_llm_error_naming_endpoint_not_key(openai_server):
    openai_server.api_key = "sk-the-right-one"
    client = make_client(openai_server, api_key="sk-wrong-secret")

    with pytest.raises(LLMError) as info:
        run(ask(client))

    message = str(info.value)
    assert "HTTP 401" in message and openai_server.base_url in message and "test-model" in message
    assert "sk-wrong-secret" not in message and "sk-wrong-secret" not in repr(client.settings)
    assert openai_server.request_count == 1  # not retried


@pytest.mark.parametrize("status, words", [(404, "model or route not found"), (400, "rejected the request")])
def test_non_retryable_errors_are_not_retried(openai_server, status, words):
    openai_server.enqueue(http_error(status, "The model `nope` does not exist"))
    client = make_client(openai_server, model="nope")

    with pytest.raises(LLMError, match=words) as info:
        run(ask(client))

    assert "'nope'" in str(info.value) and "does not exist" in str(info.value)
    assert openai_server.request_count == 1


def test_unreachable_endpoint_raises_llm_error():
    with ScriptedOpenAIServer() as server:
        base_url = server.base_url  # the port is free again once the server stops
    client = OpenAIChatClient(LLMSettings(base_url=base_url, model="m", max_retries=0, timeout_s=5))

    with pytest.raises(LLMError, match="could not connect") as info:
        run(client.next_message(MESSAGES, TOOLS))
    assert base_url in str(info.value)


def test_cache_replays_identical_request_without_http(openai_server, tmp_path):
    openai_server.enqueue(tool_reply(("search_in_graph", {"query": "x"}), prompt_tokens=10,
                                     completion_tokens=5))
    client = make_client(openai_server, cache_dir=tmp_path)

    first = run(ask(client))
    second = run(ask(client))
    rerun = run(ask(make_client(openai_server, cache_dir=tmp_path)))  # a fresh process would see the same

    assert openai_server.request_count == 1
    assert not first.cached and second.cached and rerun.cached
    assert second.message == first.message == rerun.message
    assert second.usage == first.usage == Usage(10, 5, 15)
    assert client.calls == 1 and client.cache_hits == 1 and client.usage_total == Usage(10, 5, 15)
    assert not list(tmp_path.rglob("*.tmp"))  # atomic writes leave no temp files


def test_cache_key_separates_agents_and_sampling(openai_server, tmp_path):
    openai_server.enqueue(text_reply("agent 0"), text_reply("agent 1"), text_reply("colder"))
    client = make_client(openai_server, cache_dir=tmp_path)

    zero = run(ask(client, agent_index=0))
    one = run(ask(client, agent_index=1))
    colder = run(ask(make_client(openai_server, cache_dir=tmp_path, temperature=0.0), agent_index=0))

    assert openai_server.request_count == 3
    assert (zero.message.content, one.message.content, colder.message.content) == (
        "agent 0", "agent 1", "colder")
    assert client.cache_key(client.build_request(MESSAGES, TOOLS, agent_index=0), 0) != client.cache_key(
        client.build_request(MESSAGES, TOOLS, agent_index=1), 1)
    assert run(ask(client, agent_index=1)).cached


def test_unreadable_cache_entry_is_refetched(openai_server, tmp_path):
    openai_server.enqueue(text_reply("fresh"), text_reply("fresh again"))
    client = make_client(openai_server, cache_dir=tmp_path)
    run(ask(client))
    (entry,) = tmp_path.rglob("*.json")
    entry.write_text("{torn", encoding="utf-8")

    reply = run(ask(client))

    assert not reply.cached and reply.message.content == "fresh again"
    assert json.loads(entry.read_text(encoding="utf-8"))["message"]["content"] == "fresh again"


def test_concurrency_limit_is_shared_by_all_agents(openai_server):
    openai_server.enqueue(*[text_reply(f"r{i}", delay_s=0.15) for i in range(6)])
    client = make_client(openai_server, concurrency=2)

    async def six_agents():
        return await asyncio.gather(*(ask(client, agent_index=i) for i in range(6)))

    replies = run(six_agents())

    assert len(replies) == 6 and openai_server.request_count == 6
    assert openai_server.max_in_flight == 2


def test_client_survives_several_event_loops(openai_server):
    openai_server.enqueue(text_reply("one"), text_reply("two"))
    client = make_client(openai_server)

    assert run(ask(client)).message.content == "one"
    assert run(ask(client, agent_index=1)).message.content == "two"
    run(client.aclose())


def test_client_requires_a_model():
    with pytest.raises(LLMError, match="no model configured"):
        OpenAIChatClient(LLMSettings(base_url="http://127.0.0.1:1/v1"))


def test_cache_is_safe_with_concurrent_writers(tmp_path):
    cache = ResponseCache(tmp_path)
    key = request_key({"model": "m", "messages": MESSAGES})
    entries = [{"message": {"role": "assistant", "content": "x" * 50_000 + str(i)}} for i in range(16)]

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda entry: cache.put(key, entry), entries))

    stored = cache.get(key)
    assert stored is not None and stored["message"] in [e["message"] for e in entries]
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == [f"{key}.json"]
