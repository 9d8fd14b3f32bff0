"""Graphs by name: the names a user's imports register under ``$ARK_HOME`` (``graphs.json``), and finding a graph
by built-in name, path or registered name.

``ark graph import ... --name films`` saves the graph (into ``$ARK_HOME/graphs/films`` unless ``--out`` says
where) and records ``films`` -> its folder and its source in ``$ARK_HOME/graphs.json`` (replaced atomically, one
writer at a time), so every command that takes GRAPH takes ``films``. A name is letters, digits, ``.``, ``_`` and
``-`` (an allow-list: a name is also a folder name), at most 64 characters, and never a built-in graph's name.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import ark_home
from ..storage.atomic import atomic_write_text
from ..storage.locks import output_lock
from ..text import did_you_mean

REGISTRY = "graphs.json"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def registry_file() -> Path:
    return ark_home() / REGISTRY


def check_name(name: str, builtins: list[str]) -> str:
    """``name`` if it may name a user's graph; ``ValueError`` says why not."""
    if not _NAME.fullmatch(name):
        raise ValueError(f"graph name {name!r} is not allowed: use letters, digits, '.', '_' and '-' (at most 64, "
                         "starting with a letter or digit)")
    if name in builtins:
        raise ValueError(f"graph name {name!r} is a built-in graph's; choose another --name")
    return name


def registered_graphs() -> dict[str, dict[str, Any]]:
    """Every registered name -> ``{"path", "source", "registered"}`` (an unreadable registry reads as empty)."""
    try:
        data = json.loads(registry_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    graphs = data.get("graphs") if isinstance(data, dict) else None
    return {k: v for k, v in (graphs or {}).items() if isinstance(v, dict) and isinstance(v.get("path"), str)}


def registered_path(name: str) -> Path | None:
    """The folder registered as ``name``, else ``$ARK_HOME/graphs/NAME`` when a graph is there, else None."""
    entry = registered_graphs().get(name)
    if entry is not None:
        return Path(entry["path"])
    if _NAME.fullmatch(name) and (ark_home() / "graphs" / name / "graph.json").is_file():
        return ark_home() / "graphs" / name
    return None


def register_graph(name: str, path: Path, source: str) -> None:
    """Record ``name`` -> ``path`` (made absolute) in the registry."""
    file = registry_file()
    with output_lock(file, "graph registry"):
        graphs = registered_graphs()
        graphs[name] = {"path": str(Path(path).resolve()), "source": source,
                        "registered": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        atomic_write_text(file, json.dumps({"format": 1, "graphs": dict(sorted(graphs.items()))}, indent=2,
                                           ensure_ascii=False) + "\n")


def unknown_graph(text: str, builtins: list[str]) -> str:
    """The error for a GRAPH that is no built-in, no graph folder and no registered name, with one suggestion."""
    names = [*builtins, *registered_graphs()]
    return (f"{text!r} is neither a built-in graph ({', '.join(builtins)}), a graph you imported "
            f"({', '.join(registered_graphs()) or 'none yet: ark graph import ... --name NAME'}) nor a graph "
            f"directory (no graph.json there){did_you_mean(text, names)}")


@dataclass(frozen=True)
class GraphListing:
    """One row of ``ark graph list``."""

    name: str
    path: Path
    built: bool
    nodes: int | None = None
    edges: int | None = None
    version: int | None = None
    built_at: str | None = None
    kind: str = "imported"


def describe(name: str, path: Path, kind: str) -> GraphListing:
    """What ``ark graph list`` shows of the graph at ``path``: its current version's counts and when it was built
    or last updated."""
    meta_file = path / "graph.json"
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return GraphListing(name, path, False, kind=kind)
    nodes, edges, version = meta.get("num_nodes"), meta.get("num_edges"), 0
    changed = meta_file.stat().st_mtime
    manifest_file = path / "versions.json"
    if manifest_file.is_file():  # an updated graph: its current version counted (merged in memory, not copied)
        from ..graph.versioning import open_version

        try:
            graph = open_version(path)
            nodes, edges = graph.num_nodes, graph.num_edges
            version = graph.info.version
            changed = manifest_file.stat().st_mtime
        except (OSError, ValueError):
            pass
    return GraphListing(name, path, True, nodes, edges, version,
                        time.strftime("%Y-%m-%d %H:%M", time.localtime(changed)), kind)

