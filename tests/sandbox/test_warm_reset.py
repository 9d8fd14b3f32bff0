"""One warm worker for a whole run: reset between trajectories in place, with nothing of one trajectory left for the
next (variables, files, modules it made, names it rebound in standard modules, processes), a fresh worker when the
worker cannot vouch for that, and the workers' CPU time counted when they leave."""

from __future__ import annotations

import pytest

from ark.sandbox import CodeSandbox, SandboxLimits
from ark.sandbox.usage import SANDBOX_USAGE
from tests.support.graphs import build_clinical_graph

pytest.importorskip("ladybug")

from ark.graphdb.ladybug_engine import open_ladybug  # noqa: E402
from ark.methods.graphscout.sandbox_pool import SandboxPool  # noqa: E402

FIRST_QUESTION = """
import os, sys, tempfile, textwrap
open(os.path.join(tempfile.gettempdir(), 'left_in_tmp.txt'), 'w').write('from question 1')
secret = cypher('MATCH (g:gene) RETURN count(g) AS n')[0]['n']
os.makedirs('work', exist_ok=True)
open('work/notes.txt', 'w').write('from question 1')
open('helper_mod.py', 'w').write('MARK = 1')
sys.path.insert(0, os.getcwd())
import helper_mod
textwrap.dedent = None
os.environ['LEFT_BEHIND'] = '1'
import subprocess
sleeper = subprocess.Popen(['sleep', '60'])
print(secret, sorted(os.listdir('.')))
"""

SECOND_QUESTION = """
import os, sys, tempfile, textwrap
print(os.path.exists(os.path.join(tempfile.gettempdir(), 'left_in_tmp.txt')))
print('secret' in globals(), 'sleeper' in globals(), sorted(os.listdir('.')), 'helper_mod' in sys.modules,
      textwrap.dedent is None, 'LEFT_BEHIND' in os.environ, os.getcwd() in sys.path)
try:
    import helper_mod
except ImportError:
    print('no helper_mod')
print(cypher('MATCH (g:gene) RETURN count(g) AS n')[0]['n'])
"""


@pytest.fixture(scope="module")
def engine():
    engine = open_ladybug(build_clinical_graph())
    yield engine
    engine.close()


def test_question_two_sees_nothing_of_question_one_in_the_same_worker(engine):
    with CodeSandbox(engine, SandboxLimits(timeout_s=10)) as fresh:
        expected = fresh.run(SECOND_QUESTION)  # what a worker that never ran question 1 shows
    assert expected.ok and expected.stdout.startswith("False\nFalse False [") and expected.stdout.endswith(
        "] False False False False\nno helper_mod\n7\n")
    with CodeSandbox(engine, SandboxLimits(timeout_s=10)) as sandbox:
        first = sandbox.run(FIRST_QUESTION)
        assert first.ok, first.error
        assert first.stdout.startswith("7 ") and "helper_mod.py" in first.stdout and "work" in first.stdout
        worker = sandbox.worker_pid
        sandbox.reset()
        assert sandbox.resets == 1 and sandbox.worker_pid == worker and sandbox.starts == 1  # the same process
        second = sandbox.run(SECOND_QUESTION)
        assert second.ok, second.error
        assert second.stdout == expected.stdout
        assert not second.restarted and sandbox.starts == 1


def test_observations_after_a_reset_are_those_of_a_fresh_worker(engine):
    failing = "def f(n):\n    return 10 / n\nprint(f(2))\nf(0)"
    with CodeSandbox(engine) as fresh:
        expected = fresh.run(failing)
    with CodeSandbox(engine) as sandbox:
        sandbox.run("x = 1")
        sandbox.run("def f(n):\n    return n")
        sandbox.reset()
        again = sandbox.run(failing)
    assert again.stdout == expected.stdout == "5.0\n"
    assert again.error == expected.error and "ZeroDivisionError" in again.error and sandbox.resets == 1


