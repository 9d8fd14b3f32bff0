"""Runs spread over a Ray cluster (``ark retrieve|eval --ray``): a second executor of :mod:`ark.eval.runner`.

The driver (this process) stays the single writer: it keeps the results file, its lock, resuming, failure
semantics and the trajectory format of :func:`~ark.eval.runner.run_retrieval`, and only hands the queries out.

- **Workers**: one Ray actor per worker (:class:`QueryWorker`). Each opens the graph once (memory-mapped: the
  directory the driver opened where its machine has it, else the name or path given; checked against the driver's
  graph fingerprint, or a later version of that graph) and builds the method once from the driver's
  :class:`~ark.methods.choice.MethodChoice`; indexes cached beside the graph are opened, not rebuilt. Like a local
  run, it runs each query on the graph's newest version (:class:`~ark.eval.following.FollowedMethod`) and reports
  the version with its output. A worker keeps up to ``concurrency`` queries in flight for methods that await (LLM
  agents), one at a time for the others.
- **One LLM budget per endpoint**: an :class:`EndpointBudget` actor holds, per endpoint URL, as many slots as the
  client's ``settings.concurrency``; every worker's :class:`~ark.llm.OpenAIChatClient` takes a slot for each request
  (its ``limiter`` hook), so the whole cluster keeps at most that many requests in flight per endpoint.
- **Worker death**: a query whose worker dies is handed to another worker (a replacement is started), and its
  outcome is recorded once. The slots the dead worker held stay counted for the client's timeout, then come back
  (its requests may still be open at the endpoint; :class:`EndpointBudget` says why that is enough). A query that
  takes :data:`MAX_WORKER_DEATHS` workers down with it fails (not written; a rerun retries it).

``ray`` is imported only here, and only when a run uses this executor (the ``ray`` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import tempfile
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ark.errors import ArkError

if TYPE_CHECKING:
    from ..index.embedding_usage import Counts
    from ..loaders.queries import Query
    from ..methods.choice import MethodChoice
    from .runner import RecordOutcome

LOCAL = "local"  # --ray without an address: a new Ray instance on this machine, shut down after the run
MAX_WORKER_DEATHS = 3  # a query whose workers died this often fails instead of taking more workers down
LOCAL_OBJECT_STORE_BYTES = 128 * 2**20  # results are small and the graph never travels: a small object store


class RayRunError(RuntimeError, ArkError):
    """A distributed run could not start or went on without workers (one line for the user)."""


class WorkerLost(RuntimeError, ArkError):
    """The outcome of a query whose workers kept dying."""


def import_ray() -> Any:
    """The ``ray`` module, or a :class:`RayRunError` saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise RayRunError(f"--ray needs the Ray library ({exc}); install it with pip install 'ark-kg[ray]'") from exc
    return ray


