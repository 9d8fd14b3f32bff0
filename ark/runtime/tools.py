"""Tools a model calls: one typed spec per tool, structured results, and one dispatcher.

- :class:`ToolSpec`: a tool's name, description (shown to the model), pydantic argument model (the one schema source
  for OpenAI, TRL and MCP schemas) and a JSON example used in error observations.
- :class:`ToolResult`: what a call produced: ``text`` for the model and ``data``, the same result as structure (the
  tool's result model, :attr:`ToolSpec.result_model`, or a dict for refusals), which every other consumer (scripted
  policies, analysis, rewards) reads instead of parsing the text; :func:`dumped` makes its dict where it leaves.
- :class:`ToolSet`: the tools offered in one trajectory bound to their handlers. :meth:`ToolSet.execute` never raises
  for bad input: malformed JSON, unknown tools, invalid arguments and arguments over the size limits come back as an
  observation that says what to send instead, with an error kind in ``ToolResult.error``. It also keeps the
  trajectory's call telemetry: repeated calls (the same tool with the same arguments, in any key order) and invalid
  calls (see :data:`INVALID_CALL_ERRORS`), counted into the telemetry record the tool family declares.
- :class:`ToolboxBase`: what a tool-calling loop drives: one trajectory's :class:`ToolSet` plus the domain state its
  handlers keep (an answer list, touched nodes, a sandbox); each method's toolbox is such a subclass.

Size limits (documented to the model by the refusal itself): a call's raw arguments may hold at most
:data:`MAX_ARGUMENT_CHARS` characters and each text value in them at most :data:`MAX_TEXT_ARGUMENT_CHARS` (the
longest STaRK or phenopackets question is about 640). Longer arguments are refused before they are parsed or
searched, so a runaway model output costs microseconds, not a search over megabytes of query text; the trajectory
keeps only their first :data:`KEPT_REFUSED_ARGUMENT_CHARS` characters and says so (:func:`kept_arguments`), so one
runaway call does not make every record of the run megabytes long. Arguments nested
deeper than :data:`MAX_ARGUMENT_DEPTH` arrays and objects are refused before they are parsed too (Python's JSON
reader recurses once per level and raises ``RecursionError`` at about a thousand).

A method adds a tool by writing a module with its spec and handler and listing it where it builds its ``ToolSet``.
"""

from __future__ import annotations

import copy
import inspect
import json
import re
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import accumulate
from typing import Generic, Never, NotRequired, Protocol, TypedDict, TypeVar, cast, overload

from pydantic import BaseModel, ConfigDict, ValidationError

from ark.llm.messages import ToolCall

from ..text import did_you_mean

# Error kinds of ToolResult.error raised by the dispatcher itself; tools add their own (unknown_node, budget, ...).
INVALID_JSON = "invalid_json"
INVALID_ARGUMENTS = "invalid_arguments"
UNKNOWN_TOOL = "unknown_tool"
ARGUMENTS_TOO_LONG = "arguments_too_long"
ARGUMENTS_TOO_DEEP = "arguments_too_deep"
# Error kinds tools share: an argument names a node, or a node type or relation, that the graph does not have.
UNKNOWN_NODE = "unknown_node"
UNKNOWN_NAME = "unknown_name"
# An argument names a node of the graph that no observation of this trajectory showed (an answer the model never saw).
UNSEEN_NODE = "unseen_node"
BUDGET = "budget"  # a well-formed call refused because the trajectory spent a budget (not an invalid call)
# The invalid-call rule: a call is invalid when it is refused for what it asked (the dispatcher's refusals, arguments
# naming nothing in the graph, answers naming nodes no observation showed), not when a well-formed call fails while
# it runs (a spent budget, code that raised, a query the database refused, a proposal the graph does not confirm).
INVALID_CALL_ERRORS = frozenset({INVALID_JSON, INVALID_ARGUMENTS, UNKNOWN_TOOL, ARGUMENTS_TOO_LONG,
                                 ARGUMENTS_TOO_DEEP, UNKNOWN_NODE, UNKNOWN_NAME, UNSEEN_NODE})

