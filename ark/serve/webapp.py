"""``ark serve GRAPH``: the local web app (FastAPI, extra ``serve``): a JSON API with its reference (``/docs``, rendered
here from ``/openapi.json`` by :mod:`ark.serve.api_docs`: FastAPI's Swagger UI and ReDoc pages load from a CDN and are
off) and the page on top of it (``static/``, no outside assets).

- ``POST /api/ask``: a question with any method, its per-request options and model settings → the fused ranking
  with each node's evidence (a server setting named in a request: 403, :mod:`ark.serve.questions`).
  ``POST /api/ask/stream``: the same as server-sent events, ``step`` (one agent step, as it happens), then
  ``answer`` or ``error``.
- ``GET /api/nodes/{ref}``: a node's text, properties and typed neighbours. ``POST /api/tools/{name}``: any graph
  tool of ``ark mcp``. ``GET /api/graph``, ``GET /api/methods``.
- ``GET /api/runs...``: the run browser (:mod:`ark.serve.runs`); ``.../trajectories/{position}/evidence``: the
  evidence drawing of a run's question (:mod:`ark.runtime.evidence_graph`), as an answer carries it.
- ``GET /``: the page, its method list written in by the server (never empty while the page loads).

Every error is JSON ``{"error": message, "kind": ...}`` with a 4xx status naming the bad value; an unexpected failure
is a 500 with one line, its traceback only in the server's log. Bodies over :data:`MAX_BODY_BYTES` get 413.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from ark.runtime.tools import MAX_ARGUMENT_DEPTH, dumped, json_depth

from .graph_tools import GraphTools, NodeNotFound, resolve_node
from .questions import MAX_QUESTION_CHARS, ModelSettings, QuestionService, RequestError, evidence_drawing
from .runs import RunBrowser, RunNotFound
from .tools.retrieve import ModelChoice

log = logging.getLogger(__name__)
STATIC = Path(__file__).with_name("static")
MAX_BODY_BYTES = 64 * 1024
MAX_NEIGHBOURS = 200


class AskRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="The question.")
    method: str = Field(default="ark", description="A registered method (GET /api/methods).")
    options: dict[str, Any] = Field(default_factory=dict, description="The method's per-request options "
                                    "(GET /api/methods: request_options); the others are the server's (403).")
    preset: str | None = Field(default=None, description="An options preset under `options`: paper = the method's "
                               "paper's settings (ark, seeder, graphscout; it sets per-request options only).")
    model: ModelChoice = Field(default_factory=ModelChoice, description="LLM methods: the chat model.")
    candidate_types: list[str] | None = Field(default=None, description="Only rank nodes of these types.")
    top: int = Field(default=10, ge=1, le=100, description="Ranked nodes to return.")


class BodyLimit:
    """ASGI middleware answering 413 (JSON) to a body over ``limit`` bytes: by its Content-Length, or, for a body
    streamed without one, once the bytes read pass the limit. (A declared length is trusted: the server reads no
    more than it.)"""

    def __init__(self, app: Any, limit: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(send)
            return
        if declared is None and scope.get("method") in ("POST", "PUT", "PATCH"):
            # A streamed body without a length: read it here (up to the limit), then hand it on whole.
            chunks, size, more = [], 0, True
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    await self.app(scope, receive, send)  # the client went away; let the app see it
                    return
                chunks.append(message.get("body", b""))
                size += len(chunks[-1])
                more = message.get("more_body", False)
                if size > self.limit:
                    await self._refuse(send)
                    return
            body = b"".join(chunks)
            replayed = False

            async def replay() -> dict:
                nonlocal replayed
                if replayed:
                    return await receive()
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}

            await self.app(scope, replay, send)
            return
        await self.app(scope, receive, send)

    async def _refuse(self, send: Any) -> None:
        body = json.dumps({"error": f"request body over {self.limit:,} bytes", "kind": "too_large"}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})


def _error(status: int, message: str, kind: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, "kind": kind, **extra}, status_code=status)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for error in exc.errors()[:5]:
        if error.get("type") == "json_invalid":
            return f"the body is not valid JSON ({error.get('ctx', {}).get('error', 'decode error')})"
        where = ".".join(str(p) for p in error.get("loc", ()) if p != "body") or "body"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    return "; ".join(parts) or "invalid request"


def create_app(tools: GraphTools, runs: list[Path] | None = None) -> Any:
    """The web app over ``tools`` (graph, index and question service) and the run folders under ``runs``."""
    questions = tools.questions
    assert questions is not None, "the web app needs GraphTools built with a QuestionService"
    graph = tools.graph
    browser = RunBrowser(list(runs or []))
    app = FastAPI(title="ARK", version="1", docs_url=None, redoc_url=None,
                  summary="Evidence retrieval from a text-rich knowledge graph",
                  description=f"Graph {graph.info.label()!r}: ask with any method, watch agents' "
                              "steps, read nodes, browse run folders.")

    _add_error_handlers(app)
    _add_question_routes(app, tools, questions)
    _add_node_routes(app, tools)
    _add_run_routes(app, tools, browser)
    _add_page_routes(app, questions.method_summaries())
    app.add_middleware(BodyLimit)
    return app


def _add_error_handlers(app: Any) -> None:
    """Every error as one JSON object ``{error, kind}`` with its status; tracebacks only in the server's log."""

    @app.exception_handler(RequestError)
    async def request_error(_request: Request, exc: RequestError) -> JSONResponse:
        return _error(exc.status, str(exc), exc.kind)

    @app.exception_handler(RequestValidationError)
    async def invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        return _error(422, _validation_message(exc), "invalid_request")

    @app.exception_handler(RunNotFound)
    async def no_run(_request: Request, exc: RunNotFound) -> JSONResponse:
        return _error(404, str(exc), "not_found")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail), "http")

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        return _error(500, f"internal error ({type(exc).__name__}); see the server's log", "internal")


