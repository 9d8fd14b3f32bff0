"""The method registry: one file adds a method that ``ark eval`` runs with validated ``--set`` options; listing
methods imports no implementation and no extra; bad options name the valid keys."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ark.methods import MethodError, build_method, get_method_spec, method_specs
from ark.methods.options import describe_options, merge_options, parse_set_values
from tests.support.graphs import ONE_HOP, build_clinical_graph, save_clinical_graph

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
"""A trivial method in one file: ranks a chosen node first, then the nodes of one type."""
from pydantic import Field

from ark.methods import MethodOptions, MethodOutput, MethodSpec, Retriever, register_method


class PinOptions(MethodOptions):
    first: str = Field(default="OMIM:154700", description="node id ranked first")
    depth: int = Field(default=2, ge=1, description="how many nodes to return")


class PinRetriever(Retriever):
    def __init__(self, graph, options, context):
        self.order = [graph.index_of(options.first)] + [i for i in range(graph.num_nodes)][: options.depth - 1]

    def retrieve(self, query, k):
        return MethodOutput(self.order[:k], [1.0 / (r + 1) for r in range(len(self.order[:k]))])


register_method(MethodSpec("pin", "ranks a chosen node first", PinOptions, "pin_method:PinRetriever"))
'''


def _ark(*args: str, cwd: Path, plugin_dir: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ARK_METHOD_MODULES": "pin_method", "PYTHONPATH": f"{plugin_dir}{os.pathsep}{REPO}",
           "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "ark.cli.main", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_a_method_in_one_file_runs_through_ark_eval_with_its_options_recorded(tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "pin_method.py").write_text(PLUGIN)
    graph_dir = save_clinical_graph(tmp_path / "clinical")
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"id": f"q{i}", "query": f"question {i}", "answer_ids": ["NCBIGene:2200"]})
                               + "\n" for i in range(3)))
    run = tmp_path / "run"
    done = _ark("eval", str(graph_dir), "--method", "pin", "--set", "first=NCBIGene:2200", "--set", "depth=3",
                "--queries", str(queries), "--run-dir", str(run), "--no-progress", cwd=tmp_path, plugin_dir=plugins)
    assert done.returncode == 0, done.stderr
    config = json.loads((run / "config.json").read_text())
    assert config["method"] == "pin" and config["method_options"] == {"first": "NCBIGene:2200", "depth": 3}
    assert json.loads((run / "summary.json").read_text())["overall"]["hit@1"] == 1.0
    # Resuming with other options is refused and names the difference.
    again = _ark("eval", str(graph_dir), "--method", "pin", "--set", "depth=2", "--queries", str(queries),
                 "--run-dir", str(run), "--no-progress", cwd=tmp_path, plugin_dir=plugins)
    assert again.returncode == 2 and "method_options" in again.stderr
    # A bad key or value is refused with the valid keys and their types.
    bad_key = _ark("eval", str(graph_dir), "--method", "pin", "--set", "deep=3", "--queries", str(queries),
                   cwd=tmp_path, plugin_dir=plugins)
    assert bad_key.returncode == 2 and "unknown option 'deep'" in bad_key.stderr
    assert "Valid options: first (str), depth (int)" in bad_key.stderr
    bad_value = _ark("eval", str(graph_dir), "--method", "pin", "--set", "depth=zero", "--queries", str(queries),
                     cwd=tmp_path, plugin_dir=plugins)
    assert bad_value.returncode == 2 and "depth='zero'" in bad_value.stderr
    listed = _ark("methods", cwd=tmp_path, plugin_dir=plugins)
    assert listed.returncode == 0 and "pin" in listed.stdout and "ranks a chosen node first" in listed.stdout


BLOCKED = ("torch", "sentence_transformers", "transformers", "trl", "peft", "matplotlib", "pandas", "ladybug", "mcp",
           "ray", "faiss", "openai", "neo4j")

WITHOUT_EXTRAS = textwrap.dedent(f"""
    import importlib.abc, sys
    BLOCKED = {BLOCKED!r}

    class NotInstalled(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {{name!r}}")
            return None

    sys.meta_path.insert(0, NotInstalled())
    from ark.cli.main import app
    for args in (["--help"], ["methods"], ["methods", "ark"], ["methods", "graphscout"], ["methods", "seeder"]):
        try:
            app(args)
        except SystemExit as exit:
            assert exit.code in (0, None), (args, exit.code)
    loaded = sorted(m for m in sys.modules if m.startswith("ark.methods."))
    light = {{"registry", "base", "options", "spec", "choice"}}
    heavy = [m for m in loaded if m.rsplit(".", 1)[-1] not in light and m.count(".") > 2]
    print("LOADED", loaded)
    assert not heavy, heavy
    assert not [m for m in sys.modules if m.split(".")[0] in BLOCKED]
""")


def test_help_and_method_listing_need_no_extra_and_import_no_method(tmp_path):
    done = subprocess.run([sys.executable, "-c", WITHOUT_EXTRAS], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}, timeout=120)
    assert done.returncode == 0, done.stderr + done.stdout
    assert "ark methods" in done.stdout and "bm25-rel" in done.stdout and "tools.neighborhood_budget" in done.stdout


def test_builtin_methods_and_their_options():
    specs = method_specs()
    assert {"ark", "bm25", "bm25-rel", "dense"} <= set(specs)
    keys = [o.key for o in describe_options(specs["ark"].options)]
    assert keys[:2] == ["n_agents", "max_steps"] and "tools.neighborhood_budget" in keys
    options = get_method_spec("ark").make_options({"n_agents": 1, "tools": {"neighborhood_budget": 5}})
    assert options.n_agents == 1 and options.tools.neighborhood_budget == 5 and options.max_steps == 20
    with pytest.raises(MethodError, match="unknown method 'nope'; valid: ark"):
        get_method_spec("nope")
    with pytest.raises(MethodError, match=r"tools.neighborhood_budget=0: .*greater than or equal to 1"):
        get_method_spec("ark").make_options({"tools": {"neighborhood_budget": 0}})


def test_set_values_parse_as_json_or_text_and_nest_by_dots():
    values = parse_set_values(["n_agents=5", "fusion=votes", "tools.neighborhood_budget=10", "system_prompt=null",
                               "tools.neighborhood_tool=false", 'name="a=b"'])
    assert values == {"n_agents": 5, "fusion": "votes", "system_prompt": None, "name": "a=b",
                      "tools": {"neighborhood_budget": 10, "neighborhood_tool": False}}
    assert merge_options({"tools": {"a": 1, "b": 2}}, {"tools": {"b": 3}}) == {"tools": {"a": 1, "b": 3}}
    with pytest.raises(MethodError, match="expected key=value"):
        parse_set_values(["n_agents"])


def test_build_method_from_python_answers_through_the_contract():
    graph = build_clinical_graph()
    retriever = build_method("ark", graph, {"n_agents": 1})
    output = retriever.retrieve(ONE_HOP[0], k=10)
    assert graph.node_id(output.indices[0]) == ONE_HOP[1] and len(output.trajectories) == 1
    assert output.record.config["n_agents"] == 1


SHADOW_PLUGIN = '''
from ark.methods import MethodOptions, MethodSpec

SHADOW = MethodSpec("ark", "a plugin's method under a built-in name", MethodOptions, "shadow_plugin:Shadow")
'''

SHADOW_CHECKS = textwrap.dedent("""
    from ark.methods import MethodError, get_method_spec, method_specs, register_method
    from shadow_plugin import SHADOW

    try:
        register_method(SHADOW)
        print("REGISTERED")
    except MethodError as exc:
        print("REFUSED", exc)
    print("FOUND", get_method_spec("ark").factory)
    for _ in range(2):
        try:
            method_specs()
            print("LISTED")
        except MethodError as exc:
            print("REFUSED", exc)
""")


def _install_shadow_plugin(site: Path) -> None:
    """A package installed the way pip leaves one: a module and a dist-info declaring an ``ark.methods`` entry
    point, which hands over a method named like the built-in ``ark``."""
    dist_info = site / "shadow_plugin-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (site / "shadow_plugin.py").write_text(SHADOW_PLUGIN)
    (dist_info / "METADATA").write_text("Metadata-Version: 2.1\nName: shadow-plugin\nVersion: 1.0\n")
    (dist_info / "entry_points.txt").write_text("[ark.methods]\nshadow = shadow_plugin:SHADOW\n")


def test_a_plugin_cannot_take_a_built_in_methods_name_on_any_path(tmp_path):
    _install_shadow_plugin(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": f"{tmp_path / 'site'}{os.pathsep}{REPO}", "COLUMNS": "200"}
    env.pop("ARK_METHOD_MODULES", None)

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)

    # The command running one method (the family-folder lookup) gets the built-in, as the full listing would.
    one = run("-m", "ark.cli.main", "methods", "ark")
    assert one.returncode == 0 and "n_agents" in one.stdout, one.stderr
    # Discovery refuses the plugin, naming the entry point, its package and the name it took.
    listed = run("-m", "ark.cli.main", "methods")
    assert listed.returncode == 2, listed.stdout
    refusal = " ".join(listed.stderr.split())
    assert "shadow = shadow_plugin:SHADOW" in refusal and "shadow-plugin" in refusal
    assert "'ark'" in refusal and "built-in" in refusal
    # From Python: registering the name is refused before any lookup, the lookup still finds the built-in, and the
    # refusal of the installed plugin holds on every later listing, not only the first.
    lines = run("-c", SHADOW_CHECKS).stdout.splitlines()
    assert lines[0].startswith("REFUSED method 'ark' (shadow_plugin:Shadow) takes the name of a built-in")
    assert lines[1] == f"FOUND {method_specs()['ark'].factory}"
    assert len(lines) == 4 and all(line.startswith("REFUSED plugin shadow = shadow_plugin:SHADOW")
                                   for line in lines[2:]), lines
