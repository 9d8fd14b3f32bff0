"""The method contract: what every retrieval method takes and returns.

A method is built by its factory as ``factory(graph, options, context)`` and answers ``retrieve(query, k)`` (or
``async aretrieve``) with a :class:`MethodOutput`: node indices best first, their scores and, where the method has
them, its agents' :class:`~ark.runtime.records.Trajectory` records, a typed per-question record
(:class:`~ark.methods.records.MethodRecord`) and a typed :class:`Answer` (question-answering methods). Subclass
:class:`Retriever` and implement one of the two; the other is derived.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from .records import MethodRecord, adapt_legacy_output

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..llm import ChatPolicy
    from ..runtime.loop import StepCallback
    from ..runtime.records import Trajectory

T = TypeVar("T")

ANSWER_TYPES = ("entity", "set", "number", "boolean")
AnswerType = Literal["entity", "set", "number", "boolean"]


@dataclass
class Answer:
    """A question-answering method's final answer: the text and its type."""

    text: str
    type: AnswerType = "entity"

    def to_dict(self) -> dict[str, str]:
        return {"text": self.text, "type": self.type}


@dataclass
class MethodOutput:
    """One query's retrieval: node indices best first, their scores, and what else the method produced.

    ``trajectories`` and ``record`` are typed; their JSON forms (:meth:`trajectory_dicts`, :meth:`record_dict`)
    are for where the output leaves the process. A method that still returns dicts there is adapted (with a
    :class:`DeprecationWarning`, once per process)."""

    indices: list[int]
    scores: list[float]
    trajectories: list[Trajectory] | None = None  # agent methods: one per agent ([]: a method without agents)
    record: MethodRecord | None = None  # the per-question record (question, config, ranking, the method's details)
    answer: Answer | None = None  # question-answering methods
    partial: str | None = None  # why the output is partial (e.g. some agents failed, under allow_partial)

    def __post_init__(self) -> None:
        self.trajectories, self.record = adapt_legacy_output(self.trajectories, self.record, stacklevel=3)

    def votes(self) -> dict[int, int]:
        """Agent votes per node index (empty for methods that do not vote)."""
        return self.record.votes() if self.record is not None else {}

    def tie_groups(self) -> dict[int, int]:
        """The tie group of each ranked node the method grouped (nodes sharing one are tied)."""
        return self.record.tie_groups() if self.record is not None else {}

    def evidence(self, index: int) -> list[str]:
        """The agents' stated reasons for answering node ``index``, once each, in agent order."""
        reasons: list[str] = []
        for trajectory in self.trajectories or []:
            reason = trajectory.reasoning.get(index)
            if reason and reason not in reasons:
                reasons.append(reason)
        return reasons

    def failed_agents(self) -> list[Trajectory]:
        """The trajectories whose agent failed (their ``error`` is set)."""
        return [t for t in self.trajectories or [] if t.error]

    def trajectory_dicts(self) -> list[dict[str, Any]] | None:
        """The trajectories as JSON (files, HTTP, MCP); None for a method without trajectories."""
        return None if self.trajectories is None else [t.to_dict() for t in self.trajectories]

    def record_dict(self) -> dict[str, Any] | None:
        """The per-question record as JSON (files, HTTP, MCP); None for a method without one."""
        return None if self.record is None else self.record.to_record()


@dataclass
class MethodContext:
    """What a run gives every method besides its own options."""

    llm: ChatPolicy | None = None  # the configured chat model; None where none is configured
    candidate_types: list[str] | None = None  # rank only nodes of these types (None: all types)
    progress: bool = False  # show progress bars while building indexes or models
    seed: int = 0
    allow_partial: bool = False  # multi-agent methods: fuse the agents that succeeded when others failed
    on_step: StepCallback | None = None  # agent methods: called after each step of each trajectory (live views)
    extra: dict[str, Any] = field(default_factory=dict)


