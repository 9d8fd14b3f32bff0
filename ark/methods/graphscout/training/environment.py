"""The GraphScout solver's tools as a TRL rollout environment (``GRPOTrainer(environment_factory=...)``).

TRL creates one environment per rollout and calls ``reset(**question_row)`` before each generation; the public
methods are the tools the model may call (their signatures and docstrings become the tool schemas). Each rollout
gets its own :class:`~ark.methods.graphscout.tools.Toolbox` and, on its first code call, its own stateful sandbox
from a shared :class:`~ark.methods.graphscout.sandbox_pool.SandboxPool`; ``reset`` hands the sandbox back (reset,
reused). Every call is recorded with the nodes it touched, so the reward reads the same structured results as for
the solver's own trajectories. Nothing a tool does raises: bad arguments get the toolbox's explanation, and a
sandbox that crashes marks the rollout (:attr:`RetrieverEnvironment.crashed`: its reward is 0) and is discarded,
so one broken worker costs that sample, not the run.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any

from ark.graph import KnowledgeGraph

from ..options import GraphScoutOptions
from ..tools import NodeResolver, Toolbox

if TYPE_CHECKING:
    from ark.index.graph_index import TextIndex

log = logging.getLogger(__name__)


class ScoutWorld:
    """What every rollout shares: the graph, its Cypher engine and node index, the sandbox pool and the system
    prompt. Build once per training run; :meth:`close` stops the sandboxes."""

    def __init__(self, graph: KnowledgeGraph, options: GraphScoutOptions | None = None, *, engine: Any = None,
                 index: TextIndex | None = None, progress: bool = False) -> None:
        from ark.graphdb import open_cypher

        from ..prompt import engine_schema, solver_system_prompt
        from ..solver import open_node_index

        self.graph = graph
        self.options = options or GraphScoutOptions()
        self.engine = engine if engine is not None else open_cypher(graph, progress=progress)
        self.schema = engine_schema(self.engine)
        self.index = index if index is not None else open_node_index(graph, self.options, progress=progress)
        self.resolver = NodeResolver(graph)
        from ..sandbox_pool import pool_for

        self.pool = pool_for(self.engine, self.options)
        self.system_prompt = solver_system_prompt(graph, self.schema, self.options, self.engine, self.pool)

    @property
    def environment_class(self) -> type[RetrieverEnvironment]:
        return GraphScoutEnvironment if self.options.code_interpreter else RetrieverEnvironment

    def environment(self) -> RetrieverEnvironment:
        """A fresh rollout environment (what TRL's ``environment_factory`` calls)."""
        return self.environment_class(self)

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The tool schemas TRL shows the model (from the environment's method signatures and docstrings)."""
        from transformers.utils import get_json_schema

        env = self.environment_class.__new__(self.environment_class)
        return [get_json_schema(getattr(env, name)) for name in self.environment_class.TOOL_NAMES]

    def close(self) -> None:
        if self.pool is not None:
            self.pool.close()


class RetrieverEnvironment:
    """One rollout with ``node_id_retriever`` only (Table 2's "w/o A_code" ablation); the base of
    :class:`GraphScoutEnvironment`."""

    TOOL_NAMES: tuple[str, ...] = ("node_id_retriever",)

    def __init__(self, world: ScoutWorld) -> None:
        self._world = world
        self._sandbox: Any = None
        self._toolbox: Toolbox | None = None
        self.calls: list[dict[str, Any]] = []
        self.crashed: str | None = None
        self.question: str | None = None

    def reset(self, **row: Any) -> None:
        """Start a rollout on ``row`` (a GRPO dataset row: ``query``, ``answer``, ``clue_ids``, ...)."""
        self._hand_back_sandbox()
        world = self._world
        self.question = row.get("query")
        self.calls = []
        self.crashed = None
        self._toolbox = Toolbox(world.graph, world.schema, world.index, world.options,
                                sandbox_factory=self._take_sandbox if world.pool is not None else None,
                                resolver=world.resolver)
        return None

    def node_id_retriever(self, queries: list[str], topk: int = 2) -> str:
        """Find node ids by similarity to short mentions (batch): for each query, the top nodes with id, type (the
        Cypher label), name and score. Use it to ground the entities of the question before querying the graph.

        Args:
            queries: Mentions to look up, e.g. ['Marfan syndrome', 'FBN1'].
            topk: Nodes returned per query (default 2).
        """
        return self._call("node_id_retriever", {"queries": queries, "topk": topk})

    # ------------------------------------------------------------------ internals
    def _take_sandbox(self) -> Any:
        pool = self._world.pool
        if pool is None:  # reset() gives the toolbox this factory only when there is a pool
            raise RuntimeError("no sandbox pool: the code interpreter is off in these options")
        self._sandbox = pool.acquire()
        return self._sandbox

    def _hand_back_sandbox(self) -> None:
        sandbox, self._sandbox = self._sandbox, None
        pool = self._world.pool
        if sandbox is None or pool is None:  # a sandbox only ever comes from the pool
            return
        try:
            pool.release(sandbox)
        except Exception as exc:  # noqa: BLE001 - a worker that cannot reset is dropped, never reused
            log.warning("discarding a sandbox that failed to reset: %s", exc)
            with contextlib.suppress(Exception):
                sandbox.close()

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        if self._toolbox is None:
            self.reset()
        assert self._toolbox is not None  # reset() built it
        try:
            result = self._toolbox.execute(name, arguments)
        except Exception as exc:  # noqa: BLE001 - e.g. a sandbox worker that died; costs this sample only
            self.crashed = f"{name} crashed: {type(exc).__name__}: {exc}"
            log.warning("rollout tool crash (the sample gets reward 0): %s", self.crashed)
            self.calls.append({"name": name, "arguments": arguments, "ok": False, "error": "crashed",
                               "node_indices": []})
            sandbox, self._sandbox = self._sandbox, None
            if sandbox is not None:
                with contextlib.suppress(Exception):
                    sandbox.close()
            return f"[error] the tool failed: {type(exc).__name__}: {exc}"
        self.calls.append({"name": name, "arguments": arguments, "ok": result.ok, "error": result.error,
                           "node_indices": list(result.node_indices)})
        return result.text

class GraphScoutEnvironment(RetrieverEnvironment):
    """One rollout with both GraphScout tools: ``node_id_retriever`` and the sandboxed ``code_interpreter``."""

    TOOL_NAMES = ("node_id_retriever", "code_interpreter")

    def code_interpreter(self, code: str) -> str:
        """Run Python code in a stateful sandbox (variables persist between calls; no network, read-only files).
        Inside the code, the function cypher(query, params=None, limit=None) runs a read-only Cypher query on the
        graph and returns a list of dicts, one per row; it is a Python function, not a separate tool. Print the
        results you need.

        Args:
            code: Python code. Call cypher(query, params=None, limit=None) inside it to query the graph; print what
                you need to see.
        """
        return self._call("code_interpreter", {"code": code})


def rollout_trajectory(environment: RetrieverEnvironment, completion: list[dict[str, Any]]) -> dict[str, Any]:
    """One rollout as a trajectory dict the reward reads: the completion's messages and the environment's recorded
    calls. (A function, not a method: every public method of an environment is a tool for TRL.)"""
    return {"messages": list(completion), "steps": [{"tool_calls": list(environment.calls)}],
            "stop_reason": "answer" if completion and not completion[-1].get("tool_calls") else "max_steps"}
