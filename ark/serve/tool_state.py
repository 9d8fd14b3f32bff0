"""The graph and index the graph tools (:mod:`ark.serve.graph_tools`) answer from, following a graph that changes
(:mod:`ark.graph.versioning`): between calls, a new version found in the graph's manifest is opened with its index;
a call sees one version from start to end (a context variable holds it for the call)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph
    from ark.index.graph_index import TextIndex

    from .questions import QuestionService


def bm25_index(graph: KnowledgeGraph) -> TextIndex:
    """The tools' default index of a graph version: BM25 (by segments for a version with updates)."""
    from ark.index import open_index

    return open_index(graph, kind="bm25", progress=False)


class GraphState:
    """The newest version of a graph and its index; with a question service, the service's version (so the tools
    and ``retrieve`` answer from one version). ``open_index`` opens the index of a new version."""

    def __init__(self, graph: KnowledgeGraph, index: TextIndex, questions: QuestionService | None = None,
                 open_index: Callable[[KnowledgeGraph], TextIndex] | None = None) -> None:
        from ark.graph.versioning import VersionFollower

        self._graph, self._index = graph, index
        self.questions = questions
        self._open_index = open_index or bm25_index
        self._lock = threading.Lock()
        self._follower = None if graph.path is None or questions is not None else VersionFollower(graph.path)
        self._call: ContextVar[tuple[KnowledgeGraph, TextIndex] | None] = ContextVar("ark_tools_version", default=None)

    def current(self) -> tuple[KnowledgeGraph, TextIndex]:
        """The newest version and its index, reopened when the graph's version manifest changed."""
        with self._lock:
            if self.questions is not None:
                graph = self.questions.current_graph()
            else:
                graph = self._follower.latest(self._graph) if self._follower is not None else self._graph
            if graph is not self._graph:
                self._graph, self._index = graph, self._open_index(graph)
            return self._graph, self._index

    @contextmanager
    def one_version(self) -> Iterator[tuple[KnowledgeGraph, TextIndex]]:
        """Hold the newest version for one call (inside another call's hold, that call's version: a web page built
        from several tools' results shows one version)."""
        held = self._call.get()
        token = self._call.set(held if held is not None else self.current())
        try:
            yield self._call.get()  # type: ignore[misc]
        finally:
            self._call.reset(token)

    @property
    def graph(self) -> KnowledgeGraph:
        snapshot = self._call.get()
        return snapshot[0] if snapshot is not None else self.current()[0]

    @property
    def index(self) -> TextIndex:
        snapshot = self._call.get()
        return snapshot[1] if snapshot is not None else self.current()[1]