class MethodOptions(BaseModel):
    """Base of every method's options model: unknown keys are refused; each field documents itself.

    ``REQUEST_OPTIONS`` is the allow-list of the fields a request to a server (``ark serve``, ``ark mcp``) may set
    (:func:`ark.methods.options.check_request_options`): a nested options model named there is descended into by
    its own list. Every other field, and every field added later, is the server's alone (sandbox limits, model
    folders, endpoints, timeouts, prompts). A subclass that adds fields extends its parent's tuple explicitly.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = ()
    _preset: str | None = PrivateAttr(default=None)  # the preset these options were made under (ark.methods.presets)


# For the options models of methods a command rarely runs: pydantic builds a model's validator when the model is
# first used rather than when its module is imported. The method registry imports every family's options to list
# them, so each run of ``ark ask`` would otherwise build the validators of all of them (~2 M instructions a model).
DEFERRED_BUILD = ConfigDict(defer_build=True)


DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"  # the packaged MiniLM (ark.index.dense.DEFAULT_MODEL; checked by a test)


def omit_recorded_defaults(values: dict[str, Any], defaults: dict[str, object]) -> dict[str, Any]:
    """``values`` (an options model's dump) without the options that hold the given default: options added after
    run folders were written are recorded only when set, so that those folders resume and compare equal."""
    for key, default in defaults.items():
        if key in values and values[key] == default and type(values[key]) is type(default):
            del values[key]
    return values


def embedder_field() -> Any:
    """The ``embedder`` option of every method with dense retrieval (:func:`ark.index.embedders.open_embedder`)."""
    return Field(default=DEFAULT_EMBEDDER, description="text embedder for dense retrieval: the packaged MiniLM, a "
                 "sentence-transformers directory, or 'openai:MODEL' for an OpenAI-compatible /v1/embeddings "
                 "endpoint (node embeddings cached with the graph)")


def embedder_base_url_field() -> Any:
    """The ``embedder_base_url`` option beside :func:`embedder_field`."""
    return Field(default=None, description="endpoint of an 'openai:MODEL' embedder (default: OPENAI_BASE_URL)")


class EmbedderChoice(MethodOptions):
    """Options of a method whose retrieval is dense: which embedder, and where an ``openai:MODEL`` one is served."""

    model_config = DEFERRED_BUILD

    embedder: str = embedder_field()
    embedder_base_url: str | None = embedder_base_url_field()


class NoOptions(MethodOptions):
    """For methods without options."""


class Retriever:
    """Base class of methods. Implement :meth:`retrieve` (synchronous) or :meth:`aretrieve` (asynchronous)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.retrieve is Retriever.retrieve and cls.aretrieve is Retriever.aretrieve:
            raise TypeError(f"{cls.__name__} must implement retrieve() or aretrieve()")

    def retrieve(self, query: str, k: int) -> MethodOutput:
        """Synchronous retrieval (derived from :meth:`aretrieve` when only that is implemented)."""
        async def once() -> MethodOutput:
            try:
                return await self.aretrieve(query, k)
            finally:
                await self.aclose()

        return run_beside(once())

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        """Asynchronous retrieval (the runner's entry point; runs :meth:`retrieve` when only that exists)."""
        return self.retrieve(query, k)

    async def aclose(self) -> None:
        """Release connections that belong to the running event loop (e.g. an LLM client's)."""

    @property
    def concurrent(self) -> bool:
        """Whether several queries may be in flight at once (methods that await I/O, such as LLM calls)."""
        return type(self).aretrieve is not Retriever.aretrieve


def run_beside(work: Coroutine[Any, Any, T]) -> T:
    """:func:`asyncio.run` of ``work``, its result handed back beside the loop's main task rather than as the task's
    result: asyncio.run's restoring of the Ctrl-C handler looks the old handler (which holds the main task) up in
    ``signal.Handlers``, and that enum's error message reprs the task with its result -- for a retrieval, a whole
    ranking and its trajectories (~70 M instructions at every ``ark ask``)."""
    results: list[T] = []

    async def main() -> None:
        results.append(await work)

    asyncio.run(main())
    return results[0]


def type_mask(graph: KnowledgeGraph, node_types: list[str] | None):
    """Bool mask over nodes of the given types, or ``None`` for all types (names resolved by the graph)."""
    return graph.type_mask(node_types) if node_types else None
