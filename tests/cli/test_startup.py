"""The command line starts without its heavy libraries: ``ark --help`` imports none of them, and an offline
``ark ask`` never imports the ``openai`` SDK (which alone costs most of a second). Each case runs in a fresh
interpreter, as the user's shell would; ``benchmarks/cli_startup.py`` measures the times."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys

from ark.cli.main import COMMANDS, module_commands
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


def test_help_imports_no_heavy_library_and_no_command_module():
    """``ark --help`` lists the commands from the static table: no command's module, and none of typer's renderer
    with its markdown and traceback modules (markdown-it, pygments), which the page does not use."""
    loaded = loaded_modules("--help")
    assert "typer" in loaded  # the listing works
    packages = {name.split(".")[0] for name in loaded}
    heavy = {"openai", "httpx", "numpy", "scipy", "pyarrow", "pandas", "pydantic", "torch", "mcp", "uvicorn",
             "markdown_it", "pygments"}
    assert not packages & heavy, f"ark --help imported {sorted(packages & heavy)}"
    unused = {"rich.markdown", "rich.traceback", "typer.rich_utils",
              *(f"ark.cli.{listed.module}" for listed in COMMANDS.values())}
    assert not loaded & unused, f"ark --help imported {sorted(loaded & unused)}"


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
    ``np.unique`` imports it), the TOML parser and LLM settings (``--config`` and a configured model), the other
    method families' specs and options (the ``ark`` method is found in its own folder), and the other commands'
    modules."""
    graph = save_clinical_graph(tmp_path / "clinical")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "ARK_MODEL")}
    env["ARK_HOME"] = str(tmp_path / "home")
    loaded_packages("ask", str(graph), ONE_HOP[0], "--offline", env=env)  # builds the BM25 index
    loaded = loaded_modules("ask", str(graph), ONE_HOP[0], "--offline", env=env)
    assert {"ark.graph.storage", "ark.index.bm25", "ark.methods.ark.offline.policy"} <= loaded  # it really ran
    unused = {"pyarrow.compute", "pyarrow.parquet", "numpy.ma", "tomllib", "ark.llm.settings", "ark.llm.cache",
              "ark.methods.seeder.spec", "ark.methods.graphscout.options", "ark.methods.mfar.spec",
              *(f"ark.cli.{listed.module}" for listed in COMMANDS.values() if listed.module != "ask_cmd")}
    assert not loaded & unused, f"an offline ark ask imported {sorted(loaded & unused)}"


def test_the_table_names_each_modules_commands_with_their_listed_help():
    """``ark NAME`` imports the one module that COMMANDS names for NAME, and ``ark --help`` shows the table's help:
    the table must say what each module registers, with the first paragraph of each command's help."""
    import typer.main

    from ark.cli.main import app

    ctx = typer.main.get_command(app).make_context("ark", ["--help"], resilient_parsing=True)
    for module_name in dict.fromkeys(listed.module for listed in COMMANDS.values()):
        registered = module_commands(module_name).list_commands(ctx)
        assert sorted(registered) == sorted(name for name, listed in COMMANDS.items() if listed.module == module_name)
        for name in registered:
            command = module_commands(module_name).get_command(ctx, name)
            first_paragraph = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
            assert COMMANDS[name].help == first_paragraph, name


def test_process_settings_are_made_by_the_command_not_by_importing_the_package():
    """The ``ark`` process raises the collector's threshold and lets numpy's OpenBLAS threads sleep at once
    (they otherwise spin ~0.1 s each after numpy's import), unless the user chose; a program that imports ARK
    keeps its own settings."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    show = "import gc, os; print(gc.get_threshold()[0], os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"
    code = ("import gc, os; default = gc.get_threshold()\nimport ark.cli, ark.cli.main\n"
            "print(gc.get_threshold() == default, os.environ.get('OPENBLAS_THREAD_TIMEOUT'))")
    imported = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                              check=True).stdout.split()
    assert imported == ["True", "None"]
    run = RUN_AND_LIST_MODULES.replace('print("MODULES', show + '\nprint("MODULES')
    for user_value, expected in ((None, "4"), ("20", "20")):
        env_run = env if user_value is None else {**env, "OPENBLAS_THREAD_TIMEOUT": user_value}
        out = subprocess.run([sys.executable, "-c", run, "--help"], env=env_run, capture_output=True, text=True,
                             check=True).stdout.splitlines()
        assert out[-3].split() == ["50000", expected]


def test_no_import_hook_of_arks_is_left_on_the_meta_path():
    """ARK's start-up uses no import hook: importing the command line, and running a command that prints no
    help, leave ``sys.meta_path`` as they found it, with no finder from ARK's code."""
    code = """
import sys
sys.argv = ["ark", "methods"]
before = list(sys.meta_path)
import ark.cli, ark.cli.main
assert sys.meta_path == before, sys.meta_path
try:
    ark.cli.main.main()
except SystemExit as exc:
    assert not exc.code, exc.code
assert sys.meta_path == before, sys.meta_path
assert not [f for f in sys.meta_path if type(f).__module__.split(".")[0] == "ark"], sys.meta_path
print("meta_path unchanged")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().endswith("meta_path unchanged"), done.stderr


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
