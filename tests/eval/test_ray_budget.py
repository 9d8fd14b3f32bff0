"""The shared LLM budget of Ray runs (:class:`ark.eval.ray_runs.EndpointBudget`) without a Ray cluster.

The budget actor's class is plain asyncio, so it runs here on the test's event loop, called the way Ray calls an
actor (``handle.method.remote(...)`` returns something to await). The oracle is the loopback server's own count of
requests in flight: a dead holder's slots must not come back while its requests can still be open there.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass
from types import SimpleNamespace

import pytest

from ark.eval.ray_runs import EndpointBudget, RayRunError, SharedLimit
from ark.llm import LLMSettings, OpenAIChatClient
from tests.support.openai_server import ScriptedOpenAIServer, text_reply

LIMIT = 2
HOLD_S = 2.0  # the clients' request timeout: how long a dead holder's slots stay counted
DYING_REPLY_S = 0.5  # the server works this long on the dead holder's requests (well inside HOLD_S)


class InProcessActor:
    """An actor object called as through a Ray handle: ``handle.method.remote(*args)`` schedules the call."""

    def __init__(self, actor: object) -> None:
        self._actor = actor

    def __getattr__(self, name: str) -> SimpleNamespace:
        method = getattr(self._actor, name)
        return SimpleNamespace(remote=lambda *args: asyncio.ensure_future(method(*args)))


@dataclass
class GrantTimes:
    """A limiter around another that notes when each slot is granted."""

    limit: SharedLimit
    moments: list[float]

    @contextlib.asynccontextmanager
    async def slot(self, endpoint: str):
        async with self.limit.slot(endpoint):
            self.moments.append(time.perf_counter())
            yield


def client(server: ScriptedOpenAIServer, budget: InProcessActor, holder: str) -> OpenAIChatClient:
    """One worker's client: every request takes a slot of the shared budget."""
    llm = OpenAIChatClient(LLMSettings(model="test-model", base_url=server.base_url, max_retries=0,
                                       timeout_s=HOLD_S, cache_dir=None))
    llm.limiter = SharedLimit(budget, holder)
    return llm


async def ask(llm: OpenAIChatClient, who: str, i: int):
    return await llm.next_message([{"role": "user", "content": f"{who} question {i}"}], [])


def test_a_dead_holders_requests_keep_their_slots_until_the_request_timeout_has_passed():
    budget = EndpointBudget({}, {})  # filled below, once the server's address is known

    async def scenario(server: ScriptedOpenAIServer) -> tuple[float, list, dict, dict]:
        budget.limits, budget.hold_s = {server.base_url: LIMIT}, {server.base_url: HOLD_S}
        handle = InProcessActor(budget)
        dying = client(server, handle, "worker-dying")
        doomed = [asyncio.ensure_future(ask(dying, "dying", i)) for i in range(LIMIT)]
        while server.request_count < LIMIT:  # both of its requests are open at the endpoint
            await asyncio.sleep(0.01)
        # The worker process dies: the driver's notice reaches the budget, and the kernel closes the dead
        # process's connections (here: its requests are cancelled; their releases come after the notice).
        noticed = time.perf_counter()
        assert await handle.release_holder.remote("worker-dying") == LIMIT
        for task in doomed:
            task.cancel()
        await asyncio.gather(*doomed, return_exceptions=True)
        assert await handle.counted.remote() == {server.base_url: LIMIT}  # its late releases end nothing early

        first_grant: list[float] = []
        survivors = [client(server, handle, f"worker-{n}") for n in range(2)]
        for llm in survivors:
            llm.limiter = GrantTimes(llm.limiter, first_grant)
        replies = await asyncio.gather(*(ask(llm, f"survivor {n}", i) for n, llm in enumerate(survivors)
                                         for i in range(3)))
        waited = min(first_grant) - noticed
        return waited, replies, await handle.counted.remote(), await handle.peak_in_flight.remote()

    with ScriptedOpenAIServer() as server:
        server.responder = lambda body: text_reply(
            "ok", delay_s=DYING_REPLY_S if "dying" in body["messages"][0]["content"] else 0.05)
        waited, replies, counted, peaks = asyncio.run(scenario(server))
        time.sleep(DYING_REPLY_S)  # let the server finish the dead holder's requests before reading its count
        assert server.max_in_flight == LIMIT  # the oracle: never more than the budget at the endpoint
    assert waited >= HOLD_S  # the survivors waited out the dead holder's hold
    assert [reply.message.content for reply in replies] == ["ok"] * 6
    assert counted == {} and peaks == {server.base_url: LIMIT}


def test_a_dead_holder_gets_no_more_slots_and_its_waiting_tickets_give_theirs_back():
    async def scenario() -> None:
        budget = EndpointBudget({"e": 1}, {"e": 0.2})
        assert await budget.acquire("e", "a", "t1")
        waiting_of_a = asyncio.ensure_future(budget.acquire("e", "a", "t2"))
        waiting_of_b = asyncio.ensure_future(budget.acquire("e", "b", "t3"))
        await asyncio.sleep(0.05)
        assert not waiting_of_a.done() and not waiting_of_b.done()  # one slot, held by a

        started = time.perf_counter()
        assert await budget.release_holder("a") == 1
        await budget.release("t1")  # a's last message, racing its death: the hold still decides
        assert await budget.counted() == {"e": 1}
        assert not await budget.acquire("e", "a", "t4")  # a dead holder is refused at once
        assert await waiting_of_a is False  # granted after the hold, refused, its slot passed on
        assert await waiting_of_b is True
        assert time.perf_counter() - started >= 0.2

        await budget.release("t3")  # a live holder's release frees its slot at once
        assert await budget.counted() == {}
        abandoned = asyncio.ensure_future(budget.acquire("e", "b", "t5"))
        assert await budget.acquire("e", "b", "t6")
        await budget.release("t5")  # given up before it is granted: its slot goes back once granted
        await budget.release("t6")
        assert await abandoned is False and await budget.counted() == {}
        assert await budget.peak_in_flight() == {"e": 1}

    asyncio.run(scenario())


def test_a_worker_declared_lost_cannot_send_more_requests():
    async def scenario() -> None:
        budget = EndpointBudget({"e": 1}, {"e": 0.0})
        await budget.release_holder("zombie")
        with pytest.raises(RayRunError, match="declared lost"):
            async with SharedLimit(InProcessActor(budget), "zombie").slot("e"):
                pass

    asyncio.run(scenario())
