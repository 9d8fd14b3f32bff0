"""SeedER's model directory: what a trained model is, on disk, and the checks before it is used.

    MODEL_DIR/
      model.json    format and version, the training settings, the network shape, the graph it was trained on
                    (name, fingerprint, node count, relation and node types), the embedder (spec, identity,
                    dimension), the PCA digest, and training facts (epochs, validation metrics, seconds, seed)
      weights.pt    the network's state dict (loaded with ``weights_only=True``)
      pca.npz       the input-feature PCA (mean, components): node features are rebuilt from it if the graph's
                    feature cache is missing or holds another fit
      checkpoints/  only while training (removed when training finishes)

A few hundred kilobytes for the default settings. :func:`load_model` refuses, with a message saying what to do, a
folder that is not a model, one whose training has not finished, and a model made for another graph or another
embedder.
"""

from __future__ import annotations

import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ark.errors import ArkError
from ark.storage.atomic import atomic_write_bytes, atomic_write_text

from .config import TrainSettings
from .embeddings import PCA

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph

FORMAT = "ark-seeder-model"
VERSION = 1
MODEL_FILE = "model.json"
WEIGHTS_FILE = "weights.pt"
PCA_FILE = "pca.npz"
CHECKPOINTS = "checkpoints"


class SeederModelError(ValueError, ArkError):
    """A model directory that cannot be used (missing, untrained, or made for another graph or embedder)."""


def graph_identity(graph: KnowledgeGraph) -> dict[str, Any]:
    """What a model records about its graph, and what the loader compares."""
    return {"name": graph.info.name, "fingerprint": graph.info.fingerprint,
            "num_nodes": int(graph.num_nodes), "relation_types": list(graph.relation_types),
            "node_types": list(graph.node_types)}


@dataclass
class ModelRecord:
    """A model directory's ``model.json``, its PCA, and (once loaded) its network."""

    directory: Path
    meta: dict[str, Any]
    settings: TrainSettings
    pca: PCA | None
    network: Any = None  # SeederNetwork, set by load_model
    note: str | None = None  # set by load_model for a model trained on an earlier version of the graph

    @property
    def embedder(self) -> dict[str, Any]:
        return self.meta["embedder"]

    @property
    def graph(self) -> dict[str, Any]:
        return self.meta["graph"]


def save_model(directory: str | Path, network: Any, settings: TrainSettings, graph: KnowledgeGraph,
               embedder: dict[str, Any],
               pca: PCA | None, training: dict[str, Any]) -> Path:
    """Write the model files (weights and PCA first, ``model.json`` last: a folder without it is never trusted)."""
    import torch

    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in network.state_dict().items()}, buffer)
    atomic_write_bytes(directory / WEIGHTS_FILE, buffer.getvalue())
    if pca is not None:
        buffer = io.BytesIO()
        np.savez(buffer, mean=pca.mean, components=pca.components)
        atomic_write_bytes(directory / PCA_FILE, buffer.getvalue())
    meta = {"format": FORMAT, "version": VERSION, "settings": settings.model_dump(mode="json"),
            "architecture": network.arch.model_dump(mode="json"), "graph": graph_identity(graph),
            "embedder": dict(embedder), "pca": None if pca is None else pca.digest(), "training": training}
    atomic_write_text(directory / MODEL_FILE, json.dumps(meta, indent=1, default=_json_default))
    return directory


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} to model.json")


BUILTIN_TRAINING = {"hpo": "ark train seeder hpo"}  # graphs with a one-command model (HPO quiz train/val splits)


def default_model_dir(graph_name: str) -> Path:
    """Where ``ark train seeder NAME`` (no ``--out``) writes the model of a built-in graph: ``ARK_HOME/models``."""
    from ark.config import ark_home

    return ark_home() / "models" / f"seeder-{graph_name}"


