"""The command line starts without its heavy libraries: ``ark --help`` imports none of them, and an offline
``ark ask`` never imports the ``openai`` SDK (which alone costs most of a second). Each case runs in a fresh
interpreter, as the user's shell would; ``benchmarks/cli_startup.py`` measures the times."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

import pytest

from ark.cli.main import COMMAND_MODULES, app, registrations
from tests.support.graphs import ONE_HOP, save_clinical_graph

RUN_AND_LIST_MODULES = """
import sys
sys.argv = ["ark", *sys.argv[1:]]
from ark.cli.main import main
try:
    main()
except SystemExit as exc:
    code = exc.code
print("MODULES " + " ".join(sorted({name.split(".")[0] for name in sys.modules})))
print("FULL " + " ".join(sorted(sys.modules)))
"""


def loaded_packages(*argv: str, env: dict[str, str] | None = None) -> set[str]:
    """The top-level packages ``ark argv`` imported."""
    return _listed("MODULES ", argv, env)


def loaded_modules(*argv: str, env: dict[str, str] | None = None) -> set[str]:
    """Every module (dotted names) ``ark argv`` imported."""
    return _listed("FULL ", argv, env)


def _listed(prefix: str, argv: tuple[str, ...], env: dict[str, str] | None) -> set[str]:
    done = subprocess.run([sys.executable, "-c", RUN_AND_LIST_MODULES, *argv], capture_output=True, text=True,
                          timeout=120, env=env)
    [line] = [line for line in done.stdout.splitlines() if line.startswith(prefix)]
    return set(line.split()[1:])


def test_help_imports_no_heavy_library():
    loaded = loaded_packages("--help")
    assert "typer" in loaded  # the listing works
    heavy = {"openai", "httpx", "numpy", "scipy", "pyarrow", "pandas", "pydantic", "torch", "mcp", "uvicorn"}
    assert not loaded & heavy, f"ark --help imported {sorted(loaded & heavy)}"


def test_offline_ask_never_imports_the_openai_sdk(tmp_path):
    graph = save_clinical_graph(tmp_path / "clinical")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL")}
    env["ARK_HOME"] = str(tmp_path / "home")
    first = loaded_packages("ask", str(graph), ONE_HOP[0], "--offline", env=env)  # builds the BM25 index
    assert "openai" not in first
    loaded = loaded_packages("ask", str(graph), ONE_HOP[0], "--offline", env=env)  # on a built graph and index
    assert "numpy" in loaded  # the question really ran
    heavy = {"openai", "httpx", "pandas", "scipy", "torch"}
    assert not loaded & heavy, f"an offline ark ask imported {sorted(loaded & heavy)}"


def test_ask_with_no_model_configured_falls_back_without_importing_llm_clients(tmp_path):
    """The README's main job, ``ark ask GRAPH "..."`` with no model configured, runs the offline policy: it must not
    pay for the openai SDK or the local-model backend it then does not use."""
    graph = save_clinical_graph(tmp_path / "clinical")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL")}
    env["ARK_HOME"] = str(tmp_path / "home")
    loaded_packages("ask", str(graph), ONE_HOP[0], env=env)  # builds the BM25 index
    loaded = loaded_modules("ask", str(graph), ONE_HOP[0], env=env)
    assert {"ark.llm.settings", "ark.methods.ark.offline.policy"} <= loaded  # settings read, offline policy ran
    unused = {"openai", "httpx", "ark.llm.openai_client", "ark.llm.local_backend", "ark.llm.hf_models"}
    assert not loaded & unused, f"ark ask with no model imported {sorted(loaded & unused)}"


def test_offline_ask_on_a_built_graph_imports_only_what_it_uses(tmp_path):
    """Modules an offline question does not use stay unimported: pyarrow.compute (~0.1 s; building a graph or an
    index needs it, opening and querying them do not), pyarrow.parquet (format-1 graphs only), numpy.ma (plain
    ``np.unique`` imports it), the TOML parser and LLM settings (``--config`` and a configured model), and the
    other commands' modules."""
    graph = save_clinical_graph(tmp_path / "clinical")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL")}
    env["ARK_HOME"] = str(tmp_path / "home")
    loaded_packages("ask", str(graph), ONE_HOP[0], "--offline", env=env)  # builds the BM25 index
    loaded = loaded_modules("ask", str(graph), ONE_HOP[0], "--offline", env=env)
    assert {"ark.graph.storage", "ark.index.bm25", "ark.methods.ark.offline.policy"} <= loaded  # it really ran
    unused = {"pyarrow.compute", "pyarrow.parquet", "numpy.ma", "tomllib", "ark.llm.settings", "ark.llm.cache",
              *(f"ark.cli.{name}" for name in COMMAND_MODULES if name != "ask_cmd")}
    assert not loaded & unused, f"an offline ark ask imported {sorted(loaded & unused)}"


