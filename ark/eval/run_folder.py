"""The folder of one evaluation run, and the check that a resumed run is the same run.

Layout: ``config.json`` (what was run), ``results.jsonl`` (one line per query), ``trajectories.jsonl`` (methods that
record trajectories), ``per_query.jsonl`` (metrics per query), ``summary.json``, ``summary.md``, ``tool_use.json`` and
``charts/*.png`` (methods with trajectories and a run analysis, such as ``ark``). ``config.json`` also counts the texts
and tokens each embedder embedded for the run (``embedding_usage``, added after each attempt) and what its code
sandboxes cost (``sandbox_usage``: workers started, reset in place, ended and killed, and their CPU seconds,
outside the run process's own accounting; :mod:`ark.sandbox.usage`).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ark.errors import ArkError

from ..storage.jsonl import write_json_atomic

if TYPE_CHECKING:
    from ..sandbox.usage import SandboxCounts

# Settings that determine the retrieved lists: a resumed run must match them (scoring options may change).
# A graph that changed since (ark graph update) differs in its version and fingerprint: node indices in trajectories
# would point at other nodes, so such a run is not resumed.
RETRIEVAL_KEYS = ("graph", "graph_fingerprint", "graph_version", "method", "method_options", "llm", "seed", "queries",
                  "split", "human", "k", "candidate_types")
VERSION_KEYS = ("graph_fingerprint", "graph_version")
ALLOW_NEW_VERSION = "--allow-new-version"  # the flag that resumes a run on a newer version of its graph


class RunFolderError(ValueError, ArkError):
    """A run folder that cannot be used for this run."""


@dataclass(frozen=True)
class RunFolder:
    """Paths of one run folder."""

    path: Path

    @property
    def config(self) -> Path:
        return self.path / "config.json"

    @property
    def results(self) -> Path:
        return self.path / "results.jsonl"

    @property
    def trajectories(self) -> Path:
        return self.path / "trajectories.jsonl"

    @property
    def per_query(self) -> Path:
        return self.path / "per_query.jsonl"

    @property
    def summary_json(self) -> Path:
        return self.path / "summary.json"

    @property
    def summary_md(self) -> Path:
        return self.path / "summary.md"

    @property
    def tool_use(self) -> Path:
        return self.path / "tool_use.json"

    @property
    def charts(self) -> Path:
        return self.path / "charts"

    def read_config(self) -> dict[str, Any]:
        if not self.config.is_file():
            raise RunFolderError(f"{self.path} is not a run folder (no config.json)")
        return json.loads(self.config.read_text(encoding="utf-8"))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "run"


def default_run_dir(graph: str, method: str, queries: str | Path, name: str | None = None,
                    root: str | Path = "runs") -> Path:
    """``runs/<graph>-<method>-<queries stem>-<name or timestamp>``."""
    stem = Path(str(queries).rstrip("/")).stem
    suffix = name or time.strftime("%Y%m%d-%H%M%S")
    return Path(root) / _slug(f"{Path(graph).name}-{method}-{stem}-{suffix}")


def check_same_run(previous: dict[str, Any], config: dict[str, Any], where: str | Path, remedy: str,
                   allow_new_version: bool = False) -> bool:
    """Raise :class:`RunFolderError` naming each :data:`RETRIEVAL_KEYS` setting in which ``config`` differs from
    ``previous`` (the settings the existing results were made with); ``remedy`` tells the user what to do.

    A run whose graph has moved on to a newer version since it started (``ark graph update``; everything else the
    same) is refused naming both versions and :data:`ALLOW_NEW_VERSION`, unless ``allow_new_version``: then it
    resumes (returns True), its new lines naming the version they ran on (:mod:`ark.eval.runner`)."""
    differing = [key for key in RETRIEVAL_KEYS if previous.get(key) != config.get(key)]
    if differing and set(differing) <= set(VERSION_KEYS) and _moved_on(previous, config):
        if allow_new_version:
            return True
        was, now = previous.get("graph_version") or 0, config.get("graph_version") or 0
        raise RunFolderError(f"{where} was run on version {was} of graph {config.get('graph')!r}, which is now at "
                             f"version {now} (ark graph update): its trajectories hold version {was}'s node "
                             f"indices. Pass {ALLOW_NEW_VERSION} to resume it on version {now} (each new line "
                             f"records its version), or start a new run: {remedy}")
    if differing:
        shown = "; ".join(f"{key}: was {previous.get(key)!r}, now {config.get(key)!r}" for key in differing)
        raise RunFolderError(f"{where} holds a different run ({shown}); {remedy}")
    return False


def _moved_on(previous: dict[str, Any], config: dict[str, Any]) -> bool:
    """Whether the graph of ``config`` is a later version of the graph ``previous`` ran on (its manifest lists the
    earlier version with the fingerprint ``previous`` recorded)."""
    from ..graph.versioning import version_of_fingerprint

    was, now, path = previous.get("graph_version") or 0, config.get("graph_version") or 0, config.get("graph_path")
    if now <= was or path is None or not Path(path).is_dir():
        return False
    return version_of_fingerprint(path, previous.get("graph_fingerprint")) == was


def prepare_run_folder(path: str | Path, config: dict[str, Any],
                       allow_new_version: bool = False) -> tuple[RunFolder, bool]:
    """Create the run folder, or reopen it to resume; returns the folder and whether it already had a config.

    Resuming with different retrieval settings would mix two runs in one results file, so it is refused with the
    differing settings named (a newer version of the graph: see :func:`check_same_run`; resumed, the config keeps
    the version the run started on).
    """
    folder = RunFolder(Path(path))
    if folder.path.exists() and not folder.path.is_dir():
        raise RunFolderError(f"--run-dir {folder.path} is a file; give a folder path")
    resumed = folder.config.is_file()
    if resumed:
        previous = folder.read_config()
        moved = check_same_run(previous, config, folder.path, "choose another --run-dir or repeat its settings",
                               allow_new_version)
        config = _resumed_config(previous, config, moved)
    folder.path.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder.config, config)
    return folder, resumed


def _resumed_config(previous: dict[str, Any], config: dict[str, Any], moved_on: bool) -> dict[str, Any]:
    """The config of a resumed run: ``config`` over ``previous``, with the creation time (and, for a run resumed on
    a newer version of its graph, the version and fingerprint it started on, which its lines are compared with)
    kept from ``previous``."""
    kept = ("created", *VERSION_KEYS) if moved_on else ("created",)
    return {**previous, **config, **{key: previous.get(key, config.get(key)) for key in kept}}


def results_config_path(results: str | Path) -> Path:
    """The settings file kept beside a results file of ``ark retrieve``: ``r.jsonl`` -> ``r.config.json``."""
    results = Path(results)
    return results.with_name(results.name.removesuffix(".jsonl") + ".config.json")


def prepare_results_file(results: str | Path, config: dict[str, Any], allow_new_version: bool = False) -> bool:
    """Check that ``results`` may be written or resumed with ``config``, and record ``config`` beside it.

    Returns whether an earlier run's settings were found. A path that is a directory, or a results file made with
    different retrieval settings (see :func:`check_same_run`), raises :class:`RunFolderError`. A results file
    from before settings files existed is resumed as is.
    """
    results = Path(results)
    if results.is_dir():
        raise RunFolderError(f"--out {results} is a directory; give a results file path such as "
                             f"{results / 'results.jsonl'}")
    sidecar = results_config_path(results)
    resumed = sidecar.is_file()
    if resumed and results.exists():
        try:
            previous = json.loads(sidecar.read_text(encoding="utf-8"))
        except ValueError as error:
            raise RunFolderError(f"{sidecar} is not valid JSON ({error}); remove it or choose another --out") from None
        moved = check_same_run(previous, config, results, "choose another --out or repeat its settings",
                               allow_new_version)
        config = _resumed_config(previous, config, moved)
    write_json_atomic(sidecar, config)
    return resumed


def record_embedding_usage(config_path: str | Path, since: dict[str, Any]) -> dict[str, Any]:
    """Add what was embedded after the snapshot ``since`` (see :mod:`ark.index.embedding_usage`) to the
    ``embedding_usage`` of the run's settings file (kept over resumed attempts, like the results); returns the
    run's total."""
    from ..index.embedding_usage import EMBEDDING_USAGE, add_counts

    return _add_to_config(config_path, "embedding_usage", EMBEDDING_USAGE.since(since), add_counts)


def record_sandbox_usage(config_path: str | Path, since: SandboxCounts) -> dict[str, Any]:
    """Add what the code sandboxes did after the snapshot ``since`` (see :mod:`ark.sandbox.usage`; the run's pools
    closed, so their workers have ended and been counted) to the ``sandbox_usage`` of the run's settings file (kept
    over resumed attempts); returns the run's total."""
    from ..sandbox.usage import SANDBOX_USAGE, add_usage

    fresh = SANDBOX_USAGE.since(since)
    return _add_to_config(config_path, "sandbox_usage", {} if fresh is None else fresh.to_json(), add_usage)


def _add_to_config(config_path: str | Path, key: str, fresh: dict[str, Any],
                   add: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """``fresh`` added (by ``add``) to the settings file's ``key``; the new total (nothing written when empty)."""
    path = Path(config_path)
    if not fresh or not path.is_file():
        return {}
    config = json.loads(path.read_text(encoding="utf-8"))
    config[key] = add(config.get(key) or {}, fresh)
    write_json_atomic(path, config)
    return config[key]
