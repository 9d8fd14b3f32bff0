"""Model-written code trying to get out of the sandbox. Every attempt must end in an observation (never an
exception in the caller), the next call must still work, and the graph database must be unchanged.

The attempts:

1. connect to a TCP server listening on the host's loopback;
2. reach the outside world (DNS lookup, a connection to a public address);
3. connect to an abstract Unix socket the parent listens on;
4. write files outside the private temp folder (the repository, /etc, the home folder);
5. write the database file directly (open for writing, truncate, replace it);
6. write to the database through Cypher: CREATE, SET, DELETE, DETACH DELETE, MERGE, REMOVE, DROP, COPY FROM,
   COPY TO (a file write), LOAD FROM (a file read), CALL timeout=0 (a session setting), INSTALL;
7. get past the read-only guard by fishing the engine object out of the interpreter's memory;
8. a fork bomb;
9. exhaust memory;
10. run past the time limit in Python (the variables survive);
11. run past the time limit in C with the alarm signal ignored (the worker is replaced);
12. flood stdout with print();
13. flood file descriptor 1 directly, below Python;
14. start processes that outlive the call (a daemon in its own session);
15. read the parent's secrets: environment variables, /proc/*/environ, ARK's config file with an API key;
16. signal or kill the parent (by its real pid and through getppid());
17. become root again (setuid(0));
18. fill the private temp folder;
19. exit the interpreter (os._exit): the next call gets a fresh one and is told so.
"""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import tempfile
from pathlib import Path

import pytest

from ark.sandbox import CodeSandbox, SandboxLimits, bwrap_problem
from tests.support.graphs import build_clinical_graph

pytest.importorskip("ladybug")
pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no bubblewrap sandbox: {bwrap_problem()}")

from ark.graphdb.ladybug_engine import open_ladybug  # noqa: E402

SECRET = "sk-test-secret-0123456789"
ABSTRACT = f"\0ark-escape-test-{os.getpid()}".encode()  # per process: test runs may share the machine


def file_digest(path: Path) -> str:
    digest = hashlib.blake2b()
    for file in sorted(path.parent.iterdir()):
        digest.update(file.name.encode())
        digest.update(file.read_bytes())
    return digest.hexdigest()


@pytest.fixture(scope="module")
def secret_home():
    """An ARK_HOME outside /tmp (which the sandbox replaces anyway) holding a config file with an API key."""
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()
    home = Path(tempfile.mkdtemp(prefix="ark-escape-home-", dir=base))
    (home / "config.toml").write_text(f'[llm]\napi_key = "{SECRET}"\n')
    yield home
    for file in home.iterdir():
        file.unlink()
    home.rmdir()


@pytest.fixture(scope="module")
def world(secret_home):
    patch = pytest.MonkeyPatch()
    patch.setenv("OPENAI_API_KEY", SECRET)
    patch.setenv("ARK_HOME", str(secret_home))
    engine = open_ladybug(build_clinical_graph())
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind(ABSTRACT)
    abstract.listen()
    sandbox = CodeSandbox(engine, SandboxLimits(timeout_s=8, memory_mb=512, max_processes=24, tmp_size_mb=8,
                                                file_size_mb=4, output_chars=2000))
    state = {"engine": engine, "sandbox": sandbox, "port": listener.getsockname()[1],
             "digest": file_digest(engine.path),
             "counts": engine.query("MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n), count(r)").rows,
             "secret_home": secret_home}
    yield state
    sandbox.close()
    listener.close()
    abstract.close()
    engine.close()
    patch.undo()


def attempt(world, code: str, *, timeout_s: float | None = None):
    """Run ``code``, then check the sandbox still answers and the database is untouched; returns the result."""
    sandbox, engine = world["sandbox"], world["engine"]
    result = sandbox.run(code, timeout_s=timeout_s)
    assert result.error is None or result.error_kind, result  # failures are labelled observations
    probe = sandbox.run("print(cypher('MATCH (g:gene) RETURN count(g) AS n')[0]['n'])")
    assert probe.ok and probe.stdout.strip() == "7", probe.observation()
    assert file_digest(engine.path) == world["digest"]
    assert engine.query("MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n), count(r)").rows == \
        world["counts"]
    return result


