"""The scripted loopback OpenAI server that other tests rely on: wire format, routing, recording."""

from __future__ import annotations

import asyncio

import openai
import pytest

from tests.support.openai_server import ScriptedOpenAIServer, http_error, text_reply, tool_reply, turn_script


def test_wire_format_is_accepted_by_the_sdk(openai_server):
    openai_server.enqueue(tool_reply(("finish", {}), prompt_tokens=7, completion_tokens=3), text_reply("bye"))
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)

    question = [{"role": "user", "content": "q"}]
    tools_reply = client.chat.completions.create(model="test-model", messages=question)
    text = client.chat.completions.create(model="test-model", messages=question)

    assert tools_reply.object == "chat.completion" and tools_reply.model == "test-model"
    assert tools_reply.choices[0].finish_reason == "tool_calls"
    assert tools_reply.choices[0].message.tool_calls[0].function.arguments == "{}"
    assert tools_reply.usage.total_tokens == 10
    assert text.choices[0].finish_reason == "stop" and text.choices[0].message.content == "bye"
    assert [m.id for m in client.models.list()] == ["test-model"]


def test_exhausted_script_answers_400(openai_server):
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    with pytest.raises(openai.BadRequestError, match="script exhausted"):
        client.chat.completions.create(model="test-model", messages=[{"role": "user", "content": "q"}])


def test_conversations_give_concurrent_agents_their_own_scripts(openai_server):
    for agent in ("agent-A", "agent-B", "agent-C"):
        openai_server.add_conversation(agent, http_error(429), text_reply(f"{agent} turn 1", delay_s=0.05),
                                       text_reply(f"{agent} turn 2"))
    client = openai.AsyncOpenAI(base_url=openai_server.base_url, api_key="k", max_retries=2)

    async def agent(name: str) -> list[str]:
        messages = [{"role": "user", "content": f"[{name}] which gene?"}]
        seen = []
        for _ in range(2):
            reply = await client.chat.completions.create(model="test-model", messages=messages)
            seen.append(reply.choices[0].message.content)
            messages.append({"role": "assistant", "content": reply.choices[0].message.content})
        return seen

    async def main():
        return await asyncio.gather(*(agent(n) for n in ("agent-A", "agent-B", "agent-C")))

    results = asyncio.run(main())

    assert results == [[f"{n} turn 1", f"{n} turn 2"] for n in ("agent-A", "agent-B", "agent-C")]
    assert openai_server.request_count == 9  # 3 agents x (429 + 2 replies)


def test_turn_script_answers_by_assistant_turns(openai_server):
    openai_server.responder = turn_script([text_reply("first"), text_reply("second")])
    client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
    history = [{"role": "user", "content": "q"}]

    first = client.chat.completions.create(model="test-model", messages=history)
    again = client.chat.completions.create(model="test-model", messages=history)
    second = client.chat.completions.create(
        model="test-model", messages=[*history, {"role": "assistant", "content": "first"}])

    assert [r.choices[0].message.content for r in (first, again, second)] == ["first", "first", "second"]


def test_server_stops_cleanly():
    with ScriptedOpenAIServer(models=["a", "b"]) as server:
        models = openai.OpenAI(base_url=server.base_url, api_key="k").models.list()
        assert [m.id for m in models] == ["a", "b"]
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
