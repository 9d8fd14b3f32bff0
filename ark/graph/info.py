"""A graph's identity as a typed record: name, fingerprint, version, credit and the descriptions of its schema.

``graph.json`` keeps these facts in its ``metadata`` object (the on-disk form, unchanged); :class:`GraphInfo` is how
the rest of ARK reads them (``graph.info.name``, ``graph.info.version``), so the keys and their defaults are decided
here once instead of at every call site.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class DeltaSegment:
    """One update an opened version is made of: the version it made, its folder (relative to the graph's) and the
    fingerprint it recorded."""

    version: int
    delta: str
    fingerprint: str | None


@dataclass(frozen=True)
class VersionSegments:
    """What an opened version is made of (:func:`ark.graph.versioning.open_version` sets it): its base's folder
    and version, the updates since, oldest first, and the folder of its Cypher databases, all relative to the
    graph's folder. Indexes read it to follow the updates by segments."""

    base: str
    base_version: int
    deltas: tuple[DeltaSegment, ...]
    cypher: str

    def newest_folder(self) -> str:
        """The folder of the newest segment: the last update's, or the base's when there is none."""
        return self.deltas[-1].delta if self.deltas else self.base

    def to_json(self) -> dict[str, object]:
        """The form ``metadata["version_segments"]`` holds (and a saved opened version's ``graph.json``)."""
        return {"base": self.base, "base_version": self.base_version,
                "deltas": [{"version": d.version, "delta": d.delta, "fingerprint": d.fingerprint}
                           for d in self.deltas],
                "cypher": self.cypher}

    @classmethod
    def from_json(cls, data: object) -> VersionSegments | None:
        """The record of ``metadata["version_segments"]``; None where there is none (a graph never updated)."""
        if not isinstance(data, Mapping) or not data:
            return None
        deltas = data.get("deltas") or []
        if not isinstance(deltas, list):
            raise ValueError(f"version_segments.deltas is {deltas!r}, not a list")
        return cls(str(data["base"]), _int(data.get("base_version")) or 0,
                   tuple(DeltaSegment(_int(d["version"]) or 0, str(d["delta"]), _text(d.get("fingerprint")))
                         for d in deltas),
                   str(data.get("cypher") or "cypher"))


@dataclass(frozen=True)
class GraphInfo:
    """What a graph says about itself (read from ``KnowledgeGraph.metadata``)."""

    name: str | None = None
    fingerprint: str | None = None
    # The version an update wrote last; None for a graph that was never versioned (read as version 0).
    stored_version: int | None = None
    credit: str | None = None
    description: str | None = None
    source: str | None = None
    type_descriptions: Mapping[str, str] = field(default_factory=dict)
    relation_descriptions: Mapping[str, str] = field(default_factory=dict)
    # Per node type (or "*"), the attributes that name a node (field-aware search, which checks them); None: the
    # loader set none.
    name_fields: Mapping[str, object] | None = None
    # The column choices of a table import (its updates read the same way); None for other graphs.
    columns: Mapping[str, object] | None = None
    # The segments an opened version is made of (set by graph.versioning when a version is opened).
    version_segments: VersionSegments | None = None
    loader_version: object = None  # what the graph's loader recorded (built-in graphs: an int)

    @property
    def version(self) -> int:
        """The graph's version: 0 until the first update."""
        return int(self.stored_version or 0)

    def label(self, default: str = "graph") -> str:
        """The name to show, ``default`` for an unnamed graph."""
        return self.name or default

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, object]) -> GraphInfo:
        """The record of a graph's ``metadata`` object (unknown keys stay in the metadata, unread)."""
        return cls(
            name=_text(metadata.get("name")),
            fingerprint=_text(metadata.get("fingerprint")),
            stored_version=_int(metadata.get("graph_version")),
            credit=_text(metadata.get("credit")),
            description=_text(metadata.get("description")),
            source=_text(metadata.get("source")),
            type_descriptions=_texts(metadata.get("type_descriptions")),
            relation_descriptions=_texts(metadata.get("relation_descriptions")),
            name_fields=_mapping(metadata.get("name_fields")),
            columns=_mapping(metadata.get("columns")),
            version_segments=VersionSegments.from_json(metadata.get("version_segments")),
            loader_version=metadata.get("loader_version"),
        )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _int(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, int | float | str):
        return int(value)
    raise ValueError(f"{value!r} is not a whole number")


def _mapping(value: object) -> Mapping[str, object] | None:
    return None if not isinstance(value, Mapping) else {str(k): v for k, v in value.items()}


def _texts(value: object) -> dict[str, str]:
    return {k: str(v) for k, v in (_mapping(value) or {}).items()}