# ----------------------------------------------------------------------------------------------- shared LLM budget
class EndpointBudget:
    """The cluster's LLM concurrency budget: per endpoint, ``limits[endpoint]`` request slots shared by every worker.

    What the budget promises: an endpoint never has more than its limit of requests in flight from the cluster, a
    request counting from the moment its slot is granted until its client has the reply or has given up on it after
    its own per-request timeout (``hold_s[endpoint]``, the client's ``timeout_s``). Slots are leased by ticket:

    - :meth:`release` ends a lease at once: the client has its reply or its error, or stopped waiting for its slot
      (a ticket released before it is granted gives its slot back as soon as it is granted).
    - :meth:`release_holder` is the notice that a holder (one worker process) died. Its requests may still be open
      at the endpoint: the kernel closed the dead process's sockets, but a server goes on with a request whose
      client vanished and only notices when it writes the reply. So the dead holder's leases **stay counted for
      ``hold_s`` after the notice**, then their slots come back. This is enough: each of those requests was sent
      before the process died, so before the notice; a live client would have given it up at the latest
      ``hold_s`` after sending it, so it is counted at least as long as a live client would count it. Shorter is
      not safe: nothing the driver learns (the actor's death, a missed heartbeat) says the endpoint has finished
      the request, only that the process is gone. A dead holder sends nothing more: its tickets still waiting are
      refused when granted (their slots go back at once, nothing was sent) and its later acquires are refused.
      A release from the holder that arrives after the notice (its last message, racing its death) does not end
      a held lease early.

    Why not leases renewed by heartbeats: a heartbeat shows that a process lives, not that the endpoint is done
    with its requests; once heartbeats stop, the budget would still have to wait out the timeout, which is what
    the death notice starts here. Limits: a request that a live client cancels (its agent stopped because another
    failed) frees its slot at once, here as in a local run, although the endpoint may still be working on it; and
    an endpoint that keeps working past the client's timeout is beyond any client-side budget. Runs as an async
    Ray actor; all state lives on its event loop (:meth:`acquire` waits there, held leases come back through the
    loop's timer).
    """

    def __init__(self, limits: dict[str, int], hold_s: dict[str, float] | None = None) -> None:
        self.limits = dict(limits)
        self.hold_s = dict(hold_s or {})
        self._free: dict[str, asyncio.Semaphore] = {}
        self._held: dict[str, tuple[str, str]] = {}  # ticket -> (endpoint, holder): a granted, live lease
        self._held_back: set[str] = set()  # tickets of dead holders, counted until their hold ends
        self._abandoned: set[str] = set()  # tickets released before they were granted
        self._dead: set[str] = set()  # holders whose death was notified
        self._counted: dict[str, int] = defaultdict(int)  # per endpoint: live leases + held-back ones
        self.peaks: dict[str, int] = defaultdict(int)

    def _semaphore(self, endpoint: str) -> asyncio.Semaphore:
        if endpoint not in self._free:
            self._free[endpoint] = asyncio.Semaphore(self.limits.get(endpoint, 1))
        return self._free[endpoint]

    def _return_slot(self, endpoint: str) -> None:
        self._counted[endpoint] -= 1
        self._free[endpoint].release()

    async def acquire(self, endpoint: str, holder: str, ticket: str) -> bool:
        """Wait for a slot of ``endpoint``; False when the ticket was abandoned or its holder died meanwhile."""
        if holder in self._dead:
            return False
        semaphore = self._semaphore(endpoint)
        await semaphore.acquire()
        if ticket in self._abandoned or holder in self._dead:
            self._abandoned.discard(ticket)
            semaphore.release()
            return False
        self._held[ticket] = (endpoint, holder)
        self._counted[endpoint] += 1
        self.peaks[endpoint] = max(self.peaks[endpoint], self._counted[endpoint])
        return True

    async def release(self, ticket: str) -> None:
        """End a lease: its request is over (or, for a ticket still waiting, give its slot back once granted)."""
        if ticket in self._held_back:  # its holder was declared dead: the hold decides
            return
        lease = self._held.pop(ticket, None)
        if lease is None:
            self._abandoned.add(ticket)
            return
        self._return_slot(lease[0])

    async def release_holder(self, holder: str) -> int:
        """``holder`` died: its leases stay counted for their endpoint's ``hold_s``, then come back; how many."""
        self._dead.add(holder)
        tickets = [ticket for ticket, (_, who) in self._held.items() if who == holder]
        loop = asyncio.get_running_loop()
        for ticket in tickets:
            endpoint, _ = self._held.pop(ticket)
            self._held_back.add(ticket)
            loop.call_later(self.hold_s.get(endpoint, 0.0), self._end_hold, ticket, endpoint)
        return len(tickets)

    def _end_hold(self, ticket: str, endpoint: str) -> None:
        self._held_back.discard(ticket)
        self._return_slot(endpoint)

    async def counted(self) -> dict[str, int]:
        """Per endpoint, the slots counted now (live leases and dead holders' leases still held)."""
        return {endpoint: n for endpoint, n in self._counted.items() if n}

    async def peak_in_flight(self) -> dict[str, int]:
        """Per endpoint, the most slots counted at once."""
        return dict(self.peaks)


@dataclass
class SharedLimit:
    """The client side of :class:`EndpointBudget`: the ``limiter`` hook of :class:`~ark.llm.OpenAIChatClient`."""

    budget: Any  # the EndpointBudget actor handle
    holder: str

    @contextlib.asynccontextmanager
    async def slot(self, endpoint: str):
        ticket = uuid.uuid4().hex
        try:
            if not await self.budget.acquire.remote(endpoint, self.holder, ticket):
                raise RayRunError(f"this Ray worker ({self.holder}) was declared lost: it may send no more requests "
                                  f"to {endpoint}")
            yield
        finally:  # also when cancelled while waiting: the budget frees the slot once granted
            self.budget.release.remote(ticket)


