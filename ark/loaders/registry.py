"""Named, built-in graphs (``hpo``) and opening a graph by name or path.

A named graph is built once, on first use, into ``$ARK_HOME/graphs/<name>/`` and memory-mapped afterwards; a copy
built by an older version of its loader (``GraphInfo.loader_version``) is rebuilt. A build killed midway leaves a
temporary folder that the next use removes (see :mod:`ark.storage.atomic`). Processes starting together build it
once: the build holds a lock (:func:`ark.storage.locks.build_lock`) that the others wait for, and they then open
what it wrote. A damaged file of a named graph is reported with the command that rebuilds it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..config import ark_home
from ..graph import KnowledgeGraph, load_graph, save_graph
from ..storage.atomic import remove_stale_temporaries
from ..storage.locks import build_lock
from .hpo import LOADER_VERSION as HPO_LOADER_VERSION
from .hpo import build_hpo_graph

BUILDERS: dict[str, Callable[[], KnowledgeGraph]] = {"hpo": build_hpo_graph}
LOADER_VERSIONS: dict[str, int] = {"hpo": HPO_LOADER_VERSION}


def graph_dir(name: str) -> Path:
    return ark_home() / "graphs" / name


def build_named_graph(name: str, force: bool = False, status: Callable[[str], None] | None = None) -> Path:
    """Build the built-in graph ``name`` into the cache (unless already built) and return its folder."""
    if name not in BUILDERS:
        raise ValueError(f"unknown built-in graph {name!r}; valid: {', '.join(BUILDERS)}")
    target = graph_dir(name)
    remove_stale_temporaries(target)  # a killed build's folder (its process is gone)
    if not force and _built_version(target) == LOADER_VERSIONS.get(name):
        return target
    with build_lock(target, waiting=status):
        built = _built_version(target)  # another process may have built it while this one waited
        if force or built != LOADER_VERSIONS.get(name):
            if status:
                why = "first use" if built == -1 else "built by an older loader"
                status(f"Building graph {name!r} into {target} ({why}; once: later runs open the saved graph "
                       "at once) ...")
            save_graph(BUILDERS[name](), target)
    return target


def rebuild_command(name: str) -> str:
    """The fix for a damaged file of built-in graph ``name``."""
    return f"rebuild it: ark graph build {name} --force"


def _built_version(target: Path) -> int | None:
    """The loader version recorded in a built graph (None when it predates versions), -1 when there is none."""
    try:
        meta = json.loads((target / "graph.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return -1
    return (meta.get("metadata") or {}).get("loader_version")


def graph_location(name_or_path: str | Path) -> Path:
    """The folder of GRAPH: a built-in graph's (built or not), a graph directory, or a registered name's
    (:mod:`.named`); ``ValueError`` names the choices, with the closest one."""
    from .named import registered_path, unknown_graph

    text = str(name_or_path)
    if text in BUILDERS:
        return graph_dir(text)
    path = Path(text).expanduser()
    if (path / "graph.json").is_file():
        return path
    registered = registered_path(text)
    if registered is not None:
        if not (registered / "graph.json").is_file():
            raise ValueError(f"graph {text!r} was registered at {registered}, which holds no graph any more; "
                             f"import it again (ark graph import ... --name {text} --replace)")
        return registered
    raise ValueError(unknown_graph(text, list(BUILDERS)))


def open_graph(name_or_path: str | Path, status: Callable[[str], None] | None = None) -> KnowledgeGraph:
    """Open a built-in graph by name (building it on first use), a graph directory by path, or a graph imported
    under a name (:mod:`.named`)."""
    text = str(name_or_path)
    if text in BUILDERS:
        return load_graph(build_named_graph(text, status=status), rebuild_hint=rebuild_command(text))
    return load_graph(graph_location(text))
