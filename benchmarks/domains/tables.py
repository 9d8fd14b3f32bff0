"""The tables a user would have, and ARK's own importer reading them.

A builder turns a data package's files into :class:`DomainData` (typed node and edge rows plus the words that
phrase its relations as a person asks them); :func:`write_folder` writes the graph folder a user would bring
(``nodes.jsonl``, ``edges.csv``, ``graph.json``) and :func:`import_folder` runs ``ark graph import jsonl`` on it
in a new process, as a user does: the benchmark never builds ARK's store itself.
"""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Node:
    """One row of ``nodes.jsonl``: an id, a type, a name and, where the data has one, a description."""

    id: str
    type: str
    name: str
    description: str = ""
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Edge:
    """One row of ``edges.csv``: ``src`` --relation--> ``dst``."""

    src: str
    dst: str
    relation: str


@dataclass(frozen=True)
class Relation:
    """How a person asks about one relation, ``src --name--> dst``, in this graph's words.

    ``ask_dst`` are questions about a source ``{x}`` whose answers are its targets ("Who wrote {x}?");
    ``ask_src`` the reverse ("Which packages did {x} write?"); ``clause`` says what a source is in terms of a
    target ``{x}`` in the plural ("are written by {x}"), for intersections; ``shared`` asks for the other
    sources sharing a target with ``{x}`` ("Which other packages share an author with {x}?"); ``target``
    names a target in a phrase ("the author of {x}" for two hops: "the author"). Empty: not asked that way.
    """

    name: str
    ask_dst: tuple[str, ...] = ()
    ask_src: tuple[str, ...] = ()
    clause: str = ""
    shared: tuple[str, ...] = ()
    target: str = ""


@dataclass(frozen=True)
class TwoHop:
    """A chain ``anchor --first--> middle --second--> answer`` (a relation name, ``<`` before it: walked
    backwards) and its question about ``{x}``, the anchor's name."""

    first: str
    second: str
    template: str


@dataclass
class DomainData:
    """A graph of another domain as tables, with its relations' phrasings and the plural of each type."""

    name: str
    description: str
    source: str
    nodes: list[Node]
    edges: list[Edge]
    relations: dict[str, Relation]
    plurals: dict[str, str]
    two_hops: list[TwoHop] = field(default_factory=list)

    def check(self) -> None:
        """Refuse a table a user's import would refuse, naming the row (ids unique, edges to known nodes)."""
        ids: set[str] = set()
        for node in self.nodes:
            if node.id in ids:
                raise ValueError(f"{self.name}: duplicate node id {node.id!r}")
            ids.add(node.id)
        for edge in self.edges:
            if edge.src not in ids or edge.dst not in ids:
                raise ValueError(f"{self.name}: edge {edge} points at an unknown node")
            if edge.relation not in self.relations:
                raise ValueError(f"{self.name}: edge relation {edge.relation!r} has no phrasing")


def write_folder(data: DomainData, folder: Path) -> Path:
    """Write the graph folder a user would import: ``nodes.jsonl`` (id, type, name, description, properties),
    ``edges.csv`` (from, to, type) and ``graph.json`` (name, description, source)."""
    data.check()
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "nodes.jsonl", "w", encoding="utf-8") as out:
        for node in data.nodes:
            row: dict[str, object] = {"id": node.id, "type": node.type, "name": node.name}
            if node.description:
                row["description"] = node.description
            row.update(node.properties)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    with open(folder / "edges.csv", "w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["from", "to", "type"])
        writer.writerows((e.src, e.dst, e.relation) for e in data.edges)
    info = {"name": data.name, "description": data.description, "credit": data.source}
    (folder / "graph.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return folder


def import_folder(folder: Path, out: Path, home: Path) -> str:
    """``ark graph import jsonl FOLDER --out OUT --replace`` in a new process (this checkout's code, ``ARK_HOME``
    at ``home``); its printed lines, or :class:`RuntimeError` with its error."""
    env = {**os.environ, "ARK_HOME": str(home), "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "ark.cli.main", "graph", "import", "jsonl", str(folder),
                           "--out", str(out), "--replace"], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"ark graph import {folder} failed (exit {done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()[-2000:]}")
    return done.stdout


def package_folder(module: str, pin: str) -> Path:
    """The folder of the installed package ``module`` (found, not imported: its data files are read), or
    :class:`FileNotFoundError` saying what to install (``pin``, or the extra ``domains``)."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"this graph reads the data files of the {pin.split('==')[0]} package: "
                                f"pip install {pin} (or the extra: pip install -e '.[domains]')")
    return Path(next(iter(spec.submodule_search_locations)))
