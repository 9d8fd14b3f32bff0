"""Model-written Cypher that crashes or hangs the embedded engine, sent by a scripted model on loopback, costs that
query only (issue 44), wherever a model's query runs:

- ``ark ask --method cypher`` as a real subprocess exits normally with the failure in the answer step's prompt
  (on the in-process engine it died with SIGSEGV, exit 139; the hang ran 116 s past a 10 s limit), and a hang ends
  within its ``timeout_s`` + 2 s;
- the GraphScout scout quizzer (its sandbox and its direct runner): the episode goes on with the failure as the
  observation and the next query is answered;
- a real ``ark serve`` with a client-chosen model URL (``--allow-request-models``) answers the next request.

The queries (tests/support/cypher_attacks.py): :data:`CRASH` and :data:`HANG` pass the read-only guard and crash or
outrun the engine itself; the audit's own ``NOT`` chain and 5,000-deep lists are refused by the guard's bounds.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cypher_attacks import CRASH, DEEP_LISTS, FINE, HANG, NOT_CHAIN, cypher_model
from tests.support.graphs import build_clinical_graph, build_index, save_clinical_graph
from tests.support.openai_server import Step, tool_reply, turn_script

pytest.importorskip("ladybug")
pytestmark = pytest.mark.usefixtures("isolated_env")  # tests/conftest.py: own ARK_HOME, no LLM variables

ARK = [sys.executable, "-m", "ark.cli.main"]
TIMEOUT_S = 2.0  # the hang's deadline
CRASH_TIMEOUT_S = 60.0  # long enough for the crash (about 4 s on 2 shared cores) to come first
CRASHED = "crashed the database engine (signal SIGSEGV)"
# marker in the question -> (query the model writes, what the answer step must be told)
CASES = {
    "CRASHQ": (CRASH, CRASHED),
    "HANGQ": (HANG, "s deadline and was stopped"),
    "NOTQ": (NOT_CHAIN, "the limit is"),
    "DEEPQ": (DEEP_LISTS, "the limit is"),
}


@pytest.fixture(scope="module")
def graph_dir(tmp_path_factory) -> Path:
    return save_clinical_graph(tmp_path_factory.mktemp("cypher-e2e") / "clinical")


class Timed:
    """A responder that notes when it answered each request (the query runs between the query call's reply and
    the answer call); it takes ``think_s`` to write each reply, as a real model does (the engine's worker starts
    meanwhile)."""

    def __init__(self, respond, think_s: float = 0.0) -> None:
        self.respond, self.think_s = respond, think_s
        self.arrived: list[float] = []
        self.answered: list[float] = []

    def __call__(self, body: dict) -> Step:
        self.arrived.append(time.monotonic())
        time.sleep(self.think_s)
        self.answered.append(time.monotonic())
        return self.respond(body)

    def query_time(self, call: int) -> float:
        """From the reply to call ``call`` (the query) to the next call's arrival (the answer step)."""
        return self.arrived[call + 1] - self.answered[call]


def answer_prompt(server) -> str:
    """The user message of the model's last call (the cypher method's answer step: the query's rows or error)."""
    return str(server.requests[-1]["messages"][-1]["content"])


