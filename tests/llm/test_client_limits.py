"""Hard limits of the model client against endpoints that misbehave on loopback: a whole-request deadline (a server
dripping its body byte by byte), usage fields that are not token counts, and a reply cached only once read."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time

import pytest

from ark.llm import LLMError, LLMSettings, OpenAIChatClient, Usage, resolve_settings
from ark.runtime.loop import run_tool_loop
from ark.runtime.records import Trajectory
from ark.runtime.tools import ToolResult
from tests.support.drip_server import DripServer
from tests.support.openai_server import raw_reply, tool_reply

MESSAGES = [{"role": "system", "content": "You retrieve evidence."}, {"role": "user", "content": "seizures?"}]


def test_a_drip_feeding_endpoint_fails_within_the_deadline():
    with DripServer() as server:
        client = OpenAIChatClient(LLMSettings(base_url=server.base_url, model="test-model", api_key="k",
                                              timeout_s=10, max_retries=0))
        started = time.monotonic()
        with pytest.raises(LLMError) as info:
            asyncio.run(client.next_message(MESSAGES, []))
        elapsed = time.monotonic() - started
    message = str(info.value)
    assert elapsed < 12, (elapsed, message)
    assert server.base_url in message and "timed out" in message, message
    reported = float(re.search(r"gave up after ([\d.]+) s", message).group(1))
    assert 9.5 <= reported <= elapsed + 0.5, (reported, elapsed, message)  # the real time spent, not the setting


COMPLETION = {"id": "c1", "object": "chat.completion", "created": 0, "model": "test-model",
              "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}]}


@pytest.mark.parametrize("usage", [
    {"prompt_tokens": "many", "completion_tokens": 1, "total_tokens": 2},
    {"prompt_tokens": 1, "completion_tokens": [3], "total_tokens": 4},
    {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": -3},
    "lots",
])
def test_usage_that_is_not_token_counts_is_ignored_with_a_warning(openai_server, caplog, usage):
    openai_server.enqueue(raw_reply(json.dumps({**COMPLETION, "usage": usage})),
                          raw_reply(json.dumps({**COMPLETION, "usage": {"prompt_tokens": 3, "completion_tokens": 4,
                                                                        "total_tokens": 7}})))
    client = OpenAIChatClient(LLMSettings(base_url=openai_server.base_url, model="test-model", api_key="k",
                                          max_retries=0))

    async def twice():
        return [await client.next_message(MESSAGES, [], agent_index=i) for i in range(2)]

    with caplog.at_level(logging.WARNING, logger="ark.llm.openai_client"):
        bad, good = asyncio.run(twice())
    assert bad.message.content == "hi" and bad.usage == Usage()
    assert good.usage == Usage(3, 4, 7) and client.usage_total == Usage(3, 4, 7)
    warned = " ".join(record.getMessage() for record in caplog.records)
    assert openai_server.base_url in warned and "usage" in warned, warned


class CrashOnce:
    """A tool executor whose first call fails with an unexpected error (a bug in a tool reading the reply), then
    finishes the trajectory."""

    def __init__(self) -> None:
        self.finished = False
        self.calls = 0

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        self.calls += 1
        if self.calls == 1:
            raise RuntimeError("the reader broke on this reply")
        self.finished = True
        return ToolResult("done", finished=True)


def test_a_reply_is_cached_only_after_it_was_read(openai_server, tmp_path):
    """A reply that breaks its reader is not kept: the next run asks the endpoint again instead of replaying it."""
    openai_server.enqueue(tool_reply(("finish", {})), tool_reply(("finish", {})))
    settings = resolve_settings(base_url=openai_server.base_url, model="test-model", api_key="k", environ={},
                                config_path=tmp_path / "absent.toml", cache_dir=tmp_path / "llm-cache", seed=1)
    executor = CrashOnce()

    def attempt() -> Trajectory:
        trajectory = Trajectory(question="q", messages=[dict(m) for m in MESSAGES], tools=[])
        asyncio.run(run_tool_loop(trajectory, OpenAIChatClient(settings), executor, max_steps=2))
        return trajectory

    with pytest.raises(RuntimeError, match="reader broke"):
        attempt()
    assert not list((tmp_path / "llm-cache").rglob("*.json"))
    again = attempt()
    assert openai_server.request_count == 2 and again.finished and not again.steps[0].cached
    cached = attempt()  # a reply that was read is kept
    assert openai_server.request_count == 2 and cached.steps[0].cached


def test_a_response_past_the_size_limit_is_an_error_not_a_full_memory(openai_server, monkeypatch):
    from ark.llm import openai_client

    monkeypatch.setattr(openai_client, "MAX_RESPONSE_BYTES", 2**20, raising=False)
    flood = json.dumps({**COMPLETION, "padding": "x" * (3 * 2**20)})
    openai_server.enqueue(raw_reply(flood), raw_reply(json.dumps(COMPLETION)))
    client = OpenAIChatClient(LLMSettings(base_url=openai_server.base_url, model="test-model", api_key="k",
                                          max_retries=0))
    with pytest.raises(LLMError) as info:
        asyncio.run(client.next_message(MESSAGES, []))
    assert openai_server.base_url in str(info.value), str(info.value)
    reply = asyncio.run(client.next_message(MESSAGES, []))  # a reply under the limit is read as before
    assert reply.message.content == "hi"


def test_a_reply_over_the_size_cap_says_so_not_could_not_connect(openai_server, monkeypatch):
    from ark.llm import openai_client

    monkeypatch.setattr(openai_client, "MAX_RESPONSE_BYTES", 2**20, raising=False)
    openai_server.enqueue(raw_reply(json.dumps({**COMPLETION, "padding": "x" * (3 * 2**20)})))
    client = OpenAIChatClient(LLMSettings(base_url=openai_server.base_url, model="test-model", api_key="k",
                                          max_retries=0))
    with pytest.raises(LLMError) as info:
        asyncio.run(client.next_message(MESSAGES, []))
    message = str(info.value)
    assert "could not connect" not in message and "Connection error" not in message, message
    assert f"the reply from {openai_server.base_url}" in message, message
    assert "was larger than the 1,048,576-byte cap" in message and "MAX_RESPONSE_BYTES" in message, message


def test_a_reply_cut_mid_body_says_after_how_many_bytes(openai_server):
    body = json.dumps({**COMPLETION, "padding": "x" * 5000})
    openai_server.enqueue(raw_reply(body, cut_after=1000), raw_reply(body, cut_after=1000))
    client = OpenAIChatClient(LLMSettings(base_url=openai_server.base_url, model="test-model", api_key="k",
                                          max_retries=1))
    with pytest.raises(LLMError) as info:
        asyncio.run(client.next_message(MESSAGES, []))
    message = str(info.value)
    assert "could not connect" not in message and "Connection error" not in message, message
    assert f"the reply from {openai_server.base_url}" in message, message
    assert f"was cut off after 1,000 bytes of the {len(body):,} it announced" in message, message
    assert "tried 2 times" in message and openai_server.request_count == 2, message


def test_an_endpoint_that_is_not_there_still_could_not_connect():
    client = OpenAIChatClient(LLMSettings(base_url="http://127.0.0.1:9/v1", model="test-model", api_key="k",
                                          max_retries=0))
    with pytest.raises(LLMError, match="could not connect to http://127.0.0.1:9/v1"):
        asyncio.run(client.next_message(MESSAGES, []))
