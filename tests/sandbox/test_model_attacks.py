"""Model-written code, sent by the scripted chat server through the real client, attacking the process that runs
the sandbox: it forges the worker's protocol (switching its own ``Worker`` to the callback mode found through
``gc``, or writing a result frame by hand), runs a runaway query, and crashes the database engine. Each attack must
end in an observation the model reads back; the parent keeps its memory and keeps answering (``ark ask`` and a
running ``ark serve`` as real processes)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from ark.llm import OpenAIChatClient, resolve_settings
from ark.sandbox import bwrap_problem
from tests.support.graphs import save_clinical_graph
from tests.support.openai_server import text_reply, tool_reply, turn_script

pytest.importorskip("ladybug")
pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap sandbox: {bwrap_problem()}")

from ark.methods.graphscout.options import GraphScoutOptions  # noqa: E402
from ark.methods.graphscout.solver import GraphScout  # noqa: E402
from ark.methods.graphscout.tools import CODE_INTERPRETER  # noqa: E402

ARK = [sys.executable, "-m", "ark.cli.main"]
QUESTION = "How many genes are associated with Loeys-Dietz syndrome?"
FIND_WORKER = "import gc\nworker = next(o for o in gc.get_objects() if type(o).__name__ == 'Worker')\n"
# The worker switched to the callback mode: its cypher() now sends the query to the parent.
FORGE_CALLBACK = FIND_WORKER + "worker.engine = None\nworker.config['cypher'] = 'callback'\nprint(cypher({query!r}))"
FORGE_RESULT = FIND_WORKER + (
    "import sys\nfrom ark.sandbox.protocol import write_message\nframe = sys._getframe()\n"
    "while 'request' not in frame.f_locals:\n    frame = frame.f_back\n"
    "write_message(worker.wfd, {'op': 'result', 'id': frame.f_locals['request']['id'], 'stdout': 'forged', "
    "'error': None, 'elapsed_s': 'x', 'cypher_calls': []})\nimport time\ntime.sleep(30)")
READ_FILE = "CALL `READ_CSV_SERIAL`('/etc/passwd') RETURN *"
RUNAWAY = "UNWIND range(1, 300000000) AS x RETURN sum(x) AS total"
# The engine object inside the sandbox, past the read-only guard: a table function that crashes the engine.
SEGFAULT = ("import gc\nopen('/tmp/rows.csv', 'w').write('a,b\\n1,2\\n')\n"
            "from ark.graphdb.ladybug_engine import LadybugEngine\n"
            "engine = next(o for o in gc.get_objects() if isinstance(o, LadybugEngine))\n"
            "engine._connection().execute(\"CALL READ_CSV_SERIAL('/tmp/rows.csv') RETURN *\")")
PROBE = "print(cypher('MATCH (g:gene) RETURN count(g) AS n')[0]['n'])"


def script(*codes: str) -> list:
    return [*(tool_reply((CODE_INTERPRETER, {"code": code})) for code in codes), text_reply("Done.\n\\answer{2}")]


def observations(server) -> list[str]:
    """What the model read back from its code calls, in order (from the last request it received)."""
    return [m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"]


def rss_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as status:
        line = next(line for line in status if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


@pytest.fixture(scope="module")
def world():
    from ark.graphdb.ladybug_engine import open_ladybug
    from ark.methods.graphscout.solver import open_node_index
    from tests.support.graphs import build_clinical_graph

    graph = build_clinical_graph()
    engine = open_ladybug(graph)
    yield graph, engine, open_node_index(graph, GraphScoutOptions())
    engine.close()


def solve(world, server, tmp_path, *codes: str, options: GraphScoutOptions | None = None):
    graph, engine, index = world
    server.responder = turn_script(script(*codes))
    client = OpenAIChatClient(resolve_settings(base_url=server.base_url, model="test-model", api_key="k", environ={},
                                               config_path=tmp_path / "absent.toml", use_cache=False))
    solver = GraphScout(graph, client, options, engine=engine, index=index)

    async def run():
        try:
            return await solver.asolve(QUESTION)
        finally:
            await solver.aclose()

    return asyncio.run(run())


def test_a_worker_switched_to_callback_mode_gets_no_query_run_by_the_parent(world, openai_server, tmp_path):
    solution = solve(world, openai_server, tmp_path, FORGE_CALLBACK.format(query=READ_FILE), PROBE)
    forged, probe = observations(openai_server)
    assert forged.startswith("[error: protocol]") and "malformed message" in forged, forged
    assert "restarted" in probe and probe.endswith("7"), probe  # a fresh interpreter answers the next call
    assert solution.answer is not None and solution.answer.text == "2"


def test_a_forged_result_frame_is_an_observation(world, openai_server, tmp_path):
    solve(world, openai_server, tmp_path, FORGE_RESULT, PROBE)
    forged, probe = observations(openai_server)
    assert "[error: protocol]" in forged and "elapsed_s" in forged and "forged" not in forged, forged
    assert probe.endswith("7")


def test_a_runaway_query_grows_the_sandbox_not_the_parent(world, openai_server, tmp_path):
    options = GraphScoutOptions.model_validate({"sandbox": {"timeout_s": 6, "cypher_timeout_s": 4}})
    peak, before, done = [0.0], rss_mb(), threading.Event()

    def sample() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], rss_mb())
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        solve(world, openai_server, tmp_path, f"print(cypher({RUNAWAY!r}))", FORGE_CALLBACK.format(query=RUNAWAY),
              options=options)
    finally:
        done.set()
        sampler.join()
    print(f"parent RSS {before:.0f} MB before, {peak[0]:.0f} MB at most during the runaway queries")
    assert peak[0] - before < 200
    local, forged = observations(openai_server)
    assert "[error:" in local and "[error: protocol]" in forged, (local, forged)


def ark_environment(tmp_path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ARK_"))}
    return {**env, "ARK_HOME": str(tmp_path / "ark-home"), "OPENAI_API_KEY": "k", "COLUMNS": "200"}


def test_an_engine_crash_costs_that_call_only_in_ark_ask(openai_server, tmp_path):
    graph_dir = save_clinical_graph(tmp_path / "clinical")
    openai_server.responder = turn_script(script(SEGFAULT, FORGE_CALLBACK.format(query=READ_FILE), PROBE))
    command = [*ARK, "ask", str(graph_dir), QUESTION, "--method", "graphscout", "--base-url", openai_server.base_url,
               "--model", "test-model"]
    done = subprocess.run(command, env=ark_environment(tmp_path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    crashed, forged, probe = observations(openai_server)
    assert crashed.startswith("[error: crashed]") and "SIGSEGV" in crashed, crashed
    assert forged.startswith("[note]") and "[error: protocol]" in forged and probe.endswith("7")
    assert "Answer (number): 2" in done.stdout


def test_a_running_server_keeps_answering_after_an_engine_crash(openai_server, tmp_path):
    pytest.importorskip("uvicorn")
    pytest.importorskip("fastapi")
    from tests.serve.conftest import announced_url

    graph_dir = save_clinical_graph(tmp_path / "clinical")
    openai_server.responder = turn_script(script(SEGFAULT, FORGE_CALLBACK.format(query=READ_FILE)))
    process = subprocess.Popen([*ARK, "serve", str(graph_dir), "--port", "0", "--base-url", openai_server.base_url,
                                "--model", "test-model"], env=ark_environment(tmp_path),
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        url = announced_url(process, r"listening on (http://127\.0\.0\.1:\d+)")
        body = json.dumps({"question": QUESTION, "method": "graphscout"}).encode()
        request = urllib.request.Request(url + "/api/ask", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as response:
            answer = json.loads(response.read())
        assert answer["answer"]["text"] == "2" and process.poll() is None, answer
        crashed, forged = observations(openai_server)
        assert "SIGSEGV" in crashed and "[error: protocol]" in forged
        with urllib.request.urlopen(url + "/api/graph", timeout=30) as response:  # still serving
            assert response.status == 200
    finally:
        process.terminate()
        process.wait(timeout=30)


# Frames the JSON decoder refuses with other errors than a syntax error (well under the size limit): nested past
# Python's recursion limit, and an integer longer than Python converts from text.
UNREADABLE_FRAME = FIND_WORKER + (
    "import os\nfrom ark.sandbox.protocol import _HEADER\nbody = {body}\n"
    "os.write(worker.wfd, _HEADER.pack(len(body)) + body)\nimport time\ntime.sleep(30)")


@pytest.mark.parametrize("body", ["b'[' * 200000", "b'{\"op\": \"result\", \"id\": ' + b'7' * 50000 + b'}'"],
                         ids=["nested", "long-integer"])
def test_a_frame_the_decoder_cannot_read_is_an_observation(world, openai_server, tmp_path, body):
    solution = solve(world, openai_server, tmp_path, UNREADABLE_FRAME.format(body=body), PROBE)
    unreadable, probe = observations(openai_server)
    assert unreadable.startswith("[error:") and "protocol" in unreadable, unreadable
    assert "restarted" in probe and probe.endswith("7"), probe
    assert solution.answer is not None and solution.answer.text == "2"
