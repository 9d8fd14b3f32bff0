"""The folder of one evaluation run, and the check that a resumed run is the same run.

Layout: ``config.json`` (what was run), ``results.jsonl`` (one line per query), ``trajectories.jsonl`` (methods that
record trajectories), ``per_query.jsonl`` (metrics per query), ``summary.json``, ``summary.md``, ``tool_use.json`` and
``charts/*.png`` (methods with trajectories and a run analysis, such as ``ark``). ``config.json`` also counts the texts
and tokens each embedder embedded for the run (``embedding_usage``, added after each attempt).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..storage.jsonl import write_json_atomic

# Settings that determine the retrieved lists: a resumed run must match them (scoring options may change).
# A graph that changed since (ark graph update) differs in its version and fingerprint: node indices in trajectories
# would point at other nodes, so such a run is not resumed.
RETRIEVAL_KEYS = ("graph", "graph_fingerprint", "graph_version", "method", "method_options", "llm", "seed", "queries",
                  "split", "human", "k", "candidate_types")


class RunFolderError(ValueError):
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


def check_same_run(previous: dict[str, Any], config: dict[str, Any], where: str | Path, remedy: str) -> None:
    """Raise :class:`RunFolderError` naming each :data:`RETRIEVAL_KEYS` setting in which ``config`` differs from
    ``previous`` (the settings the existing results were made with); ``remedy`` tells the user what to do."""
    differing = [key for key in RETRIEVAL_KEYS if previous.get(key) != config.get(key)]
    if differing:
        shown = "; ".join(f"{key}: was {previous.get(key)!r}, now {config.get(key)!r}" for key in differing)
        raise RunFolderError(f"{where} holds a different run ({shown}); {remedy}")


def prepare_run_folder(path: str | Path, config: dict[str, Any]) -> tuple[RunFolder, bool]:
    """Create the run folder, or reopen it to resume; returns the folder and whether it already had a config.

    Resuming with different retrieval settings would mix two runs in one results file, so it is refused with the
    differing settings named.
    """
    folder = RunFolder(Path(path))
    if folder.path.exists() and not folder.path.is_dir():
        raise RunFolderError(f"--run-dir {folder.path} is a file; give a folder path")
    resumed = folder.config.is_file()
    if resumed:
        previous = folder.read_config()
        check_same_run(previous, config, folder.path, "choose another --run-dir or repeat its settings")
        config = {**previous, **config, "created": previous.get("created", config.get("created"))}
    folder.path.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder.config, config)
    return folder, resumed


def results_config_path(results: str | Path) -> Path:
    """The settings file kept beside a results file of ``ark retrieve``: ``r.jsonl`` -> ``r.config.json``."""
    results = Path(results)
    return results.with_name(results.name.removesuffix(".jsonl") + ".config.json")


def prepare_results_file(results: str | Path, config: dict[str, Any]) -> bool:
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
        check_same_run(previous, config, results, "choose another --out or repeat its settings")
        config = {**previous, **config, "created": previous.get("created", config.get("created"))}
    write_json_atomic(sidecar, config)
    return resumed


def record_embedding_usage(config_path: str | Path, since: dict[str, Any]) -> dict[str, Any]:
    """Add what was embedded after the snapshot ``since`` (see :mod:`ark.index.embedding_usage`) to the
    ``embedding_usage`` of the run's settings file (kept over resumed attempts, like the results); returns the
    run's total."""
    from ..index.embedding_usage import EMBEDDING_USAGE, add_counts

    fresh = EMBEDDING_USAGE.since(since)
    path = Path(config_path)
    if not fresh or not path.is_file():
        return {}
    config = json.loads(path.read_text(encoding="utf-8"))
    config["embedding_usage"] = add_counts(config.get("embedding_usage") or {}, fresh)
    write_json_atomic(path, config)
    return config["embedding_usage"]