def test_01_no_loopback_connection_to_the_host(world):
    result = attempt(world, f"import socket\nsocket.create_connection(('127.0.0.1', {world['port']}), timeout=1)")
    assert "ConnectionRefusedError" in result.error


def test_02_no_outside_network(world):
    result = attempt(world, "import socket\nsocket.getaddrinfo('pypi.org', 443)")
    assert "gaierror" in result.error
    result = attempt(world, "import socket\nsocket.create_connection(('1.1.1.1', 53), timeout=1)")
    assert "unreachable" in result.error.lower() or "OSError" in result.error


def test_03_no_abstract_unix_socket_of_the_parent(world):
    result = attempt(world, f"import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect({ABSTRACT!r})")
    assert "ConnectionRefusedError" in result.error or "FileNotFoundError" in result.error


@pytest.mark.parametrize("target", [str(Path(__file__).resolve().parent / "PWNED"), "/etc/ark-pwned",
                                    str(Path.home() / "ark-pwned")])
def test_04_no_writes_outside_the_temp_folder(world, target):
    result = attempt(world, f"open({target!r}, 'w').write('x')")
    assert result.error_kind == "exception"
    assert any(word in result.error for word in ("Read-only", "Permission", "No such file"))  # or not there at all
    assert not Path(target).exists()
    assert attempt(world, "open('/tmp/scratch.txt', 'w').write('ok'); print(open('/tmp/scratch.txt').read())"
                   ).stdout == "ok\n"


@pytest.mark.parametrize("code", [
    "open({path!r}, 'r+b').write(b'garbage')",
    "import os\nos.truncate({path!r}, 0)",
    "import os\nos.replace('/tmp/x', {path!r})",
    "import os\nos.unlink({path!r})",
])
def test_05_no_direct_writes_to_the_database_file(world, code):
    attempt(world, "open('/tmp/x', 'w').write('x')")
    result = attempt(world, code.format(path=str(world["engine"].path)))
    assert result.error_kind == "exception"


@pytest.mark.parametrize("query", [
    "CREATE (n:gene {id: 'x', name: 'X', text: '', idx: 99})",
    "MATCH (n:gene) SET n.name = 'changed'",
    "MATCH (n:gene) DELETE n",
    "MATCH (n) DETACH DELETE n",
    "MERGE (n:gene {id: 'new'})",
    "MATCH (n:gene) REMOVE n.name",
    "DROP TABLE gene",
    "COPY gene FROM '/tmp/nodes.csv'",
    "COPY (MATCH (n) RETURN n.id) TO '/tmp/out.csv'",
    "LOAD FROM '/etc/passwd' (file_format='csv') RETURN *",
    "CALL timeout=0",
    "INSTALL httpfs",
])
def test_06_cypher_writes_are_refused(world, query):
    result = attempt(world, f"cypher({query!r})")
    assert result.error_kind == "cypher" and result.cypher_kind == "write_refused"
    assert "read-only" in result.error or "not allowed" in result.error


def test_07_the_engine_object_cannot_write_either(world):
    code = ("import gc\nfrom ark.graphdb.ladybug_engine import LadybugEngine\n"
            "engine = next(o for o in gc.get_objects() if isinstance(o, LadybugEngine))\n"
            "engine._connection().execute(\"CREATE (n:gene {id: 'x', name: 'X', text: '', idx: 99})\")")
    result = attempt(world, code)
    assert "read-only" in result.error


def test_08_fork_bomb_is_stopped(world):
    result = attempt(world, "import os\nwhile True:\n    os.fork()")
    assert result.error_kind == "exception" and "BlockingIOError" in result.error
    # Within a moment only the namespace's init and the worker are alive (killed processes are reaped by init).
    count = attempt(world, "import os, time\ndef alive():\n    return sum(1 for p in os.listdir('/proc') if "
                           "p.isdigit() and open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[0] not in 'ZX')\n"
                           "for _ in range(200):\n    if alive() <= 2:\n        break\n    time.sleep(0.02)\n"
                           "print(alive())")
    assert int(count.stdout) <= 2


