"""Running an experiment's configurations: each one is an ordinary ``ark eval`` run folder (resumable), shared by
every experiment that needs the same configuration on the same queries."""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..eval.experiment import EvalOutcome, run_eval
from ..methods.choice import MethodChoice
from ..methods.options import merge_options, options_dict
from ..methods.presets import mark_preset, preset_of
from ..runtime.trajectory_file import TrajectoryRecords
from ..storage.jsonl import read_jsonl

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query


@dataclass(frozen=True)
class Variant:
    """One configuration of an experiment: a row label, option overrides on the base options, and coordinates
    (e.g. ``{"agents": 2, "steps": 10}``) for plots over a grid."""

    key: str
    label: str
    options: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class VariantRun:
    """A finished configuration: its choice, run folder and the figures the reports use."""

    variant: Variant
    choice: MethodChoice
    outcome: EvalOutcome
    truncate: int | None

    @property
    def folder(self) -> Path:
        return self.outcome.folder.path

    @property
    def model(self) -> str:
        """Which model or policy produced the run (``offline`` for the offline policy)."""
        return self.choice.llm_name or self.choice.name

    @property
    def overall(self) -> dict[str, float]:
        return self.outcome.summary["overall"]

    def per_query(self) -> list[dict[str, Any]]:
        return read_jsonl(self.outcome.folder.per_query)

    def trajectories(self) -> Iterable[dict[str, Any]]:
        """The run's trajectory records, unpacked one at a time (:class:`TrajectoryRecords`); none without a file."""
        path = self.outcome.folder.trajectories
        return TrajectoryRecords(path, repair=True) if path.is_file() else []

    def latency(self) -> dict[str, float]:
        """End-to-end seconds per query (mean, median, p90) as the runner measured them."""
        wall = np.asarray([r["wall_s"] for r in self.per_query() if r.get("wall_s") is not None], dtype=float)
        if not len(wall):
            return {"mean": 0.0, "median": 0.0, "p90": 0.0}
        return {"mean": float(wall.mean()), "median": float(np.median(wall)), "p90": float(np.percentile(wall, 90))}


def select_queries(queries: Sequence[Query], fraction: float, seed: int) -> list[Query]:
    """A seeded random ``fraction`` of the queries (at least one), kept in file order; all of them at 1."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    if fraction >= 1:
        return list(queries)
    count = max(1, round(fraction * len(queries)))
    chosen = set(random.Random(seed).sample(range(len(queries)), count))
    return [q for i, q in enumerate(queries) if i in chosen]


def run_key(choice: MethodChoice, queries_source: str, k: int) -> str:
    """A short hash of what determines a run's results: the same configuration on the same queries shares a folder."""
    identity = {**choice.config(), "queries": queries_source, "k": k}
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:10]


def run_variants(
    graph: KnowledgeGraph,
    base: MethodChoice,
    variants: Sequence[Variant],
    queries: Sequence[Query],
    queries_source: str,
    runs_root: Path,
    truncate: int | None,
    k: int = 100,
    concurrency: int = 4,
    progress: bool = True,
    console: Any = None,
    on_start: Callable[[Variant, Path], None] | None = None,
) -> list[VariantRun]:
    """Run (or resume, or just rescore) each variant into ``runs_root/<key>-<hash>/`` and return them in order."""
    done = []
    for variant in variants:
        # The base options hold the preset's values already; the variant is marked with it, not made under it again
        # (which would undo an option given over the preset whose value is the default, dropped from the dump).
        choice = MethodChoice.make(base.name, merge_options(options_dict(base.options), variant.options), base.context)
        mark_preset(choice.options, preset_of(base.options))
        key = run_key(choice, queries_source, k)
        shared = sorted(runs_root.glob(f"*-{key}")) if runs_root.is_dir() else []
        folder = shared[0] if shared else runs_root / f"{variant.key}-{key}"  # same configuration: same run
        if on_start is not None:
            on_start(variant, folder)
        outcome = run_eval(graph, choice, queries, folder, queries_source=queries_source, k=k, truncate=truncate,
                           concurrency=concurrency, progress=progress, console=console)
        done.append(VariantRun(variant, choice, outcome, truncate))
    return done