@pytest.mark.parametrize("marker", list(CASES))
def test_ark_ask_cypher_survives_a_query_that_crashes_or_hangs_the_engine(graph_dir, openai_server, monkeypatch,
                                                                          marker):
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    query, told = CASES[marker]
    timeout = CRASH_TIMEOUT_S if marker == "CRASHQ" else TIMEOUT_S
    timed = Timed(cypher_model({marker: query}), think_s=3.0 if marker == "HANGQ" else 0.0)
    openai_server.responder = timed
    started = time.monotonic()
    ran = subprocess.run([*ARK, "ask", str(graph_dir), f"Which genes cause Marfan syndrome? {marker}", "--method",
                          "cypher", "--model", "test-model", "--base-url", openai_server.base_url, "--json",
                          "--set", f"timeout_s={timeout:g}"], capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, (ran.returncode, ran.stderr[-2000:])  # on the in-process engine: 139 / -11
    record = json.loads(ran.stdout)
    prompt = answer_prompt(openai_server)
    assert openai_server.request_count == 2 and told in prompt, prompt[-500:]
    assert "The query failed" in answer_prompt(openai_server) and record["method"] == "cypher"
    if marker == "HANGQ":
        assert timed.query_time(0) < TIMEOUT_S + 2, timed.query_time(0)
    assert time.monotonic() - started < 240


# ------------------------------------------------------------------ the scout quizzer
def run_scout(runner: str, base_url: str, timeout_s: float = CRASH_TIMEOUT_S):
    from ark.graphdb.ladybug_engine import open_ladybug
    from ark.llm import LLMSettings, OpenAIChatClient
    from ark.methods.graphscout.quiz.objective import Objective
    from ark.methods.graphscout.quiz.scout import ScoutConfig, ScoutQuizzer

    graph = build_clinical_graph()
    policy = OpenAIChatClient(LLMSettings(base_url=base_url, model="scout-model", api_key="k", temperature=0.0,
                                          max_retries=0, cache_dir=None))
    with open_ladybug(graph, timeout_s=timeout_s) as engine:  # in-process: the quizzer must not run model Cypher here
        quizzer = ScoutQuizzer(graph, policy, ScoutConfig(runner=runner), engine=engine, index=build_index(graph))

        async def go():
            try:
                return await quizzer.episode(Objective("number", "<h,r,*>", "simple", ("<h,r,*>",), 1),
                                             graph.index_of("OMIM:154700"))
            finally:
                await policy.aclose()

        try:
            return asyncio.run(go())
        finally:
            quizzer.close()


def observations(episode) -> list[str]:
    return [text for step in episode.trajectory.steps for text in step.observations]


@pytest.mark.parametrize("runner", ["direct", "sandbox"])
def test_the_scout_quizzer_refuses_the_long_queries_and_answers_the_next(openai_server, runner):
    """The scout's first boundary: a tool's text argument is at most 2,000 characters, so the 80,000-character
    crash never reaches a runner; the episode goes on and the next query is answered."""
    openai_server.responder = turn_script([tool_reply(("cypher", {"query": CRASH})),
                                           tool_reply(("cypher", {"query": NOT_CHAIN})),
                                           tool_reply(("cypher", {"query": FINE}))])
    episode = run_scout(runner, openai_server.base_url)
    seen = observations(episode)
    assert len(seen) == 3, seen
    assert all("text arguments are limited to 2,000 characters" in text for text in seen[:2]), seen
    assert "6" in seen[2] and "diseases" in seen[2], seen[2]


@pytest.mark.parametrize("runner", ["direct", "sandbox"])
def test_the_scout_quizzers_runners_survive_a_crashing_and_a_hanging_query(runner):
    """Its second boundary: whatever reaches a runner runs out of this process. The quizzer's runners given the
    in-process engine: the crash and the hang cost those queries (the hang within its deadline + 2 s), the next
    query is answered; in this process the crash was a SIGSEGV of the whole quizzer."""
    from ark.graphdb.ladybug_engine import open_ladybug
    from ark.methods.graphscout.quiz.scout_tools import DirectCypher, SandboxCypher
    from ark.sandbox import SandboxLimits
    from ark.sandbox.session import GRACE_S as SANDBOX_GRACE_S

    with open_ladybug(build_clinical_graph(), timeout_s=CRASH_TIMEOUT_S) as engine:
        make = (lambda: DirectCypher(engine)) if runner == "direct" else (
            lambda: SandboxCypher(engine, SandboxLimits(cypher_timeout_s=CRASH_TIMEOUT_S, timeout_s=90)))
        crashing = make()
        try:
            outcome = crashing.run(CRASH, {})
            assert outcome.error is not None and ("crash" in outcome.error or "SIGSEGV" in outcome.error), outcome
            assert crashing.run(FINE, {}).rows == [{"diseases": 6}]
        finally:
            crashing.close()
    with open_ladybug(build_clinical_graph(), timeout_s=TIMEOUT_S) as engine:
        # The sandbox's call deadline is its timeout_s and its worker's grace (ark.sandbox.session.GRACE_S)
        hanging = DirectCypher(engine) if runner == "direct" else SandboxCypher(
            engine, SandboxLimits(cypher_timeout_s=TIMEOUT_S, timeout_s=TIMEOUT_S))
        bound = TIMEOUT_S + 2 + (0 if runner == "direct" else SANDBOX_GRACE_S)
        try:
            assert hanging.run(FINE, {}).rows == [{"diseases": 6}]  # a warm worker (or sandbox)
            started = time.monotonic()
            outcome = hanging.run(HANG, {})
            assert outcome.error is not None and time.monotonic() - started < bound, outcome
            assert hanging.run(FINE, {}).rows == [{"diseases": 6}]
        finally:
            hanging.close()


# ------------------------------------------------------------------ ark serve
@pytest.mark.parametrize(("timeout", "markers"), [(CRASH_TIMEOUT_S, ("CRASHQ", "NOTQ", "DEEPQ")),
                                                  (TIMEOUT_S, ("HANGQ",))])
def test_ark_serve_answers_the_next_request_after_a_crashing_or_hanging_query(graph_dir, openai_server, timeout,
                                                                             markers):
    """The server's ``cypher.timeout_s`` is one setting: long enough for the crash to come first (it takes up to
    ~13 s on loaded shared cores), short for the hang."""
    pytest.importorskip("fastapi")
    from tests.serve.test_request_allowlist import ark_serve, post

    timed = Timed(cypher_model({marker: query for marker, (query, _) in CASES.items()}), think_s=0.5)
    openai_server.responder = timed
    model = {"model": "test-model", "base_url": openai_server.base_url}
    with ark_serve(graph_dir, "--offline", "--allow-request-models", "--set", f"cypher.timeout_s={timeout:g}") as url:
        for marker in markers:
            before = len(timed.arrived)
            status, answer, _ = post(url + "/api/ask", {"question": f"Which genes? {marker}", "method": "cypher",
                                                        "model": model})
            assert status == 200, (marker, status, answer)
            assert CASES[marker][1] in answer_prompt(openai_server), (marker, answer_prompt(openai_server)[-500:])
            if marker == "HANGQ":
                assert timed.query_time(before) < timeout + 2, timed.query_time(before)
        status, answer, _ = post(url + "/api/ask", {"question": "How many diseases?", "method": "cypher",
                                                    "model": model})
        assert status == 200, answer
        assert '{"diseases": 6}' in answer_prompt(openai_server)