def test_a_worker_whose_code_started_a_thread_is_replaced(engine):
    with CodeSandbox(engine) as sandbox:
        sandbox.run("import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
                    "leak = 1")
        sandbox.reset()
        assert sandbox.resets == 0 and not sandbox.running  # declined: the next call starts a fresh worker
        result = sandbox.run("print('leak' in globals())")
        assert result.stdout == "False\n" and sandbox.starts == 2


def test_a_worker_whose_code_lowered_a_limit_is_replaced(engine):
    with CodeSandbox(engine) as sandbox:
        sandbox.run("import resource\nsoft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
                    "resource.setrlimit(resource.RLIMIT_NOFILE, (16, hard))")
        sandbox.reset()
        assert sandbox.resets == 0 and not sandbox.running


def test_the_pool_keeps_one_worker_for_the_run_and_counts_its_cpu_when_closed(engine):
    pool = SandboxPool(engine, SandboxLimits(timeout_s=10))
    pids = set()
    for question in range(3):
        sandbox = pool.acquire(warm=False)
        result = sandbox.run(f"value = {question}\nprint(sum(range(200000)))")
        assert result.ok and "value" not in sandbox.run("print(sorted(globals()))").stdout.split("'__builtins__'")[0]
        pids.add(sandbox.worker_pid)
        pool.release(sandbox)
    assert pool.created == 1 and len(pids) == 1 and sandbox.starts == 1 and sandbox.resets == 3
    worker = sandbox._process
    pool.close()
    assert worker is not None and worker.poll() is not None  # ended, not left running after the run
    assert pool.worker_cpu_s > 0


def _gone(pid: int) -> bool:
    """Whether ``pid`` is neither running nor a zombie left unreaped."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in {"X"}
    except OSError:
        return True


def test_the_run_counts_its_workers_and_their_cpu_time_by_the_kernel(engine):
    before = SANDBOX_USAGE.snapshot()
    pool = SandboxPool(engine, SandboxLimits(timeout_s=10))
    for _question in range(2):
        sandbox = pool.acquire(warm=False)
        # CPU spent in a process the code starts counts too: the worker's tree, not the worker alone
        assert sandbox.run("import subprocess, sys\nsubprocess.run([sys.executable, '-c', "
                           "'import time\\nt = time.process_time()\\nwhile time.process_time() - t < 0.4: pass'])"
                           ).ok
        pool.release(sandbox)
    pid = sandbox.worker_pid
    pool.close()
    usage = SANDBOX_USAGE.since(before)
    assert usage is not None
    assert usage.workers_started == 1 and usage.resets_in_place == 2 and usage.workers_ended == 1
    assert usage.workers_killed == 0 and 0.8 <= usage.worker_cpu_s < 30
    assert pid is not None and _gone(pid)  # waited for: no process or zombie left once the run has closed


def test_a_worker_killed_at_its_time_limit_still_counts_its_cpu_time(engine):
    before = SANDBOX_USAGE.snapshot()
    with CodeSandbox(engine, SandboxLimits(timeout_s=1)) as sandbox:
        result = sandbox.run("sum(range(10 ** 12))")  # one C call: the worker's own alarm cannot stop it
        assert result.error_kind == "timeout" and not sandbox.running  # killed by the parent past its deadline
    usage = SANDBOX_USAGE.since(before)
    assert usage is not None
    assert usage.workers_killed == 1 and usage.workers_started == 1 and usage.worker_cpu_s >= 0.3


def test_a_servers_open_pools_are_ended_when_it_stops(engine):
    """What ``ark serve`` and ``ark mcp`` call as they stop (and interpreter exit): every open pool's workers
    waited for and counted."""
    from ark.methods.graphscout.sandbox_pool import close_all_pools

    before = SANDBOX_USAGE.snapshot()
    pool = SandboxPool(engine, SandboxLimits(timeout_s=10))
    sandbox = pool.acquire(warm=False)
    assert sandbox.run("print(1)").ok
    pool.release(sandbox)
    pid = sandbox.worker_pid
    assert close_all_pools() >= 1
    assert pid is not None and _gone(pid) and not sandbox.running
    usage = SANDBOX_USAGE.since(before)
    assert usage is not None
    assert usage.workers_ended == 1 and usage.worker_cpu_s > 0