def resolve_model_dir(model: str | None, graph: KnowledgeGraph) -> Path:
    """The model directory the ``seeder`` method uses: ``model`` when given, else the default model of a built-in
    graph; :class:`SeederModelError` says how to make one when there is none."""
    if model:
        return Path(model).expanduser()
    name = graph.info.name
    if name in BUILTIN_TRAINING:
        directory = default_model_dir(name)
        if (directory / MODEL_FILE).is_file():
            return directory
        raise SeederModelError(f"no SeedER model for the built-in graph {name!r} yet: make one with "
                               f"`{BUILTIN_TRAINING[name]}` (builds the HPO quiz and trains on its train split, "
                               f"written to {directory}), or pass --set model=DIR")
    raise SeederModelError("SeedER needs a trained model directory: pass --set model=DIR (make one with "
                           "`ark train seeder GRAPH --queries TRAIN --val VAL --out DIR`)")


def read_model(directory: str | Path) -> ModelRecord:
    """Read ``model.json`` and the PCA (no torch needed); :class:`SeederModelError` when unusable."""
    directory = Path(directory)
    if not directory.is_dir():
        raise SeederModelError(f"no SeedER model at {directory}: the folder does not exist; train one with "
                               f"`ark train seeder GRAPH --queries TRAIN --out {directory}`")
    meta_path = directory / MODEL_FILE
    if not meta_path.is_file():
        if (directory / CHECKPOINTS).is_dir():
            raise SeederModelError(f"{directory} holds training checkpoints but no trained model yet: training did "
                                   "not finish; run the same training command again to resume it")
        raise SeederModelError(f"{directory} is not a trained SeedER model (no {MODEL_FILE}); train one with "
                               f"`ark train seeder GRAPH --queries TRAIN --out {directory}`")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SeederModelError(f"{meta_path} is not valid JSON ({exc}); the model directory is damaged") from None
    if meta.get("format") != FORMAT:
        raise SeederModelError(f"{meta_path} is not a SeedER model (format {meta.get('format')!r})")
    if meta.get("version") != VERSION:
        raise SeederModelError(f"{directory} was written by format version {meta.get('version')}; this ARK reads "
                               f"version {VERSION}: retrain the model")
    if not (directory / WEIGHTS_FILE).is_file():
        raise SeederModelError(f"{directory} has no {WEIGHTS_FILE}: the model is untrained or incomplete; retrain")
    pca = None
    if meta.get("pca") is not None:
        if not (directory / PCA_FILE).is_file():
            raise SeederModelError(f"{directory} lacks {PCA_FILE}, which its {MODEL_FILE} names; retrain the model")
        with np.load(directory / PCA_FILE) as saved:
            pca = PCA(saved["mean"], saved["components"])
        if pca.digest() != meta["pca"]:
            raise SeederModelError(f"{directory / PCA_FILE} does not match {MODEL_FILE}; the model is damaged")
    return ModelRecord(directory, meta, TrainSettings(**meta["settings"]), pca)


def _live_types(graph: KnowledgeGraph) -> tuple[set[str], set[str]]:
    """The node types that some node has and the relations that some edge has."""
    counts = np.bincount(np.asarray(graph.node_type_codes, np.int64), minlength=len(graph.node_types))
    return ({t for t, c in zip(graph.node_types, counts, strict=False) if c},
            {r for r, c in graph.relation_counts().items() if c})  # the schema's edge counts: no edge is read


def check_version(record: ModelRecord, graph: KnowledgeGraph, trained_version: int) -> str:
    """The note for a model trained on an earlier version of ``graph``, or :class:`SeederModelError` naming the
    node types and relations it was trained on that no longer exist, or that it never saw."""
    here = graph.info.version
    versions = f"trained on version {trained_version} of graph {record.graph.get('name')!r}, this is version {here}"
    node_types, relations = _live_types(graph)
    trained_types, trained_relations = record.graph["node_types"], record.graph["relation_types"]
    problems = [f"{what} {', '.join(map(repr, names))} {verb}" for what, names, verb in (
        ("node type(s)", [t for t in trained_types if t not in node_types], "no longer exist"),
        ("relation(s)", [r for r in trained_relations if r not in relations], "no longer exist"),
        ("node type(s)", sorted(node_types - set(trained_types)), "are new (the model never saw them)"),
        ("relation(s)", sorted(relations - set(trained_relations)), "are new (the model never saw them)")) if names]
    if problems:
        raise SeederModelError(f"the SeedER model in {record.directory} was {versions}: {'; '.join(problems)}; "
                               "retrain it on this version")
    return (f"note: the SeedER model in {record.directory} was {versions} (its node types and relations all "
            "still exist)")