def test_each_command_module_registers_the_commands_the_entry_point_expects():
    """``ark NAME`` imports the one module that COMMAND_MODULES names for NAME: the table must say what each
    module registers, or a command would be missing from its own app."""
    for module_name, names in COMMAND_MODULES.items():
        commands, groups = registrations(module_name)
        registered = [c.name or c.callback.__name__ for c in commands] + [g.name for g in groups]
        assert sorted(registered) == sorted(names), module_name
    whole = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
    assert len(whole) == len(set(whole)) == sum(map(len, COMMAND_MODULES.values()))


def test_the_command_line_lets_numpy_blas_threads_sleep_at_once_unless_the_user_chose():
    """OpenBLAS worker threads otherwise spin ~0.1 s each after numpy's import (CPU and, on a busy machine, wall
    time of every command that opens a graph); the setting only shortens that wait."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    code = "import os, ark.cli; print(os.environ['OPENBLAS_THREAD_TIMEOUT'])"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.strip() == "4"
    env["OPENBLAS_THREAD_TIMEOUT"] = "20"
    assert subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout.strip() == "20"


def test_the_app_built_for_one_command_parses_and_reports_like_the_whole_app():
    """``ark NAME ...`` runs an app holding only command NAME (typer would otherwise convert every command first):
    help, usage errors and exit codes are the whole app's, and anything but a command name gets the whole app."""
    from typer.testing import CliRunner

    from ark.cli.main import app_for

    runner = CliRunner()
    for argv in (["ask", "--help"], ["ask", "hpo", "q", "--no-such-flag"], ["ask"], ["graph"], ["graph", "--help"],
                 ["methods", "no-such-method"], ["trajectory", "show", "--help"]):
        single = app_for(argv)
        assert single is not app
        whole, alone = runner.invoke(app, argv), runner.invoke(single, argv)
        assert (alone.exit_code, alone.output) == (whole.exit_code, whole.output), argv
    for argv in (["--no-such-flag"], ["no-such-command"]):
        assert app_for(argv) is app


@pytest.mark.parametrize("columns", ["60", "100", "200"])
def test_the_help_app_prints_the_whole_apps_help_and_usage_errors(monkeypatch, columns):
    """``ark`` and ``ark --help ...`` run an app whose commands have no parameters (their listing needs none): the
    output and exit code are the whole app's."""
    from typer.testing import CliRunner

    from ark.cli.main import app_for

    monkeypatch.setenv("COLUMNS", columns)
    runner = CliRunner()
    for argv in ([], ["--help"], ["--help", "--no-such-flag"], ["--help", "ask"], ["--help", "ask", "--top", "0"],
                 ["--help", "--", "ask"]):
        lite_app = app_for(argv)
        assert lite_app is not app and not any(inspect.signature(c.callback).parameters
                                               for c in lite_app.registered_commands)
        whole, lite = runner.invoke(app, argv), runner.invoke(lite_app, argv)
        assert (lite.exit_code, lite.output) == (whole.exit_code, whole.output), argv
        assert "Commands" in whole.output or "Error" in whole.output


def test_objects_made_after_start_up_are_still_finalised_at_exit(tmp_path):
    """The ark process freezes its start-up objects (the collector skips them); anything made later, such as what
    the command writes, is collected and finalised at exit as usual, cycles included."""
    out = tmp_path / "finalised.txt"
    code = f"""
import gc
from ark.cli.common import CommandProcess, freeze_startup_objects
freeze_startup_objects()
assert gc.get_freeze_count() == 0  # not the ark process: nothing frozen
CommandProcess.is_command = True
freeze_startup_objects()
assert gc.get_freeze_count() > 0

class Holder:
    def __del__(self):
        with open({str(out)!r}, "w") as file:
            file.write("finalised")

holder = Holder()
holder.itself = holder  # a cycle: only the collector can finalise it
del holder
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
    assert out.read_text() == "finalised"