# ----------------------------------------------------------------------------------------------------- the worker
class QueryWorker:
    """One worker of a distributed run: the graph opened and the method built once, then queries (a Ray actor).

    A failure to set up (graph missing on this machine, an extra not installed) is kept and reported by
    :meth:`info`, so the driver can name it on one line instead of retrying a worker that cannot start.
    """

    def __init__(self, graph: str, path: str | None, fingerprint: str | None, choice: MethodChoice, budget: Any,
                 holder: str) -> None:
        self.error: str | None = None
        self.method: Any = None
        try:
            from ..graph.versioning import version_trained_on
            from ..llm import OpenAIChatClient
            from ..loaders import open_graph
            from .following import FollowedMethod

            # The driver's graph directory where this machine has it (no rebuild, the same memory-mapped files),
            # else the name or path the user gave (a built-in graph is then built or found in this ARK_HOME).
            opened = open_graph(path if path and os.path.isfile(os.path.join(path, "graph.json")) else graph)
            found = opened.info.fingerprint
            if fingerprint is not None and found != fingerprint and version_trained_on(opened, fingerprint) is None:
                raise RuntimeError(f"graph {graph!r} on this worker has fingerprint {found}, the driver's has "
                                   f"{fingerprint}: give every machine the same graph")
            llm = choice.context.llm
            if budget is not None and isinstance(llm, OpenAIChatClient):
                llm.limiter = SharedLimit(budget, holder)
            self.method = FollowedMethod(opened, choice.build(opened), choice.build)
        except Exception as exc:  # reported by info(); the driver stops the run with it
            self.error = f"{type(exc).__name__}: {exc}"

    def info(self) -> dict[str, Any]:
        import socket

        return {"pid": os.getpid(), "host": socket.gethostname(), "error": self.error,
                "concurrent": bool(self.method is not None and self.method.concurrent)}

    def embedding_usage(self) -> Counts:
        """What this worker's process embedded (its method's build included), for the driver's run config."""
        from ..index.embedding_usage import EMBEDDING_USAGE

        return EMBEDDING_USAGE.snapshot()

    async def run(self, text: str, k: int) -> tuple[Any, float, int]:
        """One query: the method's output, the seconds it took and the graph version it ran on (an exception is
        the query's outcome)."""

        if self.method is None:
            raise RayRunError(f"worker could not start: {self.error}")
        started = time.perf_counter()
        output, graph = await self.method.aretrieve(text, k)
        return output, time.perf_counter() - started, graph.info.version