def code_maps(record: ModelRecord, graph: KnowledgeGraph) -> tuple[np.ndarray, np.ndarray] | None:
    """For a graph whose node types or relations are numbered otherwise than at training (an updated graph):
    arrays turning the graph's type and relation codes into the model's (unknown names to 0: checked to have no
    nodes or edges by :func:`check_version`); None when the numbering is the model's."""
    trained_types, trained_relations = record.graph["node_types"], record.graph["relation_types"]
    if list(graph.node_types) == trained_types and list(graph.relation_types) == trained_relations:
        return None
    types = {name: code for code, name in enumerate(trained_types)}
    relations = {name: code for code, name in enumerate(trained_relations)}
    return (np.asarray([types.get(t, 0) for t in graph.node_types], np.int64),
            np.asarray([relations.get(r, 0) for r in graph.relation_types], np.int64))


def check_compatible(record: ModelRecord, graph: KnowledgeGraph, embedder_identity: str | None = None) -> str | None:
    """Refuse a model made for another graph (by fingerprint) or another embedder (by identity); for a model
    trained on an earlier version of this graph, the note :func:`check_version` gives (None when nothing to say)."""
    from ark.graph.versioning import version_trained_on

    trained, here = record.graph, graph_identity(graph)
    note = None
    if trained.get("fingerprint") != here["fingerprint"]:
        earlier = version_trained_on(graph, trained.get("fingerprint"))
        if earlier is not None:
            note = check_version(record, graph, earlier)
    if note is None and trained.get("fingerprint") != here["fingerprint"]:
        raise SeederModelError(
            f"the SeedER model in {record.directory} was trained on graph {trained.get('name')!r} "
            f"(fingerprint {trained.get('fingerprint')}, {trained.get('num_nodes'):,} nodes), not on this graph "
            f"{here['name']!r} (fingerprint {here['fingerprint']}, {here['num_nodes']:,} nodes); train a model "
            "for this graph")
    expected = record.embedder.get("identity")
    if embedder_identity is not None and embedder_identity != expected:
        raise SeederModelError(
            f"the SeedER model in {record.directory} expects node embeddings from {expected!r}, but the embedder "
            f"given is {embedder_identity!r}; use the model's embedder ({record.embedder.get('spec')!r}) or retrain")
    return note


def load_model(directory: str | Path, graph: KnowledgeGraph, embedder_identity: str | None = None, device: str = "cpu"
               ) -> ModelRecord:
    """Read, check against ``graph`` (and the embedder identity), and build the network on ``device``."""
    import torch

    from .model import Architecture, SeederNetwork

    record = read_model(directory)
    record.note = check_compatible(record, graph, embedder_identity)
    if record.note:
        print(record.note, file=sys.stderr)
    network = SeederNetwork(Architecture(**record.meta["architecture"]))
    state = torch.load(record.directory / WEIGHTS_FILE, map_location="cpu", weights_only=True)
    try:
        network.load_state_dict(state)
    except RuntimeError as exc:
        raise SeederModelError(f"{record.directory / WEIGHTS_FILE} does not fit the network in {MODEL_FILE}: "
                               f"{str(exc).splitlines()[0]}") from None
    record.network = network.to(device).eval()
    return record


def directory_size(directory: str | Path) -> int:
    """Bytes on disk of the model files (checkpoints excluded)."""
    directory = Path(directory)
    return sum(p.stat().st_size for p in directory.iterdir() if p.is_file())
