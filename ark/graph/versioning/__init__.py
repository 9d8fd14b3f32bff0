"""Graphs that change: an immutable base, delta segments and the typed manifest that lists them (see
:mod:`.versions`). ``GraphDelta`` and its files: :mod:`.delta`; the merge of a base with deltas: :mod:`.merge`; the
incremental fingerprint: :mod:`.fingerprint`; removal of what no version references: :mod:`.prune`."""

from __future__ import annotations

from .manifest import MANIFEST, VersionEntry, VersionManifest, read_manifest
from .versions import (
    VersionFollower,
    compact_graph,
    load_delta,
    next_version,
    open_version,
    recompute_fingerprint,
    update_graph,
    verify_versions,
    version_history,
    version_of_fingerprint,
    version_trained_on,
)

__all__ = [
    "MANIFEST",
    "VersionEntry",
    "VersionFollower",
    "VersionManifest",
    "compact_graph",
    "load_delta",
    "next_version",
    "open_version",
    "read_manifest",
    "recompute_fingerprint",
    "update_graph",
    "verify_versions",
    "version_history",
    "version_of_fingerprint",
    "version_trained_on",
]
