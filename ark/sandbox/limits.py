"""Resource limits of a sandboxed code interpreter and the result of one call."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class SandboxLimits:
    """What one worker (one trajectory) may use.

    ``timeout_s`` is the wall clock of one call; ``cpu_s`` the CPU time of the worker over its whole life
    (``RLIMIT_CPU``); ``memory_mb`` its address space for Python (``RLIMIT_AS``; the embedded database's own
    reservation is added on top); ``max_processes`` the processes and threads its user may run (``RLIMIT_NPROC``,
    enforced for an unprivileged user); ``file_size_mb`` the largest file it may write (``RLIMIT_FSIZE``);
    ``tmp_size_mb`` the size of its private writable ``/tmp``; ``output_chars`` the printed output kept per call.
    """

    timeout_s: float = 20.0
    cpu_s: int = 600
    memory_mb: int = 1024
    max_processes: int = 32
    max_open_files: int = 256
    file_size_mb: int = 16
    tmp_size_mb: int = 64
    output_chars: int = 8000
    cypher_timeout_s: float = 10.0
    cypher_max_rows: int = 1000
    db_buffer_mb: int = 128

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"sandbox limit {name} must be a positive number, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunResult:
    """What one ``run(code)`` produced: printed output, an error (if any) and the Cypher queries it ran.

    ``error_kind`` is one word: ``syntax`` (Python), ``exception``, ``timeout``, ``memory``, ``output_limit``,
    ``cypher`` (an uncaught Cypher error; ``cypher_kind`` says which), ``crashed``, ``protocol`` (the worker sent
    a malformed message and was stopped), ``sandbox`` (the worker could not start). ``note`` tells the model
    about a restart (variables lost).
    """

    stdout: str = ""
    error: str | None = None
    error_kind: str | None = None
    cypher_kind: str | None = None
    elapsed_s: float = 0.0
    cypher_calls: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None
    output_truncated: bool = False
    restarted: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def node_indices(self) -> list[int]:
        """Graph nodes returned by this call's Cypher queries (first-seen order)."""
        seen: dict[int, None] = {}
        for call in self.cypher_calls:
            seen.update(dict.fromkeys(call.get("node_indices", ())))
        return list(seen)

    @property
    def strings(self) -> list[str]:
        """Short strings this call's Cypher queries were given as parameters or returned (ids, names), first-seen
        order: what a caller maps to graph nodes to know which nodes the code looked at."""
        seen: dict[str, None] = {}
        for call in self.cypher_calls:
            seen.update(dict.fromkeys(call.get("strings", ())))
        return list(seen)

    def observation(self) -> str:
        """The text a model reads: notes, output, then the error."""
        parts = []
        if self.note:
            parts.append(f"[note] {self.note}")
        if self.stdout:
            parts.append(self.stdout.rstrip("\n"))
        if self.output_truncated:
            parts.append("[output truncated: print less, e.g. counts or the first rows]")
        if self.error:
            parts.append(f"[error: {self.error_kind}] {self.error}")
        if not parts:
            parts.append("[no output: use print(...) to see values]")
        return "\n".join(parts)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["node_indices"] = self.node_indices
        return data