def _add_question_routes(app: Any, tools: GraphTools, questions: QuestionService) -> None:
    """Asking (whole or streamed as server-sent events), the method list and the graph's schema."""
    def _ask_kwargs(body: AskRequest) -> dict[str, Any]:
        settings = ModelSettings(model=body.model.model, base_url=body.model.base_url,
                                 temperature=body.model.temperature, offline=body.model.offline)
        return {"model": settings, "candidate_types": body.candidate_types, "top": body.top, "preset": body.preset}

    @app.post("/api/ask", summary="Ask a question; the fused ranking with each node's evidence")
    async def ask(body: AskRequest) -> dict[str, Any]:
        return await questions.ask(body.question, body.method, body.options, **_ask_kwargs(body))

    @app.post("/api/ask/stream", summary="Ask a question; server-sent events: step..., then answer or error")
    async def ask_stream(body: AskRequest) -> StreamingResponse:
        kwargs = _ask_kwargs(body)
        top = kwargs.pop("top")
        # Bad input is refused here with its 4xx status, before the stream (and its 200) starts.
        prepared = await questions.prepare(body.question, body.method, body.options, **kwargs)
        events: asyncio.Queue[tuple[str, Any] | None] = asyncio.Queue()

        async def run() -> None:
            try:
                answer = await questions.run(prepared, top=top,
                                             listener=lambda step: events.put_nowait(("step", step)))
                events.put_nowait(("answer", answer))
            except RequestError as exc:
                events.put_nowait(("error", {"error": str(exc), "kind": exc.kind, "status": exc.status}))
            except Exception as exc:  # noqa: BLE001 - reported as one event; the traceback goes to the log
                log.exception("streamed question failed")
                events.put_nowait(("error", {"error": f"internal error ({type(exc).__name__})", "kind": "internal",
                                             "status": 500}))
            finally:
                events.put_nowait(None)

        async def stream() -> AsyncIterator[str]:
            task = asyncio.create_task(run())
            try:
                yield ": started\n\n"  # the page knows at once that the question was accepted
                while (event := await events.get()) is not None:
                    name, data = event
                    yield f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
            finally:
                if not task.done():  # the page went away: stop the agents
                    task.cancel()

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/api/methods", summary="Registered methods with their options' schema and defaults")
    async def methods() -> list[dict[str, Any]]:
        return questions.methods()

    @app.get("/api/graph", summary="The graph's schema and counts")
    async def graph_info() -> dict[str, Any]:
        result = await tools.aexecute("graph_schema", {})
        defaults = questions.defaults
        return {**(dumped(result.data) or {}),
                "defaults": {"model": defaults.model, "base_url": defaults.base_url, "offline": defaults.offline},
                "allow_request_models": questions.allow_request_models}


