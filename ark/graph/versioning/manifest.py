"""``versions.json`` as typed records: the manifest (current version, base, history) and its history entries.

The file keeps its on-disk form: an entry read from disk writes back the same JSON object (its keys in their order,
keys of older or newer ARK versions included), so reading and rewriting a manifest changes only what an update
appends. Every reader of a graph's versions (the graph store, the Cypher databases, the CLI) goes through these
records instead of walking the JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypedDict, TypeVar

from ...storage.checksums import DamagedFileError
from ..errors import GraphValidationError
from ..storage import MANIFEST

MANIFEST_FORMAT = 1
FIX = "the graph's version files are damaged: rebuild or re-import the graph"
EntryKind = str  # "base", "delta" (an update) or "compaction"
BaseKind = Literal["base", "compaction"]
FileRecords = Mapping[str, Mapping[str, object]]  # file name -> {"size", "blake2b", ...} (ark.storage.checksums)
SumsJson = Mapping[str, Sequence[str]]  # an update's fingerprint sums, as hex (versioning.fingerprint.sums_to_json)
T = TypeVar("T")


class EntryJson(TypedDict, total=False):
    """One history entry as ``versions.json`` holds it; keys of other ARK versions may stand beside these."""

    version: int
    kind: str
    fingerprint: str | None
    created: str | None
    counts: Mapping[str, int | None]
    note: str
    delta: str
    files: FileRecords
    fingerprint_format: int
    sums: SumsJson
    cypher: str


@dataclass(frozen=True)
class VersionEntry:
    """One history entry: the version it made, how (``kind``), its fingerprint and, for an update, its files."""

    version: int
    kind: EntryKind
    fingerprint: str | None = None
    created: str | None = None
    counts: Mapping[str, int | None] = field(default_factory=dict)
    note: str = ""
    delta: str | None = None  # an update's folder, relative to the graph's
    files: FileRecords = field(default_factory=dict)  # an update's file records (checksums)
    fingerprint_format: int | None = None
    sums: SumsJson | None = None  # an update's fingerprint sums relative to its base (ark.graph.versioning.fingerprint)
    cypher: str | None = None  # the folder of the Cypher databases of the version an update made
    raw: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)

    @property
    def is_update(self) -> bool:
        return self.kind == "delta"

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> VersionEntry:
        """The entry of one JSON object of the history; ``TypeError``/``ValueError`` naming the key that is not
        what it should be (:func:`read_manifest` reports it as a damaged manifest)."""
        return cls(version=_int(data["version"], "version"), kind=str(data["kind"]),
                   fingerprint=_optional(data, "fingerprint", str), created=_optional(data, "created", str),
                   counts=_counts(data.get("counts")), note=str(data.get("note") or ""),
                   delta=_optional(data, "delta", str), files=_files(data.get("files")),
                   fingerprint_format=_optional_int(data, "fingerprint_format"), sums=_sums(data.get("sums")),
                   cypher=_optional(data, "cypher", str), raw=dict(data))

    def to_json(self) -> dict[str, object]:
        """The entry as ``versions.json`` holds it (an entry read from disk: the object it was read from)."""
        return dict(self.raw)


def update_entry(version: int, delta: str, files: FileRecords, created: str, counts: Mapping[str, int], note: str,
                 fingerprint: str, fingerprint_format: int, sums: SumsJson) -> VersionEntry:
    """The entry of an update that made ``version`` from the files in folder ``delta``."""
    entry: EntryJson = {"version": version, "kind": "delta", "delta": delta, "files": dict(files),
                        "created": created, "counts": dict(counts), "note": note, "fingerprint": fingerprint,
                        "fingerprint_format": fingerprint_format, "sums": sums,
                        "cypher": f"cypher/versions/{version:06d}"}
    return VersionEntry.from_json(entry)


def base_entry(version: int, kind: BaseKind, created: str | None, nodes: int | None, edges: int | None,
               fingerprint: str | None) -> VersionEntry:
    """The entry of a base: the first (``kind="base"``) or one a compaction saved (``"compaction"``)."""
    entry: EntryJson = {"version": version, "kind": kind, "created": created,
                        "counts": {"nodes": nodes, "edges": edges}, "fingerprint": fingerprint}
    return VersionEntry.from_json(entry)


def _int(value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"{key!r} is {value!r}, not a whole number")
    return int(value)


def _optional(data: Mapping[str, object], key: str, kind: type[T]) -> T | None:
    value = data.get(key)
    if value is not None and not isinstance(value, kind):
        raise TypeError(f"{key!r} is {value!r}, not a {kind.__name__}")
    return value


def _optional_int(data: Mapping[str, object], key: str) -> int | None:
    value = data.get(key)
    return None if value is None else _int(value, key)


def _object(value: object, key: str) -> Mapping[str, object]:
    if not isinstance(value, Mapping):
        raise TypeError(f"{key!r} is {value!r}, not a JSON object")
    return {str(k): v for k, v in value.items()}


def _counts(value: object) -> dict[str, int | None]:
    return {k: None if v is None else _int(v, f"counts.{k}") for k, v in _object(value or {}, "counts").items()}


def _files(value: object) -> dict[str, Mapping[str, object]]:
    return {name: _object(record, f"files.{name}") for name, record in _object(value or {}, "files").items()}


def _sums(value: object) -> dict[str, list[str]] | None:
    if value is None:
        return None
    sums = {}
    for k, lanes in _object(value, "sums").items():
        if not isinstance(lanes, list) or not all(isinstance(x, str) for x in lanes):
            raise TypeError(f"'sums.{k}' is {lanes!r}, not a list of hex strings")
        sums[k] = [str(x) for x in lanes]
    return sums


class BaseJson(TypedDict):
    version: int
    path: str


class ManifestJson(TypedDict):
    """``versions.json`` as written: its format, the current version, the base and the history entries."""

    format: int
    current: int
    base: BaseJson
    history: list[dict[str, object]]


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

    def base_fingerprint(self) -> str | None:
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
    def from_json(cls, data: Mapping[str, object]) -> VersionManifest:
        """The manifest of ``versions.json``'s object; ``KeyError``/``TypeError``/``ValueError`` naming what is
        missing or malformed."""
        base, history = _object(data["base"], "base"), data["history"]
        if not isinstance(history, list):
            raise TypeError(f"'history' is {history!r}, not a list")
        return cls(_int(data["current"], "current"), _int(base["version"], "base.version"), str(base["path"]),
                   tuple(VersionEntry.from_json(_object(h, "history entry")) for h in history))

    def to_json(self) -> ManifestJson:
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


def initial_manifest(meta: Mapping[str, object]) -> VersionManifest:
    """The manifest of a graph never updated, from its ``graph.json`` ``meta``: version 0, its own folder the base."""
    found = _object(meta.get("metadata") or {}, "metadata").get("fingerprint")
    fingerprint = None if found is None else str(found)
    entry = base_entry(0, "base", None, _optional_int(meta, "num_nodes"), _optional_int(meta, "num_edges"),
                       fingerprint)
    return VersionManifest(0, 0, ".", (entry,))
