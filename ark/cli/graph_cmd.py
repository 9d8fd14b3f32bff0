"""``ark graph``: build the built-in graphs, import outside formats, describe a graph, verify its files."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from .common import GRAPH_HELP, check_writable, console, err_console, fail, guarded, load_graph, progress_status

graph_app = typer.Typer(help="Build, import and inspect knowledge graphs.", no_args_is_help=True)
import_app = typer.Typer(help="Import a graph from an outside format into an ARK graph directory.",
                         no_args_is_help=True)
graph_app.add_typer(import_app, name="import")


def register(app: typer.Typer) -> None:
    app.add_typer(graph_app, name="graph")


@graph_app.command("build")
@guarded
def build(
    name: Annotated[str, typer.Argument(help="Built-in graph name, e.g. 'hpo'.")],
    force: Annotated[bool, typer.Option(help="Rebuild even if the cache holds it.")] = False,
) -> None:
    """Build a built-in graph into the cache ($ARK_HOME/graphs/NAME)."""
    from ..loaders import BUILDERS, build_named_graph

    if name not in BUILDERS:
        fail(f"unknown built-in graph {name!r}; valid: {', '.join(BUILDERS)}")
    start = time.perf_counter()
    path = build_named_graph(name, force=force, status=lambda line: err_console.print(Text(line, style="dim")))
    graph = load_graph(str(path))
    console.print(f"{graph!r} ready in {time.perf_counter() - start:.1f} s at {path}")


@import_app.command("stark")
@guarded
def import_stark(
    dataset: Annotated[str, typer.Argument(help="STaRK knowledge base: prime, mag or amazon.")],
    root: Annotated[Path, typer.Option(help="Folder holding the released processed/ folder.")],
    out: Annotated[Path, typer.Option("--out", help="Graph directory to write.")],
) -> None:
    """Import a STaRK semi-structured knowledge base from its released processed/ files."""
    from ..graph import GraphValidationError
    from ..graph.storage import check_graph_target, check_source_outside_target
    from ..loaders.stark import import_stark as run_import

    try:
        check_source_outside_target(root, out)
        check_graph_target(out)  # fail before the (possibly long) load, not after it
        check_writable(out / "graph.json", "cannot write --out")
        path = run_import(dataset, root, out)
    except (GraphValidationError, FileNotFoundError, ValueError, ImportError) as exc:
        fail(str(exc))
    console.print(f"Imported {load_graph(str(path), quiet=True)!r} into {path}")


@import_app.command("grbench")
@guarded
def import_grbench(
    source: Annotated[Path, typer.Argument(metavar="DIR", help="A GRBench domain folder (graph.json), or the "
                                                              "processed_data folder holding one per domain.")],
    out: Annotated[Path, typer.Option("--out", help="Graph directory to write.")],
    domain: Annotated[str | None, typer.Option(help="Domain folder inside DIR (e.g. biomedical, amazon).")] = None,
    chunk_size: Annotated[int, typer.Option(help="Nodes per written batch (bounds the memory).")] = 20_000,
    cypher: Annotated[bool, typer.Option(help="Also build the embedded Cypher database (needs the graphdb "
                                                "extra).")] = False,
) -> None:
    """Import a GRBench graph from its released graph.json, streaming (memory bounded by --chunk-size)."""
    from ..graph import GraphValidationError
    from ..loaders.grbench_import import estimate_import, stream_import_grbench

    folder = source / domain if domain else source
    if domain and not folder.is_dir():
        choices = sorted(p.name for p in source.iterdir() if (p / "graph.json").is_file()) if source.is_dir() else []
        fail(f"no domain folder {domain!r} in {source}; domains there: {', '.join(choices) or 'none'}")
    start = time.perf_counter()
    try:
        console.print(Text(estimate_import(folder).describe()))
        check_writable(out / "graph.json", "cannot write --out")
        with progress_status("Importing GRBench graph ...") as update:
            path = stream_import_grbench(folder, out, name=domain, chunk_size=chunk_size, progress=update)
    except (GraphValidationError, FileNotFoundError, ValueError, ImportError) as exc:
        fail(str(exc))
    graph = load_graph(str(path), quiet=True)
    console.print(Text(f"Imported {graph!r} into {path} in {time.perf_counter() - start:.1f} s"))
    if cypher:
        from ..graphdb import CypherUnavailable
        from ..graphdb.export import ladybug_database

        try:
            database = ladybug_database(graph, progress=True)
        except (CypherUnavailable, ImportError) as exc:
            fail(f"Cypher export: {exc}")
        console.print(Text(f"Cypher database: {database.path}"))


@graph_app.command("verify")
@guarded
def verify(
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)],
) -> None:
    """Hash every file of a graph and of its cached indexes in full against their checksums (opening a graph checks
    small files in full and large ones by sampled blocks). A damaged file is one error line with the fix; exit 1."""
    from ..graph.files import verify_graph
    from ..graph.storage import REBUILD_HINT
    from ..loaders.registry import BUILDERS, rebuild_command
    from ..storage.cache_folder import verify_folder
    from ..storage.checksums import DamagedFileError
    from .graph_update_cmd import graph_path

    path = graph_path(graph_name)
    hint = rebuild_command(graph_name) if graph_name in BUILDERS else REBUILD_HINT
    try:
        count = verify_graph(path, hint)
        # Paths are data, not markup (a folder may be named "[bold]..."): plain Text.
        console.print(Text(f"{path}: {count} graph files intact" if count else
                           f"{path}: no checksums (saved before they were added; rebuild the graph to add them)"))
        for folder in sorted(p for p in (path / "index").glob("*") if p.is_dir() and not p.name.startswith(".")):
            checked = verify_folder(folder)
            console.print(Text(f"{folder.name}: {checked} files intact" if checked is not None else
                               f"{folder.name}: no checksums (written before they were added; the next rebuild adds "
                               "them)"))
        from ..graphdb.versioned import verify_databases

        for folder, checked in verify_databases(path):  # the current version's Cypher databases
            console.print(Text(f"{folder.relative_to(path)}: {checked} files intact, this version's" if checked else
                               f"{folder.relative_to(path)}: this version's, no checksums (exported before they "
                               "were added)"))
    except DamagedFileError as exc:
        fail(str(exc), code=1)
    console.print("ok: every checksum matches")


@graph_app.command("info")
@guarded
def info(graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)]) -> None:
    """Counts per node type and relation, schema triples and text statistics."""
    graph = load_graph(graph_name, quiet=True)
    meta = graph.metadata
    name = escape(str(meta.get("name", graph_name)))
    console.print(f"[bold]{name}[/]: {graph.num_nodes:,} nodes, {graph.num_edges:,} edges")
    if meta.get("credit"):
        console.print(Text(f"Uses the {meta['credit']}."))
    if graph.path:
        console.print(Text(str(graph.path), style="dim"))

    import numpy as np

    lengths = np.fromiter((len(graph.text(i)) for i in range(graph.num_nodes)), dtype=np.int64,
                          count=graph.num_nodes)
    types = Table(title="Node types")
    for column in ("type", "nodes", "mean text chars", "empty text"):
        types.add_column(column, justify="left" if column == "type" else "right")
    for name in graph.node_types:
        mask = graph.type_mask(name)
        sizes = lengths[mask]
        types.add_row(Text(name), f"{int(mask.sum()):,}", f"{sizes.mean():.0f}" if len(sizes) else "-",
                      f"{int((sizes == 0).sum()):,}")
    console.print(types)

    relations = Table(title="Relations")
    relations.add_column("relation")
    relations.add_column("edges", justify="right")
    for name, count in graph.relation_counts().items():
        relations.add_row(Text(name), f"{count:,}")
    console.print(relations)

    schema = Table(title="Schema (source type, relation, target type)")
    for column in ("source", "relation", "target", "edges"):
        schema.add_column(column, justify="right" if column == "edges" else "left")
    for triple in graph.schema:
        schema.add_row(Text(triple.source_type), Text(triple.relation), Text(triple.target_type), f"{triple.count:,}")
    console.print(schema)
    console.print(f"Text: {int(lengths.sum()):,} characters in all, mean {lengths.mean():.0f} per node, "
                  f"max {int(lengths.max()):,}")
    if graph.path is not None and graph.info.stored_version is not None:
        from ..graph.versioning import version_history
        from .graph_update_cmd import history_table

        console.print(f"Version {graph.info.version}")
        console.print(history_table(version_history(graph.path)))


from . import graph_import_cmd, graph_update_cmd  # noqa: E402,F401 - ark graph import csv..., list, update, compact