def _add_node_routes(app: Any, tools: GraphTools) -> None:
    """A node's page and the graph tools of ``ark mcp``."""
    @app.get("/api/nodes/{ref}", summary="A node: text, properties and typed neighbours")
    async def node(ref: str, limit: int = Query(default=100, ge=1, le=MAX_NEIGHBOURS)) -> Any:
        return await asyncio.to_thread(_node_page, tools, ref, limit)

    _add_tool_route(app, tools)


def _add_run_routes(app: Any, tools: GraphTools, browser: RunBrowser) -> None:
    """The read-only run browser: run folders, their trajectories, evidence drawings and charts."""
    @app.get("/api/runs", summary="The browsable run folders")
    async def runs_list() -> list[dict[str, Any]]:
        return await asyncio.to_thread(browser.list)

    @app.get("/api/runs/{name}", summary="One run: metrics, per-template table, charts, the queries it got wrong")
    async def run_detail(name: str) -> dict[str, Any]:
        return await asyncio.to_thread(browser.detail, name)

    @app.get("/api/runs/{name}/trajectories", summary="A page of a run's trajectory records")
    async def run_trajectories(name: str, offset: int = Query(default=0, ge=0),
                               limit: int = Query(default=50, ge=1, le=200)) -> dict[str, Any]:
        return await asyncio.to_thread(browser.trajectories, name, offset, limit)

    @app.get("/api/runs/{name}/trajectories/{position}", summary="One trajectory record, every agent and step")
    async def run_trajectory(name: str, position: int) -> dict[str, Any]:
        return await asyncio.to_thread(browser.trajectory, name, position)

    _add_evidence_route(app, tools, browser)

    @app.get("/api/runs/{name}/charts/{chart}", summary="A chart of a run (PNG)")
    async def run_chart(name: str, chart: str) -> FileResponse:
        return FileResponse(browser.chart(name, chart), media_type="image/png")


def _add_tool_route(app: Any, tools: GraphTools) -> None:
    """``POST /api/tools/{name}``: one graph tool, its arguments checked for depth before parsing."""

    @app.post("/api/tools/{name}", summary="Run one graph tool of `ark mcp` (observation text and structured data)")
    async def tool(name: str, request: Request) -> JSONResponse:
        raw = await request.body()
        text = raw.decode("utf-8", "replace") or "{}"
        depth = json_depth(text)
        if depth > MAX_ARGUMENT_DEPTH:
            return _error(400, f"the body nests {depth:,} levels deep; tool arguments may nest at most "
                               f"{MAX_ARGUMENT_DEPTH}", "invalid_request")
        try:
            arguments = json.loads(text)
        except ValueError:
            return _error(400, "the body must be a JSON object of the tool's arguments", "invalid_request")
        if name not in tools.names:
            return _error(404, f"unknown tool {name!r}; tools: {', '.join(tools.names)}", "unknown_tool")
        given = arguments if isinstance(arguments, dict) else text
        result = await tools.aexecute(name, given)
        payload = {"ok": result.ok, "text": result.text, "data": _jsonable(dumped(result.data)), "error": result.error}
        status = 200 if result.ok else 403 if result.error == "server_setting" else 422
        return JSONResponse(payload, status_code=status)


