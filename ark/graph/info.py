"""A graph's identity as a typed record: name, fingerprint, version, credit and the descriptions of its schema.

``graph.json`` keeps these facts in its ``metadata`` object (the on-disk form, unchanged); :class:`GraphInfo` is how
the rest of ARK reads them (``graph.info.name``, ``graph.info.version``), so the keys and their defaults are decided
here once instead of at every call site.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


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
    # Per node type, the attributes that name a node (field-aware search); None: the loader set none.
    name_fields: Mapping[str, Any] | None = None
    # The column choices of a table import (its updates read the same way); None for other graphs.
    columns: Mapping[str, Any] | None = None
    # The segments an opened version is made of (set by graph.versioning when a version is opened).
    version_segments: Mapping[str, Any] | None = None
    loader_version: Any = None

    @property
    def version(self) -> int:
        """The graph's version: 0 until the first update."""
        return int(self.stored_version or 0)

    def label(self, default: str = "graph") -> str:
        """The name to show, ``default`` for an unnamed graph."""
        return self.name or default

    @classmethod
    def from_metadata(cls, metadata: Mapping[str, Any]) -> GraphInfo:
        """The record of a graph's ``metadata`` object (unknown keys stay in the metadata, unread)."""
        version = metadata.get("graph_version")
        fingerprint = metadata.get("fingerprint")
        return cls(
            name=_text(metadata.get("name")),
            fingerprint=None if fingerprint is None else str(fingerprint),
            stored_version=None if version is None else int(version),
            credit=_text(metadata.get("credit")),
            description=_text(metadata.get("description")),
            source=_text(metadata.get("source")),
            type_descriptions=dict(metadata.get("type_descriptions") or {}),
            relation_descriptions=dict(metadata.get("relation_descriptions") or {}),
            name_fields=metadata.get("name_fields"),
            columns=metadata.get("columns"),
            version_segments=metadata.get("version_segments"),
            loader_version=metadata.get("loader_version"),
        )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