# --------------------------------------------------------------------------------------------------- the executor
@dataclass
class _Worker:
    handle: Any
    holder: str
    slots: int = 1
    busy: int = 0
    alive: bool = True
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class RayExecutor:
    """Runs a run's queries on the workers of a Ray cluster (see the module doc); pass it to
    :func:`~ark.eval.runner.run_retrieval` or :func:`~ark.eval.run_eval` as ``executor``.

    ``graph`` is what the workers open: a built-in graph name or a graph directory (made absolute here); ``path``,
    the directory the driver opened, is used instead on the machines that have it. Either is checked against
    ``fingerprint`` (the driver's ``graph.info.fingerprint``). ``address``: None or ``"local"``
    starts a Ray instance on this machine for the run (``num_cpus`` CPUs, all by default) and stops it after;
    ``"auto"``, ``HOST:PORT`` or ``ray://HOST:PORT`` joins a running cluster; an already connected Ray session is
    used as it is. ``workers`` defaults to one per CPU of the cluster; ``concurrency`` is the queries in flight per
    worker (methods that await). ``status`` receives one-line progress notes.
    """

    choice: MethodChoice
    graph: str
    path: str | None = None
    fingerprint: str | None = None
    address: str | None = None
    workers: int | None = None
    concurrency: int = 4
    num_cpus: int | None = None
    status: Callable[[str], None] | None = None
    max_worker_deaths: int = MAX_WORKER_DEATHS
    # Filled by a run: each worker's info (pid, host), each worker lost, and the budget's peak use per endpoint.
    worker_info: list[dict[str, Any]] = field(default_factory=list)
    lost_workers: list[dict[str, Any]] = field(default_factory=list)
    budget_peaks: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {self.concurrency!r}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers!r}")
        from ..loaders.registry import BUILDERS

        if self.graph not in BUILDERS:
            self.graph = os.path.abspath(os.path.expanduser(self.graph))
        if self.path is not None:
            self.path = os.path.abspath(os.path.expanduser(str(self.path)))

    def _note(self, text: str) -> None:
        if self.status is not None:
            self.status(text)

    # ------------------------------------------------------------------------------------------------ the cluster
    @contextlib.contextmanager
    def _cluster(self) -> Iterator[Any]:
        ray = import_ray()
        if ray.is_initialized():
            yield ray
            return
        local = self.address in (None, LOCAL)
        settings: dict[str, Any] = {"logging_level": logging.WARNING, "log_to_driver": False,
                                    "include_dashboard": False}
        scratch = None  # the Ray folder made for this run (sessions, logs, sockets), removed after it
        if local:
            settings.update(num_cpus=self.num_cpus or os.cpu_count() or 1, object_store_memory=LOCAL_OBJECT_STORE_BYTES)
            # Ray's socket paths must stay short: its own folder in the system temp dir (RAY_TMPDIR: kept there).
            if os.environ.get("RAY_TMPDIR"):
                settings["_temp_dir"] = os.environ["RAY_TMPDIR"]
            else:
                settings["_temp_dir"] = scratch = tempfile.mkdtemp(prefix="ark-ray-")
        try:
            try:
                ray.init(address=LOCAL if local else self.address, **settings)
            except (ConnectionError, ValueError, RuntimeError) as exc:
                where = "a local Ray instance" if local else f"the Ray cluster at {self.address}"
                raise RayRunError(f"cannot start {where}: {' '.join(str(exc).split())}") from exc
            try:
                yield ray
            finally:
                ray.shutdown()
        finally:
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)

    def _start_worker(self, ray: Any, budget: Any, num_cpus: float, index: int) -> _Worker:
        holder = f"worker-{index}-{uuid.uuid4().hex[:8]}"
        actor = ray.remote(QueryWorker).options(
            num_cpus=num_cpus, max_restarts=0, max_concurrency=max(self.concurrency, 1) + 1,
            scheduling_strategy="SPREAD")
        return _Worker(actor.remote(self.graph, self.path, self.fingerprint, self._shipped_choice(), budget, holder),
                       holder)

    def _shipped_choice(self) -> MethodChoice:
        """The choice as workers get it: an LLM client is sent as a fresh copy of its settings (no connections)."""
        from ..llm import OpenAIChatClient

        llm = self.choice.context.llm
        if isinstance(llm, OpenAIChatClient):
            return replace(self.choice, context=replace(self.choice.context, llm=OpenAIChatClient(llm.settings)))
        return self.choice

    def _budget_limits(self) -> tuple[dict[str, int], dict[str, float]]:
        """Per endpoint, the budget's slots (the client's concurrency) and how long a dead holder's slot stays
        counted (the client's per-request timeout)."""
        from ..llm import OpenAIChatClient

        llm = self.choice.context.llm
        if not isinstance(llm, OpenAIChatClient):
            return {}, {}
        return {llm.base_url: llm.settings.concurrency}, {llm.base_url: llm.settings.timeout_s}

    def _ready(self, ray: Any, worker: _Worker) -> None:
        """Wait for a new worker and take its info; a worker that cannot start stops the run with its reason."""
        try:
            worker.info = ray.get(worker.handle.info.remote())
        except ray.exceptions.RayActorError as exc:
            raise RayRunError(f"a Ray worker died while starting: {_first_line(exc)}") from exc
        if worker.info.get("error"):
            raise RayRunError(f"a Ray worker could not open graph {self.graph!r} and build method "
                              f"{self.choice.name!r}: {worker.info['error']}")
        worker.slots = self.concurrency if worker.info.get("concurrent") else 1
        self.worker_info.append(worker.info)

    # ---------------------------------------------------------------------------------------------------- the run
    def run(self, todo: Sequence[Query], k: int, record: RecordOutcome) -> None:
        if not todo:
            return
        with self._cluster() as ray:
            total_cpus = float(ray.cluster_resources().get("CPU", 1.0))
            count = self.workers or max(1, int(total_cpus))
            count = min(count, len(todo))
            num_cpus = min(1.0, total_cpus / count)
            limits, holds = self._budget_limits()
            budget = ray.remote(EndpointBudget).options(num_cpus=0, max_concurrency=10_000).remote(limits, holds) \
                if limits else None
            self._note(f"Ray: starting {count} worker(s); each opens the graph and builds {self.choice.name!r} once")
            pool = [self._start_worker(ray, budget, num_cpus, i) for i in range(count)]
            try:
                for worker in pool:
                    self._ready(ray, worker)
                hosts = len({w.info.get("host") for w in pool})
                shared = "; LLM budget " + ", ".join(f"{n} requests at a time to {url}" for url, n in limits.items()) \
                    if limits else ""
                self._note(f"Ray: {count} worker(s) on {hosts} machine(s), up to {pool[0].slots} queries in flight "
                           f"each{shared}")
                self._dispatch(ray, pool, budget, num_cpus, todo, k, record)
            finally:
                _count_worker_embeddings(ray, pool)
                if budget is not None:
                    with contextlib.suppress(Exception):
                        self.budget_peaks = ray.get(budget.peak_in_flight.remote(), timeout=10)
                for worker in pool:
                    with contextlib.suppress(Exception):
                        ray.kill(worker.handle)
                if budget is not None:
                    with contextlib.suppress(Exception):
                        ray.kill(budget)

    def _dispatch(self, ray: Any, pool: list[_Worker], budget: Any, num_cpus: float, todo: Sequence[Query], k: int,
                  record: RecordOutcome) -> None:
        pending: deque[Query] = deque(todo)
        in_flight: dict[Any, tuple[Query, _Worker]] = {}
        deaths: dict[str, int] = defaultdict(int)  # query id -> workers that died running it
        replacements, most_replacements = 0, self.max_worker_deaths * len(pool)  # fixed at the start
        try:
            while pending or in_flight:
                for worker in pool:  # fill every live worker's free slots, in order
                    while worker.alive and worker.busy < worker.slots and pending:
                        query = pending.popleft()
                        in_flight[worker.handle.run.remote(query.query, k)] = (query, worker)
                        worker.busy += 1
                if not in_flight:
                    break
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in ready:
                    query, worker = in_flight.pop(ref)
                    worker.busy -= 1
                    version = None
                    try:
                        output, wall_s, version = ray.get(ref)
                    except ray.exceptions.RayActorError as exc:
                        if worker.alive:
                            worker.alive = False
                            self._lost(ray, worker, budget, exc)
                            if replacements < most_replacements:
                                replacements += 1
                                fresh = self._start_worker(ray, budget, num_cpus, len(pool))
                                self._ready(ray, fresh)
                                pool.append(fresh)
                        deaths[query.id] += 1
                        if deaths[query.id] < self.max_worker_deaths and any(w.alive for w in pool):
                            pending.appendleft(query)  # another worker runs it; nothing was written
                            continue
                        output, wall_s = WorkerLost(f"Ray workers died {deaths[query.id]} times running this "
                                                    f"query (last: {_first_line(exc)})"), 0.0
                    except ray.exceptions.RayTaskError as exc:  # the method raised: the query's outcome
                        output, wall_s = _cause(exc), 0.0
                    if not record(query, output, wall_s, version):
                        return
                if not any(w.alive for w in pool):
                    while pending:
                        if not record(pending.popleft(), WorkerLost("no Ray worker left to run this query"), 0.0,
                                      None):
                            return
        finally:
            for ref in in_flight:  # stopped early or interrupted: nothing may outlive the run
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=False)

    def _lost(self, ray: Any, worker: _Worker, budget: Any, exc: BaseException) -> None:
        held = 0  # the LLM slots it held: counted on for the client's timeout, then returned by the budget
        if budget is not None:
            with contextlib.suppress(Exception):
                held = ray.get(budget.release_holder.remote(worker.holder), timeout=30)
        self.lost_workers.append({**worker.info, "slots_held": held, "error": _first_line(exc)})
        timeout_s = max(self._budget_limits()[1].values(), default=0.0)
        wait = f"; its {held} LLM slot(s) come back after the request timeout ({timeout_s:g} s)" if held else ""
        self._note(f"Ray: worker pid {worker.info.get('pid')} on {worker.info.get('host')} was lost; its queries "
                   f"go to another worker{wait}")
        with contextlib.suppress(Exception):
            ray.kill(worker.handle)


def _count_worker_embeddings(ray: Any, pool: Sequence[_Worker]) -> None:
    """Add what each worker embedded to this process's tally, which the run's config records (a worker that died
    took its count with it)."""
    from ..index.embedding_usage import EMBEDDING_USAGE

    for worker in pool:
        with contextlib.suppress(Exception):
            for spec, entry in ray.get(worker.handle.embedding_usage.remote(), timeout=10).items():
                EMBEDDING_USAGE.add(spec, entry["texts"], entry["tokens"], entry["counted_by"],
                                    entry.get("texts_without_usage", 0))


def _cause(exc: BaseException) -> BaseException:
    """The exception a worker's method raised (Ray wraps it), so failures read as in a local run."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return " ".join(text[0].split()) if text else type(exc).__name__
