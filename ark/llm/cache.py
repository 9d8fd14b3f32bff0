"""On-disk cache of chat replies, one JSON file per request key, written atomically.

The key is a SHA-256 of the full request (endpoint, model, messages, tools, sampling parameters and the
sample index), so a rerun of the same experiment replays the same replies without calling the endpoint.
Writes go to a unique temp file in the target folder and are renamed into place (:mod:`ark.storage.atomic`), so
concurrent writers (tasks or threads of one process, or several processes) never leave a torn file: the last
complete write wins. Where entries cannot be written (a read-only ``ARK_HOME``, a full disk) the cache keeps them in
memory for the rest of the process, with one warning, instead of failing the question.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from ..storage.atomic import atomic_write_text

log = logging.getLogger(__name__)

CACHE_FORMAT = 1


def request_key(request: dict[str, Any]) -> str:
    """Hex SHA-256 of the request serialized as canonical JSON (sorted keys, no whitespace)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache:
    """Maps request keys to JSON-serializable entries under ``root/<key[:2]>/<key>.json``."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root).expanduser()
        self._memory: dict[str, dict[str, Any]] | None = None  # set once a write to disk failed

    def path_for(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or None when absent or unreadable (an unreadable entry is logged and ignored)."""
        if self._memory is not None and key in self._memory:
            return self._memory[key]
        path = self.path_for(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable LLM cache entry %s: %s", path, exc)
            return None
        if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT:
            return None
        return entry

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store an entry atomically (temp file in the same folder, then rename); in memory once a write failed."""
        record = {"format": CACHE_FORMAT, **entry}
        data = json.dumps(record, ensure_ascii=False)
        if self._memory is None:
            try:
                atomic_write_text(self.path_for(key), data)
                return
            except OSError as exc:
                log.warning("warning: cannot write the LLM cache %s (%s); keeping LLM replies in memory for this run",
                            exc.filename or self.root, exc.strerror or exc)
                self._memory = {}
        self._memory[key] = json.loads(data)
