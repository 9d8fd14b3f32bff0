"""``ark mcp GRAPH`` (the graph tools for outside agents, extra ``mcp``) and ``ark serve GRAPH`` (the local web app,
extra ``serve``). Both listen on 127.0.0.1 unless given ``--allow-remote`` and a token (:mod:`ark.serve.binding`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .common import GRAPH_HELP, err_console, fail, guarded, load_graph, one_line

if TYPE_CHECKING:
    from ..serve.graph_tools import GraphTools

HOST_HELP = "Address to listen on. Loopback only unless --allow-remote is given with a token."
REMOTE_HELP = "Accept connections from other machines (needs --token or ARK_SERVE_TOKEN; every request must carry it)."
TOKEN_HELP = "The token requests must carry (Authorization: Bearer TOKEN); default: ARK_SERVE_TOKEN."
MODELS_HELP = ("Let a request choose its chat model and endpoint (model.model, model.base_url); without it they are "
               "the server's and a request naming them gets 403. The server's API key never goes to another endpoint.")
SET_HELP = ("A method option the server sets, METHOD.KEY=VALUE, e.g. --set graphscout.sandbox.isolation=bwrap "
            "(repeatable). Requests may set only each method's per-request options (GET /api/methods).")
CONFIG_HELP = ("TOML file of server-side method options, one table per method (e.g. a graphscout.sandbox table); "
               "--set wins.")


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def register(app: typer.Typer) -> None:
    app.command("mcp")(guarded(mcp))
    app.command("serve")(guarded(serve))


def _require(module: str, extra: str, command: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        fail(f"ark {command} needs the optional dependency {module!r}: pip install 'ark-kg[{extra}]'")


def _model_settings(model: str | None, base_url: str | None, temperature: float | None, offline: bool) -> Any:
    """The server's default model settings, checked now (a half-given model is an error at start, not per request)."""
    from ..llm import resolve_settings
    from ..serve.questions import ModelSettings
    from .common import settings_problem

    if not offline:
        try:  # resolve_settings ignores the overrides left None
            settings = resolve_settings(model=model, base_url=base_url, temperature=temperature)
        except ValueError as exc:
            fail(str(exc))
        problem = settings_problem(settings, model, base_url)
        if problem is not None:
            fail(problem)
        if not settings.configured():
            err_console.print("[yellow]No LLM configured: LLM methods use the offline policy (a deterministic "
                              "baseline, not a model) unless a request names a model and endpoint "
                              "(--allow-request-models).[/]")
    return ModelSettings(model=model, base_url=base_url, temperature=temperature, offline=offline)


def _server_options(sets: list[str] | None, config: Path | None) -> dict[str, dict[str, Any]]:
    """The server's method options (``--config`` tables under ``--set METHOD.KEY=VALUE``), each method's checked
    now: a bad one fails at start, not per request."""
    import tomllib

    from ..methods import MethodError, get_method_spec
    from ..methods.options import merge_options, parse_set_values

    try:
        from_file = tomllib.loads(config.read_text(encoding="utf-8")) if config is not None else {}
        layers = merge_options(from_file, parse_set_values(sets or []))
        for method, values in layers.items():
            if not isinstance(values, dict):
                raise MethodError(f"server option {method!r}: expected METHOD.KEY=VALUE or a [METHOD] table")
            get_method_spec(method).make_options(values)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        fail(f"--config {config}: not a readable TOML file ({one_line(str(exc))})")
    except MethodError as exc:
        fail(str(exc))
    return layers


def _graph_tools(graph_name: str, max_rows: int, max_chars: int, defaults: Any, allow_request_models: bool,
                 server_options: dict[str, dict[str, Any]]) -> GraphTools:
    from ..index import open_index
    from ..serve.graph_tools import GraphTools, ResultLimits
    from ..serve.questions import QuestionService

    graph = load_graph(graph_name, quiet=True)
    index = open_index(graph, kind="bm25", progress=err_console.is_terminal)
    limits = ResultLimits(max_rows=max_rows, max_chars=max_chars, default_rows=min(10, max_rows))
    questions = QuestionService(graph, defaults, allow_request_models=allow_request_models,
                                server_options=server_options)
    return GraphTools(graph, index, limits, questions=questions)


def _checked_token(host: str, allow_remote: bool, token: str | None) -> str | None:
    from ..serve.binding import BindingError, check_binding

    try:
        return check_binding(host, allow_remote, token)
    except BindingError as exc:
        fail(str(exc))


def _check_run_folders(runs: list[Path] | None) -> None:
    for folder in runs or []:
        if not folder.is_dir():
            fail(f"--runs {folder}: not a folder")


def _announce(what: str, token: str | None) -> Any:
    def announce(url: str) -> None:
        note = " (requests must carry the token)" if token else ""
        err_console.print(f"{what} listening on {url}{note}; Ctrl-C stops it.", highlight=False, soft_wrap=True)

    return announce


