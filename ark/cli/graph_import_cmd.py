"""``ark graph import csv|tsv|jsonl|parquet|arrow FOLDER --name NAME`` and ``ark graph list``: a user's own graph,
imported whole (:mod:`ark.loaders.table_reader`) and known by its name (:mod:`ark.loaders.named`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from .common import check_writable, console, fail, guarded, load_graph
from .graph_cmd import graph_app, import_app

IdColumn = Annotated[str | None, typer.Option(help="The nodes' id column (default: id, node_id, entity_id or "
                                                   "Neo4j's :ID).")]
TypeColumn = Annotated[str | None, typer.Option(help="The nodes' type column (default: type, node_type, "
                                                     "entity_type or :LABEL).")]
NameColumn = Annotated[str | None, typer.Option(help="The nodes' name column (default: name, title or entity_name; "
                                                     "none: the id).")]
TextColumns = Annotated[str | None, typer.Option(help="Comma-separated columns that make a node's text after its "
                                                      "name (default: every text-like column).")]


def column_choice(id_column: str | None, type_column: str | None, name_column: str | None,
                  text_columns: str | None) -> Any:
    """The ``--*-column(s)`` flags as a :class:`~ark.loaders.table_reader.ColumnChoice`."""
    from ..loaders.table_reader import ColumnChoice

    text = None
    if text_columns is not None:
        text = tuple(c.strip() for c in text_columns.split(",") if c.strip())
        if not text:
            fail(f"--text-columns {text_columns!r} names no column; give names separated by commas")
    return ColumnChoice(id_column, type_column, name_column, text)


def _import(fmt: str, source: Path, out: Path | None, name: str | None, replace: bool, columns: Any) -> None:
    """Import ``source`` (a folder of tables, ``fmt``'s files first), register it by name, print what each type's
    columns became."""
    from ..config import ark_home
    from ..graph import GraphValidationError
    from ..graph.storage import check_graph_target, check_source_outside_target
    from ..loaders.named import check_name, register_graph, registered_graphs
    from ..loaders.registry import BUILDERS
    from ..loaders.tabular import import_tabular

    if not source.is_dir():
        fail(f"graph folder not found: {source}")
    register_as = name or source.resolve().name
    try:
        check_name(register_as, list(BUILDERS))
    except ValueError as exc:
        if name is not None or out is None:
            fail(f"{exc}{'' if name is not None else ' (the folder name; give --name NAME)'}")
        register_as = ""  # --out given and the folder's name is no graph name: saved there, not registered
    target = out if out is not None else ark_home() / "graphs" / register_as
    known = registered_graphs().get(register_as) if register_as else None
    if known is not None and Path(known["path"]) != target.resolve() and name is None and out is not None:
        register_as = ""  # the folder's name already names another graph: keep that one (the user named none)
    elif known is not None and Path(known["path"]) != target.resolve() and not replace:
        fail(f"graph name {register_as!r} is taken by the graph at {known['path']}; --replace points it at "
             f"{target}, or choose another --name", code=1)
    started = time.perf_counter()
    try:
        check_source_outside_target(source, target)
        check_graph_target(target)  # fail before the (possibly long) load, not after it
        _refuse_losing_versions(target, source, register_as or str(target), replace)
        check_writable(target / "graph.json", "cannot write --out")
        path = import_tabular(source, target, name=name, columns=columns, fmt=fmt,
                              report=lambda entry: console.print(Text(entry.describe())))
    except (GraphValidationError, FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    graph = load_graph(str(path), quiet=True)
    if register_as:
        register_graph(register_as, path, str(source.resolve()))
    called = f" as {register_as!r}" if register_as else ""
    console.print(Text(f"Imported {graph!r}{called} into {path} in {time.perf_counter() - started:.1f} s"))
    if register_as:
        console.print(Text(f'Ask it: ark ask {register_as} "your question"', style="dim"))


def _refuse_losing_versions(target: Path, source: Path, called: str, replace: bool) -> None:
    """Exit 1 if importing onto ``target`` would lose its updates or replace a graph of another source, unless
    ``replace``."""
    from ..graph.storage import is_graph_directory, read_graph_meta
    from ..graph.versioning import read_manifest

    if replace or not is_graph_directory(target):
        return
    manifest = read_manifest(target)
    versions = manifest.versions_since_import() if manifest is not None else []
    if versions:
        shown = ", ".join(str(v) for v in versions)
        fail(f"graph {called!r} at {target} has version(s) {shown} (updates since its import) that re-importing "
             "would lose; they are kept. Give --replace to replace the graph and its versions", code=1)
    before = str((read_graph_meta(target).get("metadata") or {}).get("source", ""))
    now = f"ark-agent-cli folder {source.resolve()}"
    if before != now:
        fail(f"graph {called!r} at {target} was imported from {before or 'another source'}, not {source}; "
             "give --replace to replace it", code=1)


def _command(fmt: str) -> None:
    @import_app.command(fmt, help=f"Import a folder of node and edge tables (nodes.{fmt} + edges.{fmt}; other "
                                  "formats are read too) and register it by name under ARK_HOME.")
    @guarded
    def command(
        source: Annotated[Path, typer.Argument(help="Folder with nodes and edges tables (and optional graph.json).")],
        out: Annotated[Path | None, typer.Option("--out", help="Graph directory to write (default: "
                                                               "$ARK_HOME/graphs/NAME).")] = None,
        name: Annotated[str | None, typer.Option(help="The graph's name for every command that takes GRAPH "
                                                      "(default: the folder's name).")] = None,
        replace: Annotated[bool, typer.Option(help="Replace a graph already there, its versions included.")] = False,
        id_column: IdColumn = None, type_column: TypeColumn = None, name_column: NameColumn = None,
        text_columns: TextColumns = None,
    ) -> None:
        _import(fmt, source, out, name, replace, column_choice(id_column, type_column, name_column, text_columns))


for _fmt in ("csv", "tsv", "jsonl", "parquet", "arrow"):
    _command(_fmt)


@graph_app.command("list")
@guarded
def list_graphs() -> None:
    """The graphs known by name: the built-in ones and those imported with --name (name, path, nodes, edges,
    version, when built or last updated)."""
    from ..loaders.named import describe, registered_graphs
    from ..loaders.registry import BUILDERS, graph_dir

    rows = [describe(name, graph_dir(name), "built-in") for name in BUILDERS]
    rows += [describe(name, Path(entry["path"]), "imported") for name, entry in registered_graphs().items()]
    table = Table(title="Graphs")
    for column in ("name", "kind", "path", "nodes", "edges", "version", "built"):
        table.add_column(column, justify="right" if column in ("nodes", "edges", "version") else "left")
    for row in rows:
        counts = (f"{row.nodes:,}" if row.nodes is not None else "-", f"{row.edges:,}" if row.edges is not None
                  else "-", str(row.version) if row.version is not None else "-")
        built = row.built_at or ("not built yet" if row.kind == "built-in" else "missing")
        table.add_row(Text(row.name), row.kind, Text(str(row.path)), *counts, Text(built))
    console.print(table)