MAX_ARGUMENT_CHARS = 50_000  # a call's raw JSON arguments
MAX_TEXT_ARGUMENT_CHARS = 2_000  # each text value in them (queries, reasoning, names)
MAX_ARGUMENT_DEPTH = 64  # arrays and objects inside each other (ARK's own tools need 3)
KEPT_REFUSED_ARGUMENT_CHARS = 2_000  # what a trajectory keeps of arguments refused as too long (see kept_arguments)
_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")
_BRACKET_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
# json.dumps(value, sort_keys=True, default=str), its encoder made once (json.dumps makes one per call: ~2 us of a
# tool call's repeat check)
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, default=str)


JSONSchema = dict[str, object]  # a JSON schema (or a tool schema of the OpenAI protocol) as JSON


class McpToolSchema(TypedDict):
    """An MCP tool descriptor: ``outputSchema`` only for a tool that declares its result model."""

    name: str
    description: str
    inputSchema: JSONSchema
    outputSchema: NotRequired[JSONSchema]


class Refusal(BaseModel):
    """The structured result of a refused call: its error kind (``error``) and what the refusal names (the tool, the
    argument, the size and the limit, the node or names the graph lacks); written with only the keys given."""

    model_config = ConfigDict(extra="forbid")

    error: str
    tool: str | None = None
    argument: str | None = None
    size: int | None = None
    limit: int | None = None
    node: int | str | None = None
    node_index: int | None = None
    node_types: list[str] | None = None
    edge_types: list[str] | None = None


# A tool's structured result: its result model (declared beside its argument model), a Refusal, or a dict (a
# plugin's tool not typed). ``dumped`` gives the dict where it leaves the process (records, JSON, MCP).
ToolData = BaseModel | Mapping[str, object]


def dumped(data: ToolData | None) -> dict[str, object] | None:
    """``data`` as the dict that is written (a result model without the optional keys it was not given)."""
    if isinstance(data, BaseModel):
        return data.model_dump(exclude_unset=True)
    return data if data is None or isinstance(data, dict) else dict(data)


@dataclass
class ToolResult:
    """One tool call's outcome: the observation text and its structured twin."""

    text: str
    data: ToolData = field(default_factory=dict)
    ok: bool = True
    error: str | None = None
    node_indices: list[int] = field(default_factory=list)  # nodes this call showed or touched
    finished: bool = False  # the call ends the trajectory

    @classmethod
    def failure(cls, text: str, error: str, *, tool: str | None = None, argument: str | None = None,
                size: int | None = None, limit: int | None = None, node: int | str | None = None,
                node_index: int | None = None, node_types: list[str] | None = None,
                edge_types: list[str] | None = None) -> ToolResult:
        """A refused call: the explanation for the model, and the error kind in both ``error`` and ``data`` (a
        :class:`Refusal` holding the details given)."""
        given = {"tool": tool, "argument": argument, "size": size, "limit": limit, "node": node,
                 "node_index": node_index, "node_types": node_types, "edge_types": edge_types}
        details = {key: value for key, value in given.items() if value is not None}
        refusal = Refusal.model_validate({"error": error, **details})
        return cls(text, data=refusal, ok=False, error=error)


