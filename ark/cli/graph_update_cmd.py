"""``ark graph update`` and ``ark graph compact``: change a saved graph without a rebuild (see
:mod:`ark.graph.versioning`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from .common import GRAPH_HELP, console, fail, guarded
from .graph_cmd import graph_app
from .graph_import_cmd import IdColumn, NameColumn, TextColumns, TypeColumn, column_choice

if TYPE_CHECKING:
    from ..graph.versioning import VersionEntry


def graph_path(graph_name: str) -> Path:
    """The directory of a built-in graph (built), a graph directory or a graph imported under a name; exits 2
    naming the valid choices."""
    from ..loaders.registry import BUILDERS, graph_location

    try:
        path = graph_location(graph_name)
    except ValueError as exc:
        fail(str(exc))
    if not (path / "graph.json").is_file():
        fail(f"{graph_name!r} is not built yet (ark graph build {graph_name})" if graph_name in BUILDERS else
             f"{graph_name!r} holds no graph")
    return path


@graph_app.command("update")
@guarded
def update(
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)],
    nodes: Annotated[Path | None, typer.Option(help="New or changed nodes, read as an import reads them "
                                                    "(.csv/.tsv/.jsonl/.parquet/.arrow).")] = None,
    edges: Annotated[Path | None, typer.Option(help="Edges to add (from, to, type).")] = None,
    delete: Annotated[Path | None, typer.Option(help="Nodes or edges to delete: a table (an id column, or from, to, "
                                                     "type) or text: a node id a line, or from<TAB>to<TAB>type.")
                      ] = None,
    from_export: Annotated[Path | None, typer.Option("--from", help="A full new export (a folder in the import "
                                                                    "formats): its difference is stored.")] = None,
    note: Annotated[str, typer.Option(help="A note kept in the version history.")] = "",
    id_column: IdColumn = None, type_column: TypeColumn = None, name_column: NameColumn = None,
    text_columns: TextColumns = None,
) -> None:
    """Add, change and delete nodes and edges as a new version of the graph (no rebuild); the graph's BM25 index
    follows with a segment for the changed documents."""
    from ..graph import GraphValidationError
    from ..graph.versioning import update_graph
    from ..loaders.updates import diff_export, read_update
    from ..storage.locks import OutputLocked

    if from_export is not None and any(x is not None for x in (nodes, edges, delete)):
        fail("--from replaces --nodes/--edges/--delete: give either a full new export or the changes")
    if from_export is None and all(x is None for x in (nodes, edges, delete)):
        fail("nothing to update: give --nodes, --edges and/or --delete, or --from NEW_EXPORT_DIR")
    path = graph_path(graph_name)
    started = time.perf_counter()
    try:
        from ..graph.files import load_graph
        from ..graph.info import GraphInfo
        from ..graph.storage import read_graph_meta
        from ..loaders.table_reader import ColumnChoice

        # the columns chosen at import hold for its updates, unless a flag says otherwise
        stored = ColumnChoice.from_stored(GraphInfo.from_metadata(read_graph_meta(path).get("metadata") or {}).columns)
        columns = column_choice(id_column, type_column, name_column, text_columns).over(stored)
        if from_export is not None:
            from ..loaders.tabular import load_tabular

            delta = diff_export(load_graph(path), load_tabular(from_export, columns=columns))
        else:
            delta = read_update(nodes, edges, delete, columns=columns)
        graph = update_graph(path, delta, note=note)
    except (GraphValidationError, OutputLocked, ValueError, FileNotFoundError) as exc:
        fail(str(exc))
    graph_s = time.perf_counter() - started
    started = time.perf_counter()
    from ..index import open_index

    open_index(graph, "bm25", progress=False)
    counts = delta.counts()
    console.print(Text(f"version {graph.info.version}: {counts['nodes_upserted']:,} nodes new or "
                       f"changed, {counts['nodes_deleted']:,} deleted, {counts['edges_added']:,} edges added, "
                       f"{counts['edges_removed']:,} removed; {graph!r}; graph {graph_s:.2f} s, BM25 "
                       f"{time.perf_counter() - started:.2f} s"))
    started = time.perf_counter()
    from ..graphdb.versioned import database_after_update

    database = database_after_update(graph)  # the previous version had a Cypher database: this one gets its own
    if database is not None:
        console.print(Text(f"Cypher database of version {graph.info.version}: "
                           f"{database.path.parent.relative_to(path)} in {time.perf_counter() - started:.2f} s"))


@graph_app.command("compact")
@guarded
def compact(
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)],
) -> None:
    """Fold the updates into a new base (readers holding an older version keep it until they reopen the graph)."""
    from ..graph import GraphValidationError
    from ..graph.versioning import compact_graph
    from ..storage.locks import OutputLocked

    path = graph_path(graph_name)
    started = time.perf_counter()
    try:
        version = compact_graph(path)
    except (GraphValidationError, OutputLocked) as exc:
        fail(str(exc))
    console.print(f"version {version} compacted into a new base in {time.perf_counter() - started:.2f} s")


def history_table(history: list[VersionEntry]) -> Table:
    """The version history as ``ark graph info`` shows it."""
    table = Table(title="Versions")
    for column in ("version", "kind", "created", "changes", "note"):
        table.add_column(column)
    for entry in history:
        counts = entry.counts
        changes = ", ".join(f"{key.replace('_', ' ')} {value:,}" for key, value in counts.items()
                            if isinstance(value, int))
        table.add_row(str(entry.version), entry.kind, str(entry.created or "-"), Text(changes), Text(entry.note))
    return table
