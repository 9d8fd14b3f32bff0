"""``versions.json`` as typed records: the manifest (current version, base, history) and its history entries.

The file keeps its on-disk form: an entry read from disk writes back the same JSON object (its keys in their order,
keys of older or newer ARK versions included), so reading and rewriting a manifest changes only what an update
appends. Every reader of a graph's versions (the graph store, the Cypher databases, the CLI) goes through these
records instead of walking the JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...storage.checksums import DamagedFileError
from ..errors import GraphValidationError
from ..storage import MANIFEST

MANIFEST_FORMAT = 1
FIX = "the graph's version files are damaged: rebuild or re-import the graph"
EntryKind = str  # "base", "delta" (an update) or "compaction"


@dataclass(frozen=True)
class VersionEntry:
    """One history entry: the version it made, how (``kind``), its fingerprint and, for an update, its files."""

    version: int
    kind: EntryKind
    fingerprint: Any = None
    created: str | None = None
    counts: Mapping[str, Any] = field(default_factory=dict)
    note: str = ""
    delta: str | None = None  # an update's folder, relative to the graph's
    files: Mapping[str, Any] = field(default_factory=dict)  # an update's file records (checksums)
    fingerprint_format: int | None = None
    sums: Any = None  # an update's fingerprint sums relative to its base (ark.graph.versioning.fingerprint)
    cypher: str | None = None  # the folder of the Cypher databases of the version an update made
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_update(self) -> bool:
        return self.kind == "delta"

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VersionEntry:
        return cls(version=int(data["version"]), kind=str(data["kind"]), fingerprint=data.get("fingerprint"),
                   created=data.get("created"), counts=dict(data.get("counts") or {}),
                   note=str(data.get("note") or ""), delta=data.get("delta"), files=dict(data.get("files") or {}),
                   fingerprint_format=data.get("fingerprint_format"), sums=data.get("sums"),
                   cypher=data.get("cypher"), raw=dict(data))

    def to_json(self) -> dict[str, Any]:
        """The entry as ``versions.json`` holds it (an entry read from disk: the object it was read from)."""
        return dict(self.raw)


def update_entry(version: int, delta: str, files: Mapping[str, Any], created: str, counts: Mapping[str, Any],
                 note: str, fingerprint: Any, fingerprint_format: int, sums: Any) -> VersionEntry:
    """The entry of an update that made ``version`` from the files in folder ``delta``."""
    return VersionEntry.from_json({"version": version, "kind": "delta", "delta": delta, "files": dict(files),
                                   "created": created, "counts": dict(counts), "note": note,
                                   "fingerprint": fingerprint, "fingerprint_format": fingerprint_format,
                                   "sums": sums, "cypher": f"cypher/versions/{version:06d}"})


def base_entry(version: int, kind: EntryKind, created: str | None, nodes: Any, edges: Any,
               fingerprint: Any) -> VersionEntry:
    """The entry of a base: the first (``kind="base"``) or one a compaction saved (``"compaction"``)."""
    return VersionEntry.from_json({"version": version, "kind": kind, "created": created,
                                   "counts": {"nodes": nodes, "edges": edges}, "fingerprint": fingerprint})


@dataclass(frozen=True)
class VersionManifest:
    """A graph's versions: the ``current`` one, the ``base`` folder later versions are built from, the history."""

    current: int
    base_version: int
    base_path: str  # relative to the graph's folder ("." for the first base)
    history: tuple[VersionEntry, ...]

    def entry(self, version: int) -> VersionEntry:
        """The newest entry of ``version`` (its update, or the compaction that made it a base)."""
        return [h for h in self.history if h.version == version][-1]

    def update_of(self, version: int) -> VersionEntry | None:
        """The update that made ``version`` (kept after a compaction), or None."""
        found = [h for h in self.history if h.is_update and h.version == version]
        return found[-1] if found else None

    def updates_upto(self, version: int) -> list[VersionEntry]:
        """The updates since the base that ``version`` is made of, oldest first."""
        return [h for h in self.history if h.is_update and self.base_version < h.version <= version]

    def base_fingerprint(self) -> Any:
        return [h for h in self.history if h.version == self.base_version and not h.is_update][-1].fingerprint

    def versions_since_import(self) -> list[int]:
        """The versions updates made (what a re-import would lose), ascending."""
        return sorted({h.version for h in self.history if h.version > 0})

    def cypher_folder(self, version: int) -> str:
        """The folder (relative to the graph's) holding the Cypher databases of ``version``: ``cypher`` for version
        0, else the one the update that made it names (a compaction keeps its version's database)."""
        if version == 0:
            return "cypher"
        update = self.update_of(version)
        return update.cypher if update is not None and update.cypher else f"cypher/versions/{version:06d}"

    def with_update(self, entry: VersionEntry) -> VersionManifest:
        return VersionManifest(entry.version, self.base_version, self.base_path, (*self.history, entry))

    def with_base(self, entry: VersionEntry, path: str) -> VersionManifest:
        return VersionManifest(self.current, entry.version, path, (*self.history, entry))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> VersionManifest:
        base = data["base"]
        return cls(int(data["current"]), int(base["version"]), str(base["path"]),
                   tuple(VersionEntry.from_json(h) for h in data["history"]))

    def to_json(self) -> dict[str, Any]:
        return {"format": MANIFEST_FORMAT, "current": self.current,
                "base": {"version": self.base_version, "path": self.base_path},
                "history": [h.to_json() for h in self.history]}

    def dumps(self) -> str:
        return json.dumps(self.to_json(), indent=1, ensure_ascii=False)


def read_manifest(path: str | Path) -> VersionManifest | None:
    """The ``versions.json`` of graph directory ``path``, or None for a graph never updated."""
    file = Path(path) / MANIFEST
    if not file.is_file():
        return None
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise DamagedFileError(file, f"not valid JSON: {exc}", FIX) from exc
    found = data.get("format") if isinstance(data, dict) else None
    if found != MANIFEST_FORMAT:
        raise GraphValidationError(f"{file}: manifest format {found!r} is not supported (expected {MANIFEST_FORMAT})")
    try:
        return VersionManifest.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise DamagedFileError(file, f"not a version manifest ({type(exc).__name__}: {exc})", FIX) from exc


def initial_manifest(meta: Mapping[str, Any]) -> VersionManifest:
    """The manifest of a graph never updated, from its ``graph.json`` ``meta``: version 0, its own folder the base."""
    fingerprint = (meta.get("metadata") or {}).get("fingerprint")
    entry = base_entry(0, "base", None, meta.get("num_nodes"), meta.get("num_edges"), fingerprint)
    return VersionManifest(0, 0, ".", (entry,))