def test_09_memory_exhaustion_is_an_observation(world):
    result = attempt(world, "blocks = []\nwhile True:\n    blocks.append(bytearray(256 * 1024 * 1024))")
    assert result.error_kind == "memory"


def test_10_python_loop_times_out_and_keeps_variables(world):
    attempt(world, "kept = 41")
    result = attempt(world, "while True:\n    pass", timeout_s=0.5)
    assert result.error_kind == "timeout" and "variables are kept" in result.error
    assert attempt(world, "print(kept + 1)").stdout == "42\n"


def test_11_ignored_alarm_in_c_code_is_killed_and_replaced(world):
    attempt(world, "kept = 1")
    result = world["sandbox"].run("import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nsum(range(10**13))",
                                  timeout_s=0.5)
    assert result.error_kind == "timeout" and "stopped" in result.error
    after = attempt(world, "print('kept' in globals())")
    assert after.stdout == "False\n" and "restarted" in after.note


def test_12_print_flood_is_cut(world):
    result = attempt(world, "while True:\n    print('x' * 1000)")
    assert result.error_kind == "output_limit" and result.output_truncated
    assert len(result.stdout) <= 2000


def test_13_raw_descriptor_flood_is_capped(world):
    result = attempt(world, "import os\nwhile True:\n    os.write(1, b'y' * 65536)")
    assert result.error_kind in ("exception", "timeout") and len(result.stdout) <= 2000


def test_14_processes_do_not_outlive_the_call(world):
    attempt(world, "import subprocess\nsubprocess.Popen(['sleep', '300'], start_new_session=True)\n"
                   "import os\nif os.fork() == 0:\n    os.setsid()\n    import time\n    time.sleep(300)")
    result = attempt(world, "import os\nprint([open(f'/proc/{p}/cmdline').read() for p in os.listdir('/proc') "
                            "if p.isdigit() and open(f'/proc/{p}/stat').read().split()[2] != 'Z'])")
    assert "sleep" not in result.stdout and "time.sleep" not in result.stdout


def test_15_no_secrets_reach_the_sandbox(world):
    assert os.environ["OPENAI_API_KEY"] == SECRET  # the parent has it ...
    code = ("import os\nfound = [k for k, v in os.environ.items() if 'sk-test' in v]\n"
            "for p in os.listdir('/proc'):\n"
            "    try:\n        found += [p] if b'sk-test' in open(f'/proc/{p}/environ', 'rb').read() else []\n"
            "    except OSError:\n        pass\n"
            f"try:\n    found += ['config'] if 'sk-test' in open({str(world['secret_home'] / 'config.toml')!r}).read()"
            " else []\nexcept OSError:\n    pass\nprint(found, sorted(os.environ))")
    result = attempt(world, code)
    assert result.stdout.startswith("[] ") and "OPENAI_API_KEY" not in result.stdout


def test_16_the_parent_cannot_be_signalled(world):
    result = attempt(world, f"import os, signal\nos.kill({os.getpid()}, signal.SIGKILL)")
    assert result.error_kind == "exception"
    result = attempt(world, "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)")
    assert result.error_kind == "exception"
    os.kill(os.getpid(), 0)  # still here


def test_17_no_way_back_to_root(world):
    result = attempt(world, "import os\nprint(os.getuid())\nos.setuid(0)")
    assert "PermissionError" in result.error
    if os.geteuid() == 0:
        assert result.stdout.strip() != "0"


def test_18_the_temp_folder_is_bounded(world):
    result = attempt(world, "with open('/tmp/big', 'wb') as f:\n    while True:\n        f.write(b'z' * 2**20)")
    assert result.error_kind == "exception" and ("No space" in result.error or "too large" in result.error)


def test_19_exiting_the_interpreter_is_survived(world):
    attempt(world, "kept = 1")
    result = world["sandbox"].run("import os\nos._exit(3)")
    assert result.error_kind == "crashed" and "exit status 3" in result.error
    after = attempt(world, "print('kept' in globals())")
    assert after.stdout == "False\n" and "restarted" in after.note


def test_signal_numbers_exist():
    assert signal.SIGKILL and signal.SIGALRM  # the attempts above rely on these