@dataclass(frozen=True)
class ToolSpec:
    """A tool: its name, what it does (shown to the model), its argument model and an example call."""

    name: str
    description: str
    args_model: type[BaseModel]
    example: str = "{}"
    result_model: type[BaseModel] | None = None  # the typed result of a successful call (MCP's outputSchema)

    def parameters(self, drop: Iterable[str] = ()) -> JSONSchema:
        """JSON schema of the arguments, flattened for function calling (no $refs, no titles, no null unions)."""
        clean = copy.deepcopy(_arguments_schema(self.args_model))
        properties, required = clean.get("properties"), clean.get("required")
        for name in drop:
            if isinstance(properties, dict):
                properties.pop(name, None)
            if isinstance(required, list) and name in required:
                required.remove(name)
        return clean

    def openai_schema(self, drop: Iterable[str] = ()) -> JSONSchema:
        """The chat-completions ``tools`` entry (also TRL's format)."""
        return {"type": "function",
                "function": {"name": self.name, "description": self.description, "parameters": self.parameters(drop)}}

    def mcp_schema(self, drop: Iterable[str] = ()) -> McpToolSchema:
        """The MCP tool descriptor (``name``, ``description``, ``inputSchema``, and ``outputSchema``, the JSON
        schema of the structured content of a successful call, when the tool declares its result model)."""
        schema: McpToolSchema = {"name": self.name, "description": self.description,
                                 "inputSchema": self.parameters(drop)}
        if self.result_model is not None:
            schema["outputSchema"] = self.result_model.model_json_schema(by_alias=True)
        return schema


# A handler takes its spec's argument model (validated) and returns the result, or (a tool that awaits, such as a
# server's retrieval) a coroutine of it, which only ToolSet.aexecute runs. Its parameter is typed Never so that a
# handler of any argument model fits; the dispatcher calls it with the model its spec validated (RunHandler).
Outcome = ToolResult | Awaitable[ToolResult]
Handler = Callable[[Never], Outcome]
RunHandler = Callable[[BaseModel], Outcome]


@dataclass(frozen=True)
class BoundTool:
    """A spec offered in a trajectory: its handler and the parameters hidden from the model (ablations)."""

    spec: ToolSpec
    handler: Handler
    hidden: frozenset[str] = frozenset()


class CallCounts(Protocol):
    """The counters a :class:`ToolSet` keeps in a trajectory's telemetry record (which a tool family declares, with
    these two fields where its records list them, beside the counters its own tools keep)."""

    repeated_calls: int
    invalid_calls: int

    def to_dict(self) -> dict[str, int]: ...


@dataclass
class TelemetryRecord:
    """A telemetry record: counters written as a dict in their declared order (trajectory files keep that order)."""

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class CallTelemetry(TelemetryRecord):
    """The telemetry of a tool set whose tools count nothing of their own."""

    repeated_calls: int = 0
    invalid_calls: int = 0


TelemetryT = TypeVar("TelemetryT", bound=CallCounts)


