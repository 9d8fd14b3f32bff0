"""A run's method on a graph that changes: each question on one version, a newer version picked up between questions.

A run opens its graph and builds its method once. :class:`FollowedMethod` checks the graph's version manifest before
each question (one ``stat``: :class:`~ark.graph.versioning.VersionFollower`) and, when ``ark graph update`` made a
newer version, opens it and builds the method on it (its indexes and Cypher database are that version's). A
question in flight keeps the graph and method it started with, and its output comes back with that graph: its node
indices are read with it. A results line records the version it ran on when that is not the run's start version
(``graph.info.version``; the start version is ``graph_version`` in the run's config).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..methods.base import MethodOutput, Retriever


class FollowedMethod:
    """``method`` built on ``graph``, rebuilt with ``build`` on the graph's newest version between questions
    (``build`` None, or a graph without a folder: the method stays on ``graph``)."""

    def __init__(self, graph: KnowledgeGraph | None, method: Retriever,
                 build: Callable[[KnowledgeGraph], Retriever] | None = None) -> None:
        from ..graph.versioning import VersionFollower

        self.graph, self.method, self.build = graph, method, build
        self._follower = VersionFollower(graph.path) if build is not None and graph is not None \
            and graph.path is not None else None
        self._retired: list[Retriever] = []  # methods of older versions (a concurrent run closes them at its end)

    @property
    def concurrent(self) -> bool:
        return self.method.concurrent

    def current(self) -> tuple[KnowledgeGraph | None, Retriever]:
        """The newest version and its method (built now if an update made a newer version since the last call)."""
        if self._follower is not None and self.build is not None and self.graph is not None:
            newer = self._follower.latest(self.graph)
            if newer is not self.graph:
                try:
                    method = self.build(newer)
                except Exception:  # this question fails with it; the next one tries the newest version again
                    self._follower = type(self._follower)(self._follower.path)
                    raise
                self._retired.append(self.method)
                self.graph, self.method = newer, method
        return self.graph, self.method

    def retrieve(self, text: str, k: int) -> tuple[MethodOutput, KnowledgeGraph | None]:
        """One question on the newest version; its output and the graph it ran on."""
        graph, method = self.current()
        self._retired.clear()  # one question at a time: an older version's method is done with
        return method.retrieve(text, k), graph

    async def aretrieve(self, text: str, k: int) -> tuple[MethodOutput, KnowledgeGraph | None]:
        """One question on the newest version (others may be in flight on older ones); its output and graph. The
        methods of older versions are closed at the end of the run (:meth:`aclose`), not before: they share the
        run's LLM client with the newest one."""
        graph, method = self.current()
        return await method.aretrieve(text, k), graph

    async def aclose(self) -> None:
        """Close the current method and any older one still held."""
        for method in [*self._retired, self.method]:
            await method.aclose()
        self._retired.clear()


class GraphsByVersion:
    """The graph a run's output refers to: the one it came with, the run's (None), or (a version number, as a Ray
    worker reports it) that version opened here, the last one kept."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph
        self._opened: dict[int, KnowledgeGraph] = {}

    def __call__(self, used: KnowledgeGraph | int | None) -> KnowledgeGraph:
        if used is None:
            return self.graph
        if not isinstance(used, int):
            return used
        if used == self.graph.info.version:
            return self.graph
        if used not in self._opened:
            from ..graph.versioning import open_version

            if self.graph.path is None:
                raise ValueError(f"an output of graph version {used}, but the run's graph has no versions")
            self._opened = {used: open_version(self.graph.path, used)}
        return self._opened[used]
