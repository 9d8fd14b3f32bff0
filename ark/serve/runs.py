"""The run folders ``ark serve --runs`` browses (:mod:`ark.eval.run_folder` layout): their metrics overall and per
template, the charts, every trajectory, and the queries a run got wrong.

A root given to the server is either one run folder (it has ``config.json``) or a folder of run folders (its
children that have one and lie inside it: a child linked to a folder elsewhere is not a run). Runs are named by
their folder name (``name~2`` when two roots hold the same name); only files inside a listed run are ever read, and
charts only by a name listed in its ``charts/`` folder. Every file is resolved first (symlinks followed): one that
lands outside its run folder, or is not a regular file, is treated as absent, so a link in a browsed folder cannot
serve the rest of the machine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.errors import ArkError
from ark.eval.run_folder import RunFolder

MAX_LISTED_TRAJECTORIES = 200


class RunNotFound(LookupError, ArkError):
    """A run, trajectory or chart the browser does not have (the message names what it has)."""


@dataclass(frozen=True)
class BrowsedRun:
    name: str
    folder: RunFolder

    def file(self, path: Path) -> Path | None:
        """``path`` resolved, if it is a regular file inside this run's folder (symlinks followed); else None."""
        try:
            resolved = path.resolve(strict=True)
            inside = resolved.is_relative_to(self.folder.path.resolve(strict=True))
        except (OSError, RuntimeError):  # missing, unreadable, a symlink loop
            return None
        return resolved if inside and resolved.is_file() else None


def _read_json(path: Path | None) -> Any:
    if path is None:
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# A run's trajectory records (an alias: inside RunBrowser, `list` names its method).
Records = list[dict[str, Any]]


def _read_lines(path: Path | None) -> list[dict[str, Any]]:
    """The complete lines of a JSONL file (a torn last line is skipped, never cut off: browsing writes nothing)."""
    from ark.storage.jsonl import read_jsonl

    return read_jsonl(path) if path is not None else []


def _inside(folder: Path, root: Path) -> bool:
    """Whether ``folder`` (symlinks followed) is inside ``root``: a run folder linked from elsewhere is not a run of
    this root, and its files are not served."""
    try:
        return folder.resolve(strict=True).is_relative_to(root.resolve(strict=True))
    except (OSError, RuntimeError):  # missing, unreadable, a symlink loop
        return False


class RunBrowser:
    """The runs under ``roots`` (see the module doc); everything is read on request, nothing is written."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = [Path(root) for root in roots]
        self._trajectories: dict[str, tuple[float, Records]] = {}

    def runs(self) -> dict[str, BrowsedRun]:
        found: dict[str, BrowsedRun] = {}
        for root in self.roots:
            folders = [root] if (root / "config.json").is_file() else sorted(
                p for p in root.iterdir() if p.is_dir() and (p / "config.json").is_file()
                and _inside(p, root)) if root.is_dir() else []
            for path in folders:
                name, n = path.name, 1
                while name in found:
                    n += 1
                    name = f"{path.name}~{n}"
                found[name] = BrowsedRun(name, RunFolder(path))
        return found

    def _run(self, name: str) -> BrowsedRun:
        runs = self.runs()
        if name not in runs:
            shown = ", ".join(list(runs)[:20]) or "none (start the server with --runs FOLDER)"
            raise RunNotFound(f"no run named {name!r}; runs: {shown}")
        return runs[name]

    # ------------------------------------------------------------------ listing and one run
    def list(self) -> list[dict[str, Any]]:
        out = []
        for name, run in self.runs().items():
            config = _read_json(run.file(run.folder.config)) or {}
            summary = _read_json(run.file(run.folder.summary_json)) or {}
            overall = summary.get("overall", {})
            out.append({"name": name, "method": config.get("method"), "graph": config.get("graph"),
                        "llm": config.get("llm"), "created": config.get("created"),
                        "n_queries": summary.get("n_queries"), "hit@1": overall.get("hit@1"),
                        "mrr": overall.get("mrr"), "scored": bool(summary),
                        "has_trajectories": run.file(run.folder.trajectories) is not None})
        return out

    def detail(self, name: str) -> dict[str, Any]:
        """Config, metrics overall and per template, tool use, chart names and the queries it got wrong."""
        run = self._run(name)
        folder = run.folder
        summary = _read_json(run.file(folder.summary_json)) or {}
        per_query = _read_lines(run.file(folder.per_query))
        wrong = [{"id": row.get("id"), "query": row.get("query"), "template": row.get("template"),
                  "answer_ids": row.get("answer_ids"), "first_answer_rank": row.get("first_answer_rank"),
                  "missing": row.get("missing", False)}
                 for row in per_query if row.get("missing") or not row.get("hit@1")]
        return {"name": name, "config": _read_json(run.file(folder.config)), "overall": summary.get("overall"),
                "by_template": summary.get("by_template") or {}, "n_queries": summary.get("n_queries"),
                "tool_use": _read_json(run.file(folder.tool_use)), "charts": sorted(self._charts(run)),
                "wrong": wrong, "n_trajectories": len(self._records(run))}

    def _charts(self, run: BrowsedRun) -> dict[str, Path]:
        """The run's charts by name (each resolved inside the run folder)."""
        if not run.folder.charts.is_dir():
            return {}
        found = ((p.name, run.file(p)) for p in run.folder.charts.glob("*.png"))
        return {chart: path for chart, path in found if path is not None}

    def chart(self, name: str, chart: str) -> Path:
        run = self._run(name)
        charts = self._charts(run)
        if chart not in charts:
            raise RunNotFound(f"run {name!r} has no chart {chart!r}; charts: {', '.join(sorted(charts)) or 'none'}")
        return charts[chart]

    # ------------------------------------------------------------------ trajectories
    def _records(self, run: BrowsedRun) -> Records:
        """The run's trajectory records (unpacked; none without the file), cached while the file is unchanged."""
        from ark.runtime.trajectory_file import read_trajectory_file

        path = run.file(run.folder.trajectories)
        if path is None:
            return []
        stamp = path.stat().st_mtime
        cached = self._trajectories.get(str(path))
        if cached is None or cached[0] != stamp:
            cached = (stamp, read_trajectory_file(path))
            self._trajectories[str(path)] = cached
        return cached[1]

    def trajectories(self, name: str, offset: int = 0, limit: int = 50) -> dict[str, Any]:
        """One page of the run's questions: id, question, agents, steps, the top of the fused ranking."""
        from ark.runtime.trajectory_file import record_trajectories

        records = self._records(self._run(name))
        limit = max(1, min(limit, MAX_LISTED_TRAJECTORIES))
        items = []
        for position, record in enumerate(records[offset:offset + limit], start=offset):
            agents = record_trajectories(record)
            ranked = record.get("ranked") or []
            items.append({"position": position, "id": record.get("id"), "question": record.get("question"),
                          "agents": len(agents), "steps": sum(len(a.steps) for a in agents),
                          "errors": sum(1 for a in agents if a.error),
                          "top": [r.get("node_id", r.get("id")) for r in ranked[:3] if isinstance(r, dict)]})
        return {"total": len(records), "items": items}

    def trajectory(self, name: str, position: int) -> dict[str, Any]:
        run = self._run(name)
        records = self._records(run)
        if not 0 <= position < len(records):
            raise RunNotFound(f"run {name!r} has {len(records)} trajectory record(s); {position} is not one of them "
                              f"(0 to {len(records) - 1})" if records else f"run {name!r} has no trajectories")
        return records[position]