class ToolSet(Generic[TelemetryT]):
    """The tools of one trajectory: their schemas, the dispatch of raw calls to handlers (with the size limits of the
    module doc) and the call telemetry (``telemetry``; :class:`CallTelemetry` unless a family passes its own).

    ``per_trajectory=False`` is for a server's tool set, whose calls are independent of each other: it remembers no
    earlier call (no repeat detection), so a long-lived server does not grow."""

    @overload
    def __init__(self: ToolSet[CallTelemetry], tools: Sequence[BoundTool], telemetry: None = None, *,
                 per_trajectory: bool = True, max_argument_chars: int = MAX_ARGUMENT_CHARS,
                 max_text_argument_chars: int = MAX_TEXT_ARGUMENT_CHARS) -> None: ...

    @overload
    def __init__(self, tools: Sequence[BoundTool], telemetry: TelemetryT, *, per_trajectory: bool = True,
                 max_argument_chars: int = MAX_ARGUMENT_CHARS,
                 max_text_argument_chars: int = MAX_TEXT_ARGUMENT_CHARS) -> None: ...

    def __init__(self, tools: Sequence[BoundTool], telemetry: TelemetryT | None = None, *, per_trajectory: bool = True,
                 max_argument_chars: int = MAX_ARGUMENT_CHARS,
                 max_text_argument_chars: int = MAX_TEXT_ARGUMENT_CHARS) -> None:
        self.tools = {tool.spec.name: tool for tool in tools}
        self.telemetry: TelemetryT = cast(TelemetryT, CallTelemetry() if telemetry is None else telemetry)
        self.per_trajectory = per_trajectory
        self.max_argument_chars = max_argument_chars
        self.max_text_argument_chars = max_text_argument_chars
        self._seen_calls: set[str] = set()

    @property
    def names(self) -> list[str]:
        return list(self.tools)

    @property
    def bound(self) -> list[BoundTool]:
        """The tools with their handlers, in the order offered."""
        return list(self.tools.values())

    def openai_schemas(self) -> list[JSONSchema]:
        return [tool.spec.openai_schema(tool.hidden) for tool in self.tools.values()]

    def mcp_schemas(self) -> list[McpToolSchema]:
        return [tool.spec.mcp_schema(tool.hidden) for tool in self.tools.values()]

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run tool ``name`` with its raw JSON ``arguments``; every bad call becomes an explanatory observation.
        Counts the call in ``telemetry``: invalid when refused with an error kind of :data:`INVALID_CALL_ERRORS`,
        repeated when an earlier call of this trajectory named the same tool with the same arguments. A tool whose
        handler is asynchronous is run by :meth:`aexecute` (``TypeError`` here)."""
        result = self._dispatch(str(name or ""), arguments)
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            raise TypeError(f"tool {name!r} is asynchronous: run it with aexecute")
        return self._counted(result)

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """:meth:`execute` for any tool: an asynchronous handler is awaited, the others run as they are."""
        result = self._dispatch(str(name or ""), arguments)
        return self._counted(await result if inspect.isawaitable(result) else result)

    def _counted(self, result: ToolResult) -> ToolResult:
        if not result.ok and result.error in INVALID_CALL_ERRORS:
            self.telemetry.invalid_calls += 1
        return result

    def _dispatch(self, name: str, arguments: str | dict | None) -> ToolResult | Awaitable[ToolResult]:
        tool = self.tools.get(name)
        if tool is None:
            return ToolResult.failure(f"Unknown tool {name!r}{did_you_mean(name, self.tools)}. Available tools: "
                                      f"{', '.join(sorted(self.tools))}.", UNKNOWN_TOOL, tool=name)
        if isinstance(arguments, str) and len(arguments) > self.max_argument_chars:
            return ToolResult.failure(
                f"The arguments of {name} are {len(arguments):,} characters long; the limit is "
                f"{self.max_argument_chars:,} characters. Send shorter arguments, such as {tool.spec.example}.",
                ARGUMENTS_TOO_LONG, size=len(arguments), limit=self.max_argument_chars)
        raw, problem = parse_arguments(arguments)
        self._note_repeat(name, raw if problem is None else arguments)
        if problem is not None and problem.startswith("nested"):
            return ToolResult.failure(f"The arguments of {name} are {problem}. Send a flat JSON object such as "
                                      f"{tool.spec.example}.", ARGUMENTS_TOO_DEEP, limit=MAX_ARGUMENT_DEPTH)
        if problem is not None:
            return ToolResult.failure(f"Could not read the arguments of {name} ({problem}). Send a JSON object such "
                                      f"as {tool.spec.example}.", INVALID_JSON)
        too_long = longest_text(raw, self.max_text_argument_chars)
        if too_long is not None:
            where, size = too_long
            leaf = where.rsplit(".", 1)[-1]
            hint = " (a few keywords)" if leaf == "query" else ""
            return ToolResult.failure(
                f"The {where} argument of {name} is {size:,} characters long; text arguments are limited to "
                f"{self.max_text_argument_chars:,} characters. Send a shorter {leaf}{hint}.", ARGUMENTS_TOO_LONG,
                argument=where, size=size, limit=self.max_text_argument_chars)
        try:
            args = tool.spec.args_model.model_validate(raw)
        except ValidationError as exc:
            return ToolResult.failure(f"Invalid arguments for {name}: {describe_validation_error(exc)}. "
                                      f"Example: {tool.spec.example}.", INVALID_ARGUMENTS)
        return cast(RunHandler, tool.handler)(args)  # the model its spec validated (see Handler)

    def _note_repeat(self, name: str, arguments: object) -> None:
        """Count a call of a known tool, read within the size limits, that this trajectory made before: the same
        arguments in any key order (unreadable arguments compared as the text sent)."""
        if not self.per_trajectory:
            return
        key = name + "\x00" + (arguments if isinstance(arguments, str) else _CANONICAL_JSON.encode(arguments))
        if key in self._seen_calls:
            self.telemetry.repeated_calls += 1
        self._seen_calls.add(key)


class ToolboxBase(Generic[TelemetryT]):
    """One trajectory's tools and the domain state their handlers keep; the executor a tool-calling loop drives
    (:class:`ark.runtime.loop.ToolExecutor`). A subclass builds ``tools`` in its constructor from its handlers, bound
    to itself, and sets ``finished`` when a tool ends the trajectory."""

    tools: ToolSet[TelemetryT]
    finished: bool = False

    @property
    def names(self) -> list[str]:
        return self.tools.names

    @property
    def telemetry(self) -> TelemetryT:
        """This trajectory's call telemetry (kept by the tool set, added to by the tools)."""
        return self.tools.telemetry

    def openai_tools(self) -> list[JSONSchema]:
        return self.tools.openai_schemas()

    def mcp_tools(self) -> list[McpToolSchema]:
        return self.tools.mcp_schemas()

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """Run tool ``name`` with its raw JSON ``arguments``; every failure becomes an explanatory observation."""
        return self.tools.execute(name, arguments)