def mcp(
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)],
    transport: Annotated[Transport, typer.Option(help="stdio (an MCP client starts this command) or http "
                                                      "(streamable HTTP at /mcp).")] = Transport.stdio,
    host: Annotated[str, typer.Option(help=HOST_HELP)] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="HTTP port (0: any free port).")] = 8765,
    allow_remote: Annotated[bool, typer.Option("--allow-remote", help=REMOTE_HELP)] = False,
    token: Annotated[str | None, typer.Option(help=TOKEN_HELP)] = None,
    max_rows: Annotated[int, typer.Option(min=1, max=500, help="Most rows (nodes, paths) in one result.")] = 50,
    max_chars: Annotated[int, typer.Option(min=500, max=200_000, help="Most characters in one result's text.")]
    = 6000,
    model: Annotated[str | None, typer.Option(help="The retrieve tool's chat model (else ARK_MODEL).")] = None,
    base_url: Annotated[str | None, typer.Option(help="Its OpenAI-compatible endpoint (else OPENAI_BASE_URL).")]
    = None,
    temperature: Annotated[float | None, typer.Option(help="Its sampling temperature.")] = None,
    offline: Annotated[bool, typer.Option(help="The retrieve tool runs LLM methods with the offline policy.")]
    = False,
    runs: Annotated[list[Path] | None, typer.Option(
        "--runs", help="A folder of run folders (or one run folder) to serve as resources (repeatable).")] = None,
    allow_request_models: Annotated[bool, typer.Option("--allow-request-models", help=MODELS_HELP)] = False,
    sets: Annotated[list[str] | None, typer.Option("--set", metavar="METHOD.KEY=VALUE", help=SET_HELP)] = None,
    config: Annotated[Path | None, typer.Option("--config", help=CONFIG_HELP)] = None,
) -> None:
    """Serve GRAPH's tools to MCP clients: search, neighbourhoods, nodes, the schema, paths between two nodes and
    retrieve (the evidence any method finds); ARK's strategy as the prompt 'ark'; the schema, node pages and run
    folders as resources. Read-only; results are capped at --max-rows and --max-chars. See docs/mcp.md."""
    _require("mcp", "mcp", "mcp")
    checked = _checked_token(host, allow_remote, token) if transport is Transport.http else None
    _check_run_folders(runs)
    defaults = _model_settings(model, base_url, temperature, offline)
    tools = _graph_tools(graph_name, max_rows, max_chars, defaults, allow_request_models,
                         _server_options(sets, config))
    from ..serve.mcp_server import build_mcp_server, http_app

    server = build_mcp_server(tools, runs=list(runs or []))
    if transport is Transport.stdio:
        err_console.print(f"MCP server over stdio: {len(tools.names)} graph tools, the answer tools, ARK's prompt and "
                          f"the graph's resources on {graph_name}.", highlight=False)
        try:
            server.run("stdio")
        finally:
            _end_sandboxes()
        return
    from ..serve.binding import serve_app

    try:
        serve_app(http_app(server, host), host, port, _announce("MCP server (streamable HTTP)", checked), path="/mcp",
                  token=checked)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {one_line(str(exc))}")
    finally:
        _end_sandboxes()


def serve(
    graph_name: Annotated[str, typer.Argument(metavar="GRAPH", help=GRAPH_HELP)],
    runs: Annotated[list[Path] | None, typer.Option(
        "--runs", help="A folder of run folders (or one run folder) to browse (repeatable); default: none.")] = None,
    host: Annotated[str, typer.Option(help=HOST_HELP)] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free port).")] = 8000,
    allow_remote: Annotated[bool, typer.Option("--allow-remote", help=REMOTE_HELP)] = False,
    token: Annotated[str | None, typer.Option(help=TOKEN_HELP)] = None,
    model: Annotated[str | None, typer.Option(help="Default chat model of LLM methods (else ARK_MODEL).")] = None,
    base_url: Annotated[str | None, typer.Option(help="Its OpenAI-compatible endpoint (else OPENAI_BASE_URL).")]
    = None,
    temperature: Annotated[float | None, typer.Option(help="Its sampling temperature.")] = None,
    offline: Annotated[bool, typer.Option(help="LLM methods use the offline policy unless a request names a "
                                               "model (with --allow-request-models).")] = False,
    allow_request_models: Annotated[bool, typer.Option("--allow-request-models", help=MODELS_HELP)] = False,
    sets: Annotated[list[str] | None, typer.Option("--set", metavar="METHOD.KEY=VALUE", help=SET_HELP)] = None,
    config: Annotated[Path | None, typer.Option("--config", help=CONFIG_HELP)] = None,
) -> None:
    """A local web app over GRAPH: ask with any method and watch each agent's steps as they happen, read the fused
    ranking with its evidence, open nodes, browse run folders. JSON API with OpenAPI docs at /docs."""
    _require("fastapi", "serve", "serve")
    _require("uvicorn", "serve", "serve")
    checked = _checked_token(host, allow_remote, token)
    _check_run_folders(runs)
    defaults = _model_settings(model, base_url, temperature, offline)
    tools = _graph_tools(graph_name, 50, 6000, defaults, allow_request_models, _server_options(sets, config))
    from ..serve.binding import serve_app
    from ..serve.webapp import create_app

    app = create_app(tools, runs=list(runs or []))
    try:
        serve_app(app, host, port, _announce("ARK web app", checked), token=checked)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {one_line(str(exc))}")
    finally:
        _end_sandboxes()


def _end_sandboxes() -> None:
    """End the server's warm code-sandbox workers (waited for) and say what they cost: their CPU time is outside
    this process's own."""
    from ..methods.graphscout.sandbox_pool import close_all_pools
    from ..sandbox.usage import SANDBOX_USAGE

    close_all_pools()
    usage = SANDBOX_USAGE.since()
    if usage is not None:
        err_console.print(f"[dim]Code sandboxes: {usage.workers_started} worker(s) started, "
                          f"{usage.resets_in_place} reset(s) in place, {usage.worker_cpu_s:.2f} CPU-s.[/]",
                          highlight=False)
