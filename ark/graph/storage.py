"""Graph directories: ``graph.json`` (metadata, type tables, schema), ``nodes.arrow`` and ``.npy`` arrays.

The node table is an uncompressed Arrow IPC file, so opening a graph memory-maps it instead of decoding it: a
STaRK-size graph (1.9M nodes, 2.5 GB of text) opens in milliseconds and its text stays in the shared page cache
rather than in each process's memory. Graphs saved before (format 1) hold ``nodes.parquet`` and still load.

``graph.json`` is written last and lists every other file with its size and checksum
(:mod:`ark.storage.checksums`): opening checks them (small files hashed in full, large ones by sampled blocks;
``ark graph verify`` hashes all), so a damaged file is one error naming it, never a wrong answer. Graphs saved
before checksums open as before; a file that cannot be read as what it should be (a truncated array) is still
named in the error.

A save goes to a temporary sibling directory that is renamed into place (:func:`ark.storage.atomic.atomic_directory`),
so a reader never sees half a graph. A save only ever replaces a missing path, an empty directory or an earlier
ARK graph directory: any other folder (a user's data, an ark-agent-cli source folder) is refused, never wiped.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..arrays import Ints
from ..storage.atomic import atomic_directory
from ..storage.checksums import DamagedFileError, check_files, file_records
from .errors import GraphValidationError
from .store import KnowledgeGraph, SchemaTriple

FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)  # 1: nodes.parquet
ARRAYS = ("node_type_codes", "indptr", "neighbors", "codes")
MANIFEST = "versions.json"  # beside graph.json once the graph has been updated (ark.graph.versioning)
REBUILD_HINT = "rebuild it: import the graph again (ark graph import ... --out a new folder)"


def is_graph_directory(path: str | Path) -> bool:
    """True if ``path`` is a directory whose ``graph.json`` carries ARK's ``format_version`` key.

    ark-agent-cli source folders also hold a ``graph.json``, but without ``format_version``.
    """
    meta_file = Path(path) / "graph.json"
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and "format_version" in meta


def check_graph_target(path: str | Path) -> None:
    """Raise :class:`GraphValidationError` unless a graph may be saved at ``path``.

    Allowed: a missing path, an empty directory, or an existing ARK graph directory (which is replaced).
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return
    if not path.is_dir():
        raise GraphValidationError(f"{path} exists and is not a directory; choose a new or empty output directory")
    if any(path.iterdir()) and not is_graph_directory(path):
        raise GraphValidationError(
            f"{path} is a non-empty directory that is not an ARK graph (no graph.json with format_version); "
            "refusing to replace it: choose a new or empty output directory"
        )


def check_source_outside_target(source: str | Path, out: str | Path) -> None:
    """Raise :class:`GraphValidationError` if saving to ``out`` would replace ``source`` or a folder holding it."""
    source_path, out_path = Path(source).resolve(), Path(out).resolve()
    if source_path == out_path or out_path in source_path.parents:
        raise GraphValidationError(
            f"output {out} would replace the import source {source}; choose a new or empty output directory"
        )


def save_graph(graph: KnowledgeGraph, path: str | Path) -> Path:
    """Write ``graph`` to directory ``path`` atomically, replacing an earlier ARK graph there.

    Raises :class:`GraphValidationError` if ``path`` is a file or a non-empty directory that is not an ARK graph.
    """
    path = Path(path)
    check_graph_target(path)
    with atomic_directory(path) as tmp:
        with pa.OSFile(str(tmp / "nodes.arrow"), "wb") as sink, pa.ipc.new_file(sink, graph.nodes.schema) as writer:
            _write_rows(writer, graph.nodes)
        write_graph_files(graph, tmp)
    graph.path = path
    return path