def kept_arguments(raw: str, result: ToolResult, keep: int = KEPT_REFUSED_ARGUMENT_CHARS) -> str:
    """The raw arguments a trajectory keeps of a call: as sent, except arguments refused as too long
    (:data:`ARGUMENTS_TOO_LONG`) and longer than ``keep``, which are cut to their first ``keep`` characters and a
    marker stating the cut, e.g. ``...[cut: 6,291,456 characters; refused: over the 50,000-character limit]``."""
    if result.error != ARGUMENTS_TOO_LONG or len(raw) <= keep:
        return raw
    refusal = result.data if isinstance(result.data, Refusal) else Refusal(error=ARGUMENTS_TOO_LONG)
    limit, argument = refusal.limit, refusal.argument
    over = f"over the {limit:,}-character limit" if isinstance(limit, int) else "too long"
    if argument:
        over += f" of a text argument ({argument})"
    return f"{raw[:keep]}…[cut: {len(raw):,} characters; refused: {over}]"


def longest_text(value: object, limit: int, where: str = "") -> tuple[str, int] | None:
    """``(dotted path, length)`` of the first text value in ``value`` longer than ``limit``, or None."""
    if isinstance(value, str):
        return (where or "arguments", len(value)) if len(value) > limit else None
    if isinstance(value, dict):
        items = ((str(key), item) for key, item in value.items())
    elif isinstance(value, list):
        items = ((str(index), item) for index, item in enumerate(value))
    else:
        return None
    for key, item in items:
        found = longest_text(item, limit, f"{where}.{key}" if where else key)
        if found is not None:
            return found
    return None


# Every way the standard library's reader refuses a text: invalid JSON or UTF-8, an integer longer than Python
# converts (ValueError), nesting past the recursion limit. Model-written text gets an observation for each.
UNREADABLE_JSON = (ValueError, RecursionError)


def json_depth(text: str) -> int:
    """How deep arrays and objects nest in JSON ``text``, counted without parsing it (strings skipped).

    Written by hand: the standard library's reader has no depth limit (it recurses until ``RecursionError``), and
    this is two regular-expression passes and one running sum in C: under 15 ms for 50,000 characters."""
    brackets = _NOT_A_BRACKET.sub("", _JSON_STRING.sub("", text))
    return max(accumulate(map(_BRACKET_STEP.__getitem__, brackets)), default=0)


