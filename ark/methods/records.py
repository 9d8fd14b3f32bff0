"""The typed records a :class:`~ark.methods.base.MethodOutput` carries, and the adapter for methods that return dicts.

Inside the process a method's per-question record is typed: :class:`~ark.runtime.records.Retrieval` (ARK's agents),
GraphScout's ``Solution``, or :class:`DetailsRecord` (a baseline's method-specific details); each answers the
:class:`MethodRecord` accessors (votes, tie groups, confidence, tokens) and gives its JSON form with
:meth:`MethodRecord.to_record` only where it leaves the process (JSONL files, HTTP, MCP). Trajectories are
:class:`~ark.runtime.records.Trajectory` records.

Methods written before (plugins) that still put dicts in ``MethodOutput.trajectories`` or ``record`` keep working:
:func:`adapt_legacy_output` converts them and warns once per process with a :class:`DeprecationWarning`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..runtime.records import Trajectory


@runtime_checkable
class MethodRecord(Protocol):
    """What every per-question record answers, whichever method made it."""

    @property
    def question(self) -> str: ...

    @property
    def policy(self) -> str: ...

    @property
    def wall_s(self) -> float: ...

    @property
    def confidence(self) -> str | None: ...

    @property
    def confidence_reason(self) -> str | None: ...

    def votes(self) -> dict[int, int]:
        """Agent votes per ranked node index (empty where the method does not vote)."""
        ...

    def tie_groups(self) -> dict[int, int]:
        """The 1-based tie group of each ranked node the method grouped (empty where it groups none)."""
        ...

    def total_tokens(self) -> int:
        """Chat-model tokens spent on the question."""
        ...

    def to_record(self) -> dict[str, Any]:
        """The record as JSON (trajectories kept apart): for files, HTTP and MCP only."""
        ...


@dataclass(frozen=True)
class DetailsRecord:
    """A per-question record of method-specific details written as they are (a prompting baseline's prompt, calls,
    failures, paths); the accessors read the keys every method's record shares."""

    details: Mapping[str, Any]

    @property
    def question(self) -> str:
        return str(self.details.get("question") or self.details.get("query") or "")

    @property
    def policy(self) -> str:
        return str(self.details.get("policy") or "")

    @property
    def wall_s(self) -> float:
        return float(self.details.get("wall_s") or 0.0)

    @property
    def confidence(self) -> str | None:
        return self.details.get("confidence")

    @property
    def confidence_reason(self) -> str | None:
        return self.details.get("confidence_reason")

    def _ranked(self) -> list[Mapping[str, Any]]:
        ranked = self.details.get("ranked")
        return [row for row in ranked if isinstance(row, Mapping) and "index" in row] if isinstance(ranked, list) \
            else []

    def votes(self) -> dict[int, int]:
        return {int(row["index"]): int(row["votes"]) for row in self._ranked() if row.get("votes") is not None}

    def tie_groups(self) -> dict[int, int]:
        return {int(row["index"]): int(row["tie_group"]) for row in self._ranked() if row.get("tie_group")}

    def total_tokens(self) -> int:
        usage = self.details.get("usage")
        return int(usage.get("total_tokens", 0) or 0) if isinstance(usage, Mapping) else 0

    def to_record(self) -> dict[str, Any]:
        return dict(self.details)


@dataclass(frozen=True)
class ExtendedRecord:
    """Another method's record with keys added to its JSON form (a method that wraps another, as AvaTaR's actor
    wraps an ARK agent); the accessors are the wrapped record's."""

    base: MethodRecord
    added: Mapping[str, Any]

    @property
    def question(self) -> str:
        return self.base.question

    @property
    def policy(self) -> str:
        return self.base.policy

    @property
    def wall_s(self) -> float:
        return self.base.wall_s

    @property
    def confidence(self) -> str | None:
        return self.base.confidence

    @property
    def confidence_reason(self) -> str | None:
        return self.base.confidence_reason

    def votes(self) -> dict[int, int]:
        return self.base.votes()

    def tie_groups(self) -> dict[int, int]:
        return self.base.tie_groups()

    def total_tokens(self) -> int:
        return self.base.total_tokens()

    def to_record(self) -> dict[str, Any]:
        return {**self.base.to_record(), **self.added}


_warned = False


def adapt_legacy_output(trajectories: list[Any] | None, record: Any,
                        stacklevel: int = 2) -> tuple[list[Trajectory] | None, MethodRecord | None]:
    """``trajectories`` and ``record`` as typed records: dict trajectories through ``Trajectory.from_dict`` (as a
    file's), a dict record as a :class:`DetailsRecord` (written back unchanged). The first conversion in a process
    warns that returning dicts is deprecated."""
    legacy_trajectories = trajectories is not None and any(isinstance(t, Mapping) for t in trajectories)
    legacy_record = isinstance(record, Mapping)
    if not (legacy_trajectories or legacy_record):
        return trajectories, record
    _warn_once(stacklevel + 1)
    if legacy_trajectories:
        from ..runtime.records import Trajectory

        trajectories = [Trajectory.from_dict(dict(t)) if isinstance(t, Mapping) else t for t in trajectories or []]
    if legacy_record:
        record = DetailsRecord(dict(record))
    return trajectories, record


def _warn_once(stacklevel: int) -> None:
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn("a method returned MethodOutput.trajectories or .record as dicts; return "
                  "ark.runtime.records.Trajectory records and a MethodRecord (e.g. ark.methods.DetailsRecord) "
                  "instead: dicts are converted for now, and will be refused in a later release",
                  DeprecationWarning, stacklevel=stacklevel + 1)
