"""Questions asked through a server: any registered method, validated options, per-request model settings, the
ranked nodes with their evidence, and each agent step as it happens.

:class:`QuestionService` builds each (method, options, model settings, candidate types) once and keeps the most
recently used few: a method's indexes and clients are reused across questions. A step listener is per question:
every retriever is built with one ``MethodContext.on_step`` that forwards to the listener of the question whose
agents made the step (a context variable set around the question, inherited by its agents' tasks).

A graph that changes (``ark graph update``) is picked up between questions: each question checks the graph's
version manifest when it is prepared, opens a newer version, and runs and is answered wholly on the version it
started with (methods are cached per version; the answer names it as ``graph_version``).

What a request may set is an allow-list. A method's options: only those its options model lists in
``REQUEST_OPTIONS`` (:func:`ark.methods.options.request_values`), each limit at most :data:`REQUEST_CAPS`; the rest
(sandbox isolation and limits, Cypher timeouts, embedders and their endpoints, model folders, devices, system
prompts, and any option added later) are the server's: its ``server_options`` per method, else the defaults. The
chat model: a request may choose ``temperature`` and ``offline``; its model name and endpoint only where the service
was made with ``allow_request_models`` (``--allow-request-models``). A request naming a server setting gets a 403
naming it and the options it may set.

Bad input raises :class:`RequestError` with an HTTP status and a message naming the value and the valid choices;
a method that fails (a model endpoint that keeps failing) raises it with status 502.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from ark.errors import ArkError
from ark.methods.presets import preset_of
from ark.text import clean_inline

if TYPE_CHECKING:
    from ark.graph import KnowledgeGraph
    from ark.methods.base import MethodOutput, Retriever
    from ark.runtime.evidence_graph import EvidenceGraph
    from ark.runtime.records import StepRecord, Trajectory

MAX_QUESTION_CHARS = 2000
# The most work one question may ask of a method, by the last part of a per-request option's key (``tools.
# max_global_size`` by ``max_global_size``; each item of a list option too, whose length is at most MAX_LIST_ITEMS).
# The command line has no such bound (its user pays for what they ask); a server must not let one short request start
# a billion agents. Each is well above the papers' settings (n = 3 agents, T_max = 20 steps, 10 turns, 20 iterations).
# Every per-request integer option without an upper bound in its model has a cap here (a test checks it).
REQUEST_CAPS: dict[str, int] = {
    "n_agents": 16, "max_steps": 100, "max_turns": 50, "iterations": 200, "fusion_seed": 2**31,
    "default_global_size": 50, "max_global_size": 100, "neighborhood_budget": 100, "max_observation_chars": 20_000,
    "snippet_chars": 1000, "max_name_chars": 500, "max_global_calls": 200, "max_neighborhood_calls": 200,
    "max_answer_nodes": 200, "max_rows": 1000, "rows_chars": 20_000, "neighbour_limit": 200, "feature_chars": 4000,
    "edges_per_node": 200, "max_triples": 1000, "max_paths": 50, "examples": 20, "default_topk": 20, "max_topk": 50,
    "max_queries": 20, "neighbours": 2000, "pool": 1000, "text_chars": 2000, "chunk_chars": 4000,
    "edges_per_chunk": 100, "seeds": 20, "max_neighborhood": 20_000, "hop_budgets": 2000, "budget": 2000,
    "keep": 200, "hops": 4, "beam_width": 200, "max_expansions": 1000, "branching": 1000, "prized_nodes": 200,
    "prized_edges": 200, "triples": 1000,
}
WORK_LIMITS = REQUEST_CAPS  # the former name
MAX_LIST_ITEMS = 8
# The model settings a request may always choose; ``model`` and ``base_url`` only with allow_request_models.
REQUEST_MODEL_FIELDS = ("temperature", "offline")
StepListener = Callable[[dict[str, Any]], Awaitable[None] | None]


class RequestError(ValueError, ArkError):
    """A question the service refuses (``status``: the HTTP status; ``kind``: a short error kind)."""

    def __init__(self, message: str, status: int = 422, kind: str = "invalid_request") -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind


@dataclass(frozen=True)
class ModelSettings:
    """The chat model a question uses (None: the server's default; ``offline``: the offline policy)."""

    model: str | None = None
    base_url: str | None = None
    temperature: float | None = None
    offline: bool = False

    def over(self, defaults: ModelSettings) -> ModelSettings:
        """These settings, with the unset ones taken from ``defaults``."""
        given = {key: value for key, value in asdict(self).items() if value not in (None, False)}
        if self.model or self.base_url:  # a request naming a model means it, even on a server started --offline
            given.setdefault("offline", False)
        return replace(defaults, **given)


@dataclass(frozen=True)
class Prepared:
    """A checked question with its method built (:meth:`QuestionService.prepare`)."""

    question: str
    method: str
    options: Any
    retriever: Any
    llm_name: str | None
    graph: KnowledgeGraph | None = None


class QuestionService:
    """Answers questions over one graph with any registered method (see the module doc)."""

    def __init__(self, graph: KnowledgeGraph, defaults: ModelSettings | None = None, cache_size: int = 8,
                 max_in_flight: int = 16, *, allow_request_models: bool = False,
                 server_options: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.graph = graph
        self.defaults = defaults or ModelSettings()
        self.allow_request_models = allow_request_models
        self.server_options = {name: dict(values) for name, values in (server_options or {}).items()}
        self.cache_size = cache_size
        self._retrievers: OrderedDict[tuple, tuple[Retriever, str | None]] = OrderedDict()
        self._building: dict[tuple, asyncio.Lock] = {}
        self._listener: ContextVar[StepListener | None] = ContextVar("ark_step_listener", default=None)
        self._in_flight = max_in_flight
        self._slots: asyncio.Semaphore | None = None
        self._question_graph: ContextVar[KnowledgeGraph | None] = ContextVar("ark_question_graph", default=None)
        self._follower: Any = None  # ark.graph.versioning.VersionFollower, made on the first question

    def current_graph(self) -> KnowledgeGraph:
        """The graph's newest version: reopened when its version manifest changed since the last question."""
        from ark.graph.versioning import VersionFollower

        if self.graph.path is None:
            return self.graph
        if self._follower is None:
            self._follower = VersionFollower(self.graph.path)
        self.graph = self._follower.latest(self.graph)
        return self.graph

    # ------------------------------------------------------------------ methods
    def method_summaries(self) -> dict[str, str]:
        from ark.methods import method_specs

        return {name: spec.summary for name, spec in method_specs().items()}

    def methods(self) -> list[dict[str, Any]]:
        """Every registered method with its options' JSON schema and defaults (for forms and clients)."""
        from ark.methods import method_specs
        from ark.methods.options import request_keys

        out = []
        for name, spec in method_specs().items():
            out.append({"name": name, "summary": spec.summary, "family": spec.family, "uses_llm": spec.uses_llm,
                        "requires": list(spec.requires), "options_schema": spec.options.model_json_schema(),
                        "defaults": spec.make_options(self.server_options.get(name, {})).model_dump(mode="json"),
                        "request_options": request_keys(spec.options)})
        return out

    # ------------------------------------------------------------------ asking
    async def ask(self, question: str, method: str = "ark", options: Mapping[str, Any] | None = None, *,
                  model: ModelSettings | None = None, candidate_types: list[str] | None = None, top: int = 10,
                  listener: StepListener | None = None, preset: str | None = None) -> dict[str, Any]:
        """Run ``method`` on ``question``; the answer as JSON-ready data (see :meth:`_answer`). ``listener`` gets
        each agent step (:func:`step_event`) as it happens."""
        prepared = await self.prepare(question, method, options, model=model, candidate_types=candidate_types,
                                      preset=preset)
        return await self.run(prepared, top=top, listener=listener)

    async def prepare(self, question: str, method: str = "ark", options: Mapping[str, Any] | None = None, *,
                      model: ModelSettings | None = None, candidate_types: list[str] | None = None,
                      preset: str | None = None) -> Prepared:
        """Check everything about a question and build (or reuse) its method: every :class:`RequestError` for bad
        input is raised here, before anything runs (a streamed answer can still get a 4xx status). ``preset``
        (``paper``): the method's preset, over the server's options and under the request's."""
        from ark.methods import MethodError, get_method_spec

        question = (question or "").strip()
        if not question:
            raise RequestError("the question is empty")
        if len(question) > MAX_QUESTION_CHARS:
            raise RequestError(f"the question is {len(question):,} characters long; the limit is "
                               f"{MAX_QUESTION_CHARS:,}")
        try:
            spec = get_method_spec(method)
        except MethodError as exc:
            raise RequestError(str(exc), 400, "unknown_method") from None
        chosen = self._options(spec, options or {}, preset)
        model = model or ModelSettings()
        self._check_model(model)
        graph = await asyncio.to_thread(self.current_graph)
        types = self._candidate_types(candidate_types, graph)
        settings = model.over(self.defaults) if spec.uses_llm else None
        retriever, llm_name = await self._retriever(method, chosen, settings, types, graph)
        return Prepared(question, method, chosen, retriever, llm_name, graph)

    def _check_model(self, model: ModelSettings) -> None:
        """A request's model settings: its model name and endpoint only where requests may choose the model."""
        chosen = [f"model.{name}" for name in ("model", "base_url") if getattr(model, name)]
        if chosen and not self.allow_request_models:
            raise RequestError(f"{' and '.join(chosen)} {'is' if len(chosen) == 1 else 'are'} set by the server, not "
                               "per request (a server started with --allow-request-models lets requests choose the "
                               f"model and its endpoint); a request may set "
                               f"{', '.join(f'model.{name}' for name in REQUEST_MODEL_FIELDS)}", 403, "server_setting")

    def _options(self, spec: Any, options: Mapping[str, Any], preset: str | None = None) -> Any:
        """A request's options checked against the method's allow-list and :data:`REQUEST_CAPS`, over its preset's
        (checked against the same allow-list: a preset only sets what a request may), over the server's options
        of that method."""
        from ark.methods import MethodError
        from ark.methods.options import RequestOptionError, merge_options, nest_keys, request_values
        from ark.methods.presets import PresetError, mark_preset, preset_values

        try:
            preset_given = request_values(spec, preset_values(spec, preset)) if preset is not None else {}
            given = {**preset_given, **request_values(spec, options)}
            chosen = mark_preset(spec.make_options(merge_options(self.server_options.get(spec.name, {}),
                                                                 nest_keys(given))), preset)
        except PresetError as exc:
            raise RequestError(str(exc), 422, "invalid_options") from None
        except RequestOptionError as exc:
            raise RequestError(str(exc), 403 if exc.server_only else 422,
                               "server_setting" if exc.server_only else "invalid_options") from None
        except MethodError as exc:
            raise RequestError(str(exc), 422, "invalid_options") from None
        _check_caps(spec.name, chosen.model_dump(), given)  # the values as validated: "9999" counts as 9999
        return chosen

    async def run(self, prepared: Prepared, top: int = 10, listener: StepListener | None = None) -> dict[str, Any]:
        """Answer a prepared question (at most ``max_in_flight`` at once); a failing method is a 502."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._in_flight)
        started = time.perf_counter()
        async with self._slots:
            token = self._listener.set(listener)
            graph_token = self._question_graph.set(prepared.graph)
            try:
                output = await prepared.retriever.aretrieve(prepared.question, max(top, 100))
            except RequestError:
                raise
            except Exception as exc:  # the method failed for this question: say why, on one line
                raise RequestError(f"{prepared.method} failed: {type(exc).__name__}: {' '.join(str(exc).split())}",
                                   502, "method_failed") from None
            finally:
                self._listener.reset(token)
                self._question_graph.reset(graph_token)
        return self._answer(prepared.question, prepared.method, prepared.options, prepared.llm_name, output, top,
                            time.perf_counter() - started, prepared.graph or self.graph)

    def _candidate_types(self, names: list[str] | None, graph: KnowledgeGraph) -> tuple[str, ...] | None:
        if not names:
            return None
        try:
            return tuple(graph.resolve_node_type(name) for name in names)
        except ValueError as exc:
            raise RequestError(f"candidate_types: {exc}", 422, "unknown_type") from None

    async def _retriever(self, method: str, options: Any, settings: ModelSettings | None,
                         types: tuple[str, ...] | None, graph: KnowledgeGraph) -> tuple[Retriever, str | None]:
        from ark.methods import MethodContext, MethodError
        from ark.methods.choice import MethodChoice

        key = (method, json.dumps(options.model_dump(mode="json"), sort_keys=True), settings, types,
               graph.info.fingerprint)
        lock = self._building.setdefault(key, asyncio.Lock())
        async with lock:  # concurrent first questions build a method once
            if key not in self._retrievers:
                llm = self._policy(settings) if settings is not None else None
                context = MethodContext(llm=llm, candidate_types=list(types) if types else None,
                                        on_step=self._forward_step)
                choice = MethodChoice(method, options, context)
                try:
                    retriever = await asyncio.to_thread(choice.build, graph)
                except MethodError as exc:
                    raise RequestError(str(exc), 400, "method_unavailable") from None
                except (ValueError, FileNotFoundError) as exc:  # options the method refuses once it looks
                    raise RequestError(f"method {method!r}: {' '.join(str(exc).split())}", 422,
                                       "invalid_options") from None
                except ImportError as exc:
                    extras = ", ".join(choice.spec.requires) or "the method's extra"
                    raise RequestError(f"method {method!r} needs an optional dependency ({exc}); install it with "
                                       f"pip install 'ark-kg[{extras}]'", 400, "method_unavailable") from None
                llm_name = None if settings is None else ("offline" if llm is None else str(llm.name))
                self._retrievers[key] = (retriever, llm_name)
                await self._evict()
            self._retrievers.move_to_end(key)
            return self._retrievers[key]

    async def _evict(self) -> None:
        while len(self._retrievers) > self.cache_size:
            key, (old, _) = self._retrievers.popitem(last=False)
            self._building.pop(key, None)
            await old.aclose()

    def _policy(self, settings: ModelSettings) -> Any:
        """The chat client for ``settings``, or None for the offline policy. The server's API key is sent only to
        the endpoints it was configured for (its environment or config file, or the command's --base-url), never
        to another base URL named in a request."""
        if settings.offline:
            return None
        from ark.llm import OpenAIChatClient, resolve_settings

        try:
            configured = resolve_settings()
            resolved = resolve_settings(model=settings.model, base_url=settings.base_url,  # None: not overridden
                                        temperature=settings.temperature)
        except (ValueError, TypeError) as exc:
            raise RequestError(f"model settings: {' '.join(str(exc).split())}", 422, "invalid_model") from None
        trusted = {(url or "").rstrip("/") for url in (configured.base_url, self.defaults.base_url)}
        if settings.base_url and settings.base_url.rstrip("/") not in trusted:
            resolved = resolved.model_copy(update={"api_key": None})
        if not resolved.configured():
            if resolved.model and not resolved.base_url:
                raise RequestError(f"model {resolved.model!r} has no endpoint: give base_url (or start the server "
                                   "with OPENAI_API_KEY set), or ask offline", 422, "invalid_model")
            if resolved.base_url and not resolved.model:
                raise RequestError(f"endpoint {resolved.base_url} has no model: give model", 422, "invalid_model")
            return None
        return OpenAIChatClient(resolved)

    async def _forward_step(self, trajectory: Trajectory, step: StepRecord) -> None:
        listener = self._listener.get()
        if listener is None:
            return
        sent = listener(step_event(self._question_graph.get() or self.graph, trajectory, step))
        if inspect.isawaitable(sent):
            await sent

    async def aclose(self) -> None:
        """Close every cached method's connections."""
        while self._retrievers:
            _, (retriever, _) = self._retrievers.popitem()
            await retriever.aclose()

    # ------------------------------------------------------------------ answers
    def _answer(self, question: str, method: str, options: Any, llm_name: str | None, output: MethodOutput, top: int,
                wall_s: float, g: KnowledgeGraph) -> dict[str, Any]:
        """``{question, method, options, llm, total, ranked: [{rank, index, id, name, type, score, votes,
        tie_group, evidence, snippet}], answer, agents, confidence, confidence_reason, evidence_graph, partial,
        wall_s, graph_version}`` (``evidence_graph``: :func:`evidence_drawing`)."""
        from ark.runtime.evidence_graph import AnswerMark, evidence_graph_of

        votes, ties, record = output.votes(), output.tie_groups(), output.record
        ranked = []
        for rank, (index, score) in enumerate(zip(output.indices[:top], output.scores[:top], strict=False), start=1):
            index = int(index)
            ranked.append({"rank": rank, "index": index, "id": g.node_id(index), "name": g.name(index),
                           "type": g.node_type(index), "score": round(float(score), 6), "votes": votes.get(index),
                           "tie_group": ties.get(index), "evidence": output.evidence(index),
                           "snippet": clean_inline(g.text(index) or "", 240)})
        agents = [{"agent": t.agent_index, "steps": len(t.steps), "stop_reason": t.stop_reason, "error": t.error,
                   "answer": len(t.answer)} for t in output.trajectories or []]
        answers = [AnswerMark(index, votes.get(index), ties.get(index)) for index in output.indices]
        return {"question": question, "method": method, "options": options.model_dump(mode="json"),
                "preset": preset_of(options), "llm": llm_name,
                "total": len(output.indices), "ranked": ranked,
                "answer": output.answer.to_dict() if output.answer is not None else None, "agents": agents,
                "confidence": record.confidence if record is not None else None,
                "confidence_reason": record.confidence_reason if record is not None else None,
                "evidence_graph": drawing_dict(g, evidence_graph_of(question, output.trajectories or [], answers, g,
                                                                    top)),
                "partial": output.partial, "wall_s": round(wall_s, 4),
                "graph_version": g.info.version}


def evidence_drawing(graph: KnowledgeGraph, record: Mapping[str, Any], top: int = 10) -> dict[str, Any]:
    """The evidence drawing of a question's record (:mod:`ark.runtime.evidence_graph`) for a page: its nodes and
    edges, and ``svg``, each node a link to its node page (``#/node/INDEX``)."""
    from ark.runtime.evidence_graph import evidence_graph

    return drawing_dict(graph, evidence_graph(record, graph, top=top))


def drawing_dict(graph: KnowledgeGraph, drawing: EvidenceGraph) -> dict[str, Any]:
    """An evidence drawing as the page's JSON: its nodes and edges, and ``svg``, each node a link to its node page
    (``#/node/INDEX``)."""
    from ark.runtime.evidence_svg import render_svg

    return {**drawing.to_dict(), "svg": render_svg(drawing, node_href=lambda index: f"#/node/{index}")}


def _check_caps(method: str, options: Mapping[str, Any], given: Mapping[str, Any]) -> None:
    """Refuse per-request options (the keys of ``given``, read from the validated ``options``) asking for more work
    than :data:`REQUEST_CAPS` allows one question."""
    for key in given:
        value: Any = options
        for part in key.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        if isinstance(value, Mapping):  # a group given whole: each of its options
            _check_caps(method, options, {f"{key}.{name}": None for name in value})
            continue
        cap = REQUEST_CAPS.get(key.rsplit(".", 1)[-1])
        if cap is None:
            continue
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and len(value) > MAX_LIST_ITEMS:
            raise RequestError(f"method {method!r}: {key} has {len(value)} items; this server allows one question "
                               f"at most {MAX_LIST_ITEMS}", 422, "invalid_options")
        for item in items:
            if isinstance(item, (int, float)) and not isinstance(item, bool) and item > cap:
                raise RequestError(f"method {method!r}: {key}={item} is more than this server allows one question "
                                   f"(at most {cap})", 422, "invalid_options")


def step_event(graph: KnowledgeGraph, trajectory: Trajectory, step: StepRecord) -> dict[str, Any]:
    """One agent step as a live view shows it: the calls with their arguments, how each went, the nodes it showed
    (first 10, with names) and the first line of its observation."""
    calls = []
    for position, call in enumerate(step.tool_calls):
        try:
            arguments: Any = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError:
            arguments = clean_inline(call.arguments, 300)
        observation = step.observations[position] if position < len(step.observations) else ""
        nodes = [{"index": int(i), "name": graph.name(int(i)), "type": graph.node_type(int(i))}
                 for i in call.node_indices[:10] if graph.is_valid_index(int(i))]
        calls.append({"name": call.name, "arguments": arguments, "ok": call.ok, "error": call.error,
                      "nodes": nodes, "node_count": len(call.node_indices),
                      "summary": clean_inline((observation or "").split("\n", 1)[0], 300)})
    return {"agent": trajectory.agent_index, "step": step.index + 1, "calls": calls,
            "content": clean_inline(step.content or "", 500) or None, "llm_s": round(step.llm_s, 4),
            "wall_s": round(step.wall_s, 4)}