def _node_page(tools: GraphTools, ref: str, limit: int) -> Any:
    """A node's page data from the graph's newest version (one version for the whole page)."""
    with tools.state.one_version() as (graph, _index):
        try:
            index = resolve_node(graph, ref)
        except NodeNotFound as exc:
            return _error(404, str(exc), "unknown_node")
        data = dumped(tools.execute("get_node", {"node": index}).data) or {}
        data["text"] = graph.text(index) or ""
        data["graph_version"] = graph.info.version
        found = graph.neighbors(index)
        neighbours = []
        for other, relation, outgoing in list(zip(found.nodes, found.relations, found.outgoing, strict=True))[:limit]:
            other = int(other)
            neighbours.append({"index": other, "id": graph.node_id(other), "name": graph.name(other),
                               "type": graph.node_type(other), "relation": graph.relation_types[int(relation)],
                               "direction": "out" if outgoing else "in"})
        data["neighbour_list"] = neighbours
        data["neighbour_total"] = len(found.nodes)
        return data


def _add_evidence_route(app: Any, tools: GraphTools, browser: RunBrowser) -> None:
    """``GET /api/runs/{name}/trajectories/{position}/evidence``: the evidence drawing of a run's question, as the
    page draws it after asking, on the graph's newest version (refused for a run of another graph or version
    where its node indices name other nodes)."""

    def draw(record: dict[str, Any], name: str, top: int) -> Any:
        with tools.state.one_version() as (graph, _index):
            for entry in record.get("ranked") or []:
                index, node_id = entry.get("index"), entry.get("node_id")
                if not (isinstance(index, int) and graph.is_valid_index(index)) or (
                        node_id is not None and graph.node_id(index) != node_id):
                    return _error(409, f"run {name!r} was made on another graph than this server's "
                                       f"({graph.info.label()!r}, version "
                                       f"{graph.info.version}): node {node_id or index!r} is not "
                                       "in it", "other_graph")
            return evidence_drawing(graph, record, top)

    @app.get("/api/runs/{name}/trajectories/{position}/evidence",
             summary="The evidence drawing of one of a run's questions (nodes, edges, SVG)")
    async def run_evidence(name: str, position: int, top: int = Query(default=10, ge=1, le=100)) -> Any:
        record = await asyncio.to_thread(browser.trajectory, name, position)
        return await asyncio.to_thread(draw, record, name, top)


def _add_page_routes(app: Any, methods: dict[str, str]) -> None:
    """The page (``/``, its method list filled in here, so it is never empty while the page loads), its static
    assets, and ``GET /docs``: the API reference rendered from the OpenAPI schema (nothing loaded from outside)."""
    page_html = render_page(methods)

    @app.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(page_html)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        from .api_docs import render_docs

        return HTMLResponse(render_docs(app.openapi()))

    app.mount("/static", StaticFiles(directory=STATIC), name="static")


def render_page(methods: dict[str, str], default: str = "ark") -> str:
    """``static/index.html`` with the method list's options (name, summary as its tooltip; ``default`` chosen)."""
    chosen = default if default in methods else next(iter(methods), "")
    options = "".join(f'<option value="{html.escape(name)}" title="{html.escape(summary)}"'
                      f'{" selected" if name == chosen else ""}>{html.escape(name)}</option>'
                      for name, summary in methods.items())
    return (STATIC / "index.html").read_text(encoding="utf-8").replace("<!-- methods -->", options)


def _jsonable(value: Any) -> Any:
    """Tool data as JSON (pydantic argument models, numpy numbers)."""
    return json.loads(json.dumps(value, default=lambda v: v.model_dump() if hasattr(v, "model_dump") else str(v)))