def _write_rows(writer: pa.ipc.RecordBatchFileWriter, table: pa.Table, rows: int = 65536) -> None:
    """Write ``table`` as record batches of about ``rows`` rows: a merged version's columns hold a chunk per run of
    unchanged rows (:mod:`ark.graph.versioning.merge`), which would otherwise become as many tiny batches."""
    if max((column.num_chunks for column in table.columns), default=0) <= max(1, table.num_rows // rows) + 1:
        writer.write_table(table)
        return
    for start in range(0, table.num_rows, rows):
        writer.write_table(table.slice(start, rows).combine_chunks())


def write_graph_files(graph: KnowledgeGraph, directory: Path) -> None:
    """Write everything of a graph directory but ``nodes.arrow`` (which a streaming import writes itself), with
    ``graph.json`` last, listing every other file's size and checksum (``nodes.arrow`` must be there already)."""
    arrays = {
        "node_type_codes": graph.node_type_codes,
        "indptr": graph.indptr,
        "neighbors": graph.neighbor_array,
        "codes": graph.code_array,
    }
    for name, array in arrays.items():
        np.save(directory / f"{name}.npy", np.asarray(array))
    write_graph_meta(directory, graph.num_nodes, graph.num_edges, graph.node_types, graph.relation_types,
                     graph.schema, graph.metadata)


def write_graph_meta(directory: Path, num_nodes: int, num_edges: int, node_types: list[str],
                     relation_types: list[str], schema: list[SchemaTriple], metadata: dict) -> None:
    """Write ``graph.json`` last, listing the size and checksum of ``nodes.arrow`` and the ``.npy`` arrays already
    in ``directory`` (a streaming import writes them itself)."""
    meta = {
        "format_version": FORMAT_VERSION,
        "num_nodes": num_nodes,
        "num_edges": num_edges,
        "node_types": node_types,
        "relation_types": relation_types,
        "schema": [asdict(t) for t in schema],
        "metadata": metadata,
        "files": file_records(directory, ["nodes.arrow", *(f"{name}.npy" for name in ARRAYS)]),
    }
    (directory / "graph.json").write_text(json.dumps(meta, indent=2, ensure_ascii=False))


def load_graph_directory(path: str | Path, mmap: bool = True, rebuild_hint: str = REBUILD_HINT) -> KnowledgeGraph:
    """Load the graph saved in directory ``path`` as it is (a base, without its updates).

    Raises :class:`~ark.storage.checksums.DamagedFileError` (naming the file, and ``rebuild_hint`` as the fix) when
    a file does not match its checksum or cannot be read.
    """
    path = Path(path)
    meta = read_graph_meta(path, rebuild_hint)
    if "files" in meta:
        check_files(path, meta["files"], rebuild_hint)
    arrays = {name: _load_array(path / f"{name}.npy", mmap, rebuild_hint) for name in ARRAYS}
    nodes_file = path / ("nodes.parquet" if meta["format_version"] == 1 else "nodes.arrow")
    try:
        nodes = _read_nodes(nodes_file, meta["format_version"], mmap)
    except (OSError, pa.ArrowException) as exc:
        raise DamagedFileError(nodes_file, f"unreadable: {exc}", rebuild_hint) from exc
    return KnowledgeGraph(
        nodes,
        arrays["node_type_codes"],
        meta["node_types"],
        meta["relation_types"],
        arrays["indptr"],
        arrays["neighbors"],
        arrays["codes"],
        [SchemaTriple(**t) for t in meta["schema"]],
        meta["metadata"],
        path=path,
    )


def read_graph_meta(path: Path, rebuild_hint: str = REBUILD_HINT) -> dict:
    """The parsed ``graph.json`` of graph directory ``path``, its format version checked."""
    meta_file = path / "graph.json"
    if not meta_file.is_file():
        raise FileNotFoundError(f"{path} is not an ARK graph directory (no graph.json)")
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DamagedFileError(meta_file, f"not valid JSON: {exc}", rebuild_hint) from exc
    if not isinstance(meta, dict) or meta.get("format_version") not in READABLE_VERSIONS:
        version = meta.get("format_version") if isinstance(meta, dict) else None
        raise GraphValidationError(
            f"{meta_file}: format version {version!r} is not supported "
            f"(expected one of {', '.join(map(str, READABLE_VERSIONS))})"
        )
    return meta


def verify_graph_directory(path: str | Path, rebuild_hint: str = REBUILD_HINT) -> int:
    """Hash every file of the graph directory ``path`` in full against its ``graph.json`` (a base, without its
    updates: :func:`ark.graph.files.verify_graph` checks those too); the number of files checked (0 for a graph
    saved before checksums). Raises :class:`~ark.storage.checksums.DamagedFileError`."""
    path = Path(path)
    records = read_graph_meta(path, rebuild_hint).get("files") or {}
    check_files(path, records, rebuild_hint, full=True)
    return len(records)


def _load_array(file: Path, mmap: bool, rebuild_hint: str) -> Ints:  # the arrays of ARRAYS: integers
    # np.asarray keeps the memory map but drops np.memmap's per-slice overhead (~8 us a lookup).
    try:
        return np.asarray(np.load(file, mmap_mode="r" if mmap else None))
    except FileNotFoundError:
        raise DamagedFileError(file, "missing", rebuild_hint) from None
    except (OSError, ValueError, EOFError) as exc:  # a truncated array: "mmap length is greater than file size"
        raise DamagedFileError(file, f"unreadable: {exc}", rebuild_hint) from exc


def _read_nodes(file: Path, format_version: int, mmap: bool) -> pa.Table:
    if format_version == 1:
        # ParquetFile.read, not pq.read_table: read_table goes through pyarrow.dataset, which imports pandas (~0.3 s
        # of start-up for every command that opens a graph); the table is the same. Imported here: format-2 graphs
        # (an Arrow file) never need pyarrow.parquet (~30 M instructions of start-up).
        import pyarrow.parquet as pq

        return pq.ParquetFile(file, memory_map=mmap).read()
    source = pa.memory_map(str(file)) if mmap else pa.OSFile(str(file))
    with source:
        return pa.ipc.open_file(source).read_all()  # zero-copy over the memory map
