"""A trained baseline's model folder (``avatar``'s prompts, ``mor``'s reranker): one JSON file naming its format,
version and the graph it was made for, written last and atomically, and checked before the method uses it.

A folder without that file is never trusted; one made for another graph (by fingerprint) or by another format
version is refused with a one-line :class:`ModelFolderError` that says what to do. Families keep what else goes into
their folder; this module holds only what every trained baseline checks the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .registry import MethodError

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph


class ModelFolderError(MethodError):
    """A model folder that cannot be used (missing, unfinished, damaged, or made for another graph)."""


def graph_identity(graph: KnowledgeGraph) -> dict[str, Any]:
    """What a model records about its graph, and what :func:`read_model_file` compares."""
    return {"name": graph.info.name, "fingerprint": graph.info.fingerprint,
            "num_nodes": int(graph.num_nodes), "relation_types": list(graph.relation_types),
            "node_types": list(graph.node_types)}


def default_model_dir(method: str, graph_name: str) -> Path:
    """Where ``ark train METHOD GRAPH`` writes by default, and where ``--method METHOD`` looks: ``ARK_HOME/models``."""
    from ..config import ark_home

    return ark_home() / "models" / f"{method}-{graph_name}"


def model_folder_field(method: str) -> Any:
    """The ``model`` option of a trained baseline: the folder ``ark train METHOD`` wrote (default
    :func:`default_model_dir`)."""
    from pydantic import Field

    return Field(default=None, description=f"model folder written by `ark train {method}` (default: "
                                           f"ARK_HOME/models/{method}-GRAPH)")


def library_versions() -> dict[str, str]:
    """Versions of the libraries a trained baseline's results depend on (recorded in its model file)."""
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in ("ark-kg", "numpy", "torch", "sentence-transformers"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def write_model_file(directory: Path, filename: str, fmt: str, version: int, graph: KnowledgeGraph,
                     body: dict[str, Any]) -> Path:
    """Write ``directory/filename`` (format, version, graph identity, library versions, then ``body``) atomically."""
    from ..storage.atomic import atomic_write_text

    directory.mkdir(parents=True, exist_ok=True)
    meta = {"format": fmt, "version": version, "graph": graph_identity(graph), "libraries": library_versions(),
            **body}
    return atomic_write_text(directory / filename, json.dumps(meta, indent=1))


def resolve_model_dir(model: str | None, graph: KnowledgeGraph, method: str) -> Path:
    """The folder ``--set model=DIR`` names, else the graph's default folder (:func:`default_model_dir`)."""
    if model:
        return Path(model).expanduser()
    name = graph.info.label()
    return default_model_dir(method, name)


def read_model_file(directory: Path, filename: str, fmt: str, version: int, graph: KnowledgeGraph, method: str,
                    how_to_train: str) -> dict[str, Any]:
    """The checked model file of ``directory``: :class:`ModelFolderError` (one line, with ``how_to_train``) when it
    is missing, unfinished, damaged, of another format or version, or made for another graph."""
    path = directory / filename
    if not path.is_file():
        state = "holds training state but no finished model: rerun the training command to resume it" \
            if directory.is_dir() and any(directory.iterdir()) else "does not hold one"
        raise ModelFolderError(f"method {method!r} needs a trained model and {directory} {state}; make one with "
                               f"`{how_to_train}`, or pass --set model=DIR")
    meta = _parsed(path)
    found = meta.get("format") if isinstance(meta, dict) else None
    if found != fmt:
        raise ModelFolderError(f"{path} is not a {method} model (format {found!r}, expected {fmt!r})")
    if meta.get("version") != version:
        raise ModelFolderError(f"{directory} was written by {method} model version {meta.get('version')}; this ARK "
                               f"reads version {version}: retrain with `{how_to_train}`")
    trained, here = meta.get("graph") or {}, graph_identity(graph)
    if trained.get("fingerprint") != here["fingerprint"]:
        raise ModelFolderError(
            f"the {method} model in {directory} was made for graph {trained.get('name')!r} (fingerprint "
            f"{trained.get('fingerprint')}, {trained.get('num_nodes')} nodes), not this graph {here['name']!r} "
            f"(fingerprint {here['fingerprint']}, {here['num_nodes']} nodes); make one for this graph with "
            f"`{how_to_train}`")
    return meta


def _parsed(path: Path) -> Any:
    """The JSON value of a model file; :class:`ModelFolderError` when it is damaged."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ModelFolderError(f"{path} is not valid JSON ({exc}); the model folder is damaged: retrain") from None