def parse_arguments(arguments: str | dict | None,
                    max_depth: int = MAX_ARGUMENT_DEPTH) -> tuple[dict[str, object] | None, str | None]:
    """``(arguments as a dict, None)``, or ``(None, what is wrong)`` for text that is not a JSON object or nests
    deeper than ``max_depth`` (checked before parsing)."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}, None
    if isinstance(arguments, dict):
        return arguments, None
    # nesting needs an opening bracket a level: text with no more of them than max_depth (a tool call's arguments)
    # cannot nest deeper, and is not scanned (~3 us a call)
    openings = arguments.count("{") + arguments.count("[")
    depth = json_depth(arguments) if openings > max_depth else 0
    if depth > max_depth:
        return None, f"nested {depth:,} levels deep; at most {max_depth} levels of arrays and objects are read"
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON: {exc.msg} at position {exc.pos}"
    except UNREADABLE_JSON as exc:  # an integer too long to convert, say
        return None, f"unreadable JSON: {str(exc)[:200]}"
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    return value, None


def arguments_of(call: ToolCall) -> dict[str, object]:
    """The parsed arguments of a tool call (``{}`` when they are not a JSON object)."""
    value, _ = parse_arguments(call.arguments)
    return value if value is not None else {}


def describe_validation_error(exc: ValidationError, limit: int = 5) -> str:
    """The first ``limit`` problems of a pydantic error as ``field: message`` parts."""
    parts = []
    for error in exc.errors()[:limit]:
        where = ".".join(str(p) for p in error["loc"]) or "arguments"
        message = "missing required field" if error["type"] == "missing" else error["msg"]
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def decode_json_string(value: object) -> object:
    """Models sometimes double-encode nested arguments as a JSON string; accept that (a pydantic before-validator)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except UNREADABLE_JSON:  # not JSON, or JSON the reader refuses: the validator reports the string
            return value
    return value


_SCHEMAS: weakref.WeakKeyDictionary[type[BaseModel], JSONSchema] = weakref.WeakKeyDictionary()


def _arguments_schema(model: type[BaseModel]) -> JSONSchema:
    """The flattened JSON schema of an argument model, made once per model: pydantic's schema generation costs
    ~3 M instructions a tool, and every trajectory asks for its tools' schemas. Callers get copies."""
    clean = _SCHEMAS.get(model)
    if clean is None:
        schema = model.model_json_schema()
        defs = schema.get("$defs")
        cleaned = _clean_schema(schema, defs if isinstance(defs, dict) else {})
        clean = cleaned if isinstance(cleaned, dict) else {}
        clean.setdefault("properties", {})
        _SCHEMAS[model] = clean
    return clean


def _clean_schema(node: object, defs: Mapping[str, object]) -> object:
    if isinstance(node, list):
        return [_clean_schema(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _clean_schema(defs[ref.rsplit("/", 1)[-1]], defs)
    out: JSONSchema = {}
    any_of = node.get("anyOf")
    if isinstance(any_of, list):
        non_null = [option for option in any_of if not (isinstance(option, dict) and option.get("type") == "null")]
        only = _clean_schema(non_null[0], defs) if len(non_null) == 1 else None
        if isinstance(only, dict):
            out.update(only)
        else:
            out["anyOf"] = _clean_schema(non_null, defs)
    for key, value in node.items():
        if key in ("title", "$defs", "anyOf") or (key == "default" and value is None):
            continue
        if key == "properties" and isinstance(value, dict):  # keys here are argument names, not schema keywords
            out[key] = {name: _clean_schema(sub, defs) for name, sub in value.items()}
        else:
            out[key] = _clean_schema(value, defs)
    return out
