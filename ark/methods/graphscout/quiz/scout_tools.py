"""The LLM scout's tools (GraphScout §3.3.3): a node retriever, read-only Cypher over the part-1 database, and
``report_question``, which checks a proposed question against the graph before accepting it.

``report_question`` enforces the paper's answer rules (Appendix B.3.3) by running the scout's verification query
and deriving the answer from its rows: an entity is the one row's node; a boolean is one row's count or truth
value (yes iff > 0, a witness node named for yes); a number is one row with one number; a set is 2 to ``max_set``
rows of nodes or names. The reported answer must equal what the query gives (answers normalised by type), the
clue and witness ids must be nodes, and the question text must not show internal node ids. What is accepted is
the graph's answer, not the model's wording of it.

Every call counts against the episode's budget (10 calls, the paper's T); the call that spends it ends the episode.
"""

from __future__ import annotations

import asyncio
import json
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ....graph import KnowledgeGraph
from ....metrics.answers import ANSWER_TYPES, exact_match
from ....runtime.tools import (
    INVALID_ARGUMENTS,
    BoundTool,
    CallTelemetry,
    ToolboxBase,
    ToolResult,
    ToolSet,
    ToolSpec,
    decode_json_string,
    parse_arguments,
)
from ..tools.node_id_retriever import list_nodes
from .objective import MAX_SET

if TYPE_CHECKING:
    from ....index.graph_index import TextIndex

BUDGET = 10
ROWS_SHOWN = 25


@dataclass
class CypherOutcome:
    """Rows of one query (dicts), the graph nodes they hold, or an error message."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    node_indices: list[int] = field(default_factory=list)
    error: str | None = None
    truncated: bool = False


class CypherRunner(Protocol):
    def run(self, cypher: str, params: dict[str, Any]) -> CypherOutcome: ...

    def close(self) -> None: ...


class DirectCypher:
    """Queries on ``engine`` out of this process: an in-process ladybug engine is wrapped in an out-of-process one
    (:func:`ark.graphdb.isolated.isolate`, closed with this runner), where a query that crashes or outruns the
    engine costs that query; an isolated or Neo4j engine is used as it is."""

    def __init__(self, engine: Any, max_rows: int = 200) -> None:
        from ....graphdb.isolated import isolate

        self.engine = isolate(engine)
        self._owned = self.engine is not engine
        self.max_rows = max_rows

    def run(self, cypher: str, params: dict[str, Any]) -> CypherOutcome:
        from ....graphdb import CypherError

        try:
            result = self.engine.query(cypher, params, limit=self.max_rows)
        except CypherError as exc:
            return CypherOutcome(error=f"{type(exc).__name__}: {exc}")
        return CypherOutcome(result.records(), list(result.node_indices), truncated=result.truncated)

    def close(self) -> None:
        """Close the wrapper this runner made (a given engine stays the caller's)."""
        if self._owned:
            self._owned = False
            self.engine.close()


class SandboxCypher:
    """Queries inside one sandboxed interpreter (:class:`ark.sandbox.CodeSandbox`, opened on first use): a runaway
    query dies with the worker, never in this process."""

    def __init__(self, engine: Any, limits: Any = None, isolation: str = "auto", max_rows: int = 200) -> None:
        self.engine = engine
        self.limits = limits
        self.isolation = isolation
        self.max_rows = max_rows
        self._sandbox: Any = None

    def run(self, cypher: str, params: dict[str, Any]) -> CypherOutcome:
        if self._sandbox is None:
            from ....sandbox import CodeSandbox

            self._sandbox = CodeSandbox(self.engine, self.limits, isolation=self.isolation)
        # The query and parameters travel as JSON literals, never pasted into code.
        code = (f"import json\n__rows = cypher(json.loads({json.dumps(cypher)!r}), json.loads({json.dumps(params)!r}),"
                f" limit={self.max_rows + 1})\nprint(json.dumps(__rows, default=str))")
        ran = self._sandbox.run(code)
        if not ran.ok:
            return CypherOutcome(error=ran.error or ran.error_kind or "the query failed")
        if ran.output_truncated:
            return CypherOutcome(error="the result is too large to show: aggregate, or return fewer rows and "
                                       "columns (LIMIT, names instead of whole nodes)")
        try:
            rows = json.loads(ran.stdout)
        except json.JSONDecodeError:
            return CypherOutcome(error="could not read the query's result")
        truncated = len(rows) > self.max_rows
        return CypherOutcome(rows[: self.max_rows], ran.node_indices, truncated=truncated)

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.close()
            self._sandbox = None


# ------------------------------------------------------------------------------------------------ tool arguments
class RetrieverArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    queries: list[str] = Field(description="Names or short descriptions to look up, e.g. ['Marfan syndrome'].")
    topk: int = Field(default=3, ge=1, le=10, description="Nodes returned per query (1-10).")


class CypherArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    query: str = Field(description="One read-only Cypher statement; use $name placeholders for values.")
    params: dict[str, Any] = Field(default_factory=dict, description="Values of the $name placeholders.")


class ReportArgs(BaseModel):
    model_config = ConfigDict(extra="ignore")
    question: str = Field(description="The question, in plain English, naming entities by their names.")
    answer: str = Field(description="The answer: a name, 'yes'/'no', a number, or names separated by commas.")
    answer_type: str = Field(description="entity, boolean, number or set.")
    clue_ids: list[str] = Field(description="Ids of the nodes used to build the question and its answer.")
    verification_cypher: str = Field(description="A read-only query whose rows give the answer (see the rules).")
    verification_params: dict[str, Any] = Field(default_factory=dict, description="Its $name values.")
    witness_id: str | None = Field(default=None, description="For a 'yes' answer: the id of one witness node.")


class ScoutHit(BaseModel):
    """One node the retriever listed: the query, the node (index, id, name, type) and its similarity."""

    query: str
    index: int
    node_id: str
    name: str
    type: str
    score: float


class ScoutRetrieverResult(BaseModel):
    results: list[ScoutHit]


class CypherRowsResult(BaseModel):
    """The rows shown (at most 25), how many the query gave and whether the runner cut them."""

    rows: list[dict[str, object]]
    row_count: int
    truncated: bool


class CypherFailure(BaseModel):
    """A query the database refused: ``error`` is ``cypher``, ``message`` what it said."""

    error: str
    message: str


RETRIEVER = ToolSpec("node_id_retriever", "Find node ids by similarity to names or short descriptions (batch): for "
                     "each query, the top nodes with id, type (the Cypher label) and name.", RetrieverArgs,
                     '{"queries": ["Marfan syndrome"], "topk": 3}', result_model=ScoutRetrieverResult)
CYPHER = ToolSpec("cypher", "Run one read-only Cypher query on the graph and see its rows (at most 25 shown).",
                  CypherArgs, '{"query": "MATCH (d:disease {id: $id})-[r]-(n) RETURN label(r), count(*)", '
                              '"params": {"id": "OMIM:154700"}}', result_model=CypherRowsResult)


@dataclass
class Accepted:
    """A question the graph confirmed."""

    question: str
    answer: str
    answer_type: str
    answer_ids: list[str]
    clue_ids: list[str]
    witness_id: str | None
    verification_cypher: str
    verification_params: dict[str, Any]


class ReportResult(BaseModel):
    """The question the graph accepted."""

    accepted: Accepted


REPORT = ToolSpec("report_question", "Submit the one question of this episode with its answer, answer type, clue "
                  "node ids and a verification query whose rows give the answer; the graph checks it. Ends the "
                  "episode when accepted.", ReportArgs,
                  '{"question": "How many genes are associated with Marfan syndrome?", "answer": "1", '
                  '"answer_type": "number", "clue_ids": ["OMIM:154700"], "verification_cypher": '
                  '"MATCH (d:disease {id: $d})-[:associated_gene]->(g:gene) RETURN count(DISTINCT g) AS n", '
                  '"verification_params": {"d": "OMIM:154700"}}', result_model=ReportResult)


class ScoutToolbox(ToolboxBase[CallTelemetry]):
    """The scout's tools for one episode (the executor of :func:`ark.runtime.loop.run_tool_loop`) and its state:
    calls spent, the accepted question."""

    def __init__(self, graph: KnowledgeGraph, runner: CypherRunner, index: TextIndex, seed_id: str, answer_type: str,
                 budget: int = BUDGET, max_set: int = MAX_SET, labels: Any = None) -> None:
        self.graph = graph
        self.runner = runner
        self.index = index
        self.seed_id = seed_id
        self.answer_type = answer_type
        self.budget = budget
        self.max_set = max_set
        self.labels = labels  # node type -> Cypher label (the schema), shown by the retriever
        self.calls = 0
        self.finished = False
        self.accepted: Accepted | None = None
        self.tools = ToolSet([BoundTool(RETRIEVER, self._retrieve), BoundTool(CYPHER, self._cypher),
                              BoundTool(REPORT, self._report)])

    async def aexecute(self, name: str, arguments: str | dict | None) -> ToolResult:
        """:meth:`execute` in a worker thread (a sandboxed query must not block other episodes' model calls)."""
        return await asyncio.to_thread(self.execute, name, arguments)

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult:
        if self.finished:
            return ToolResult.failure("The episode is over.", "finished")
        self.calls += 1
        result = self.tools.execute(name, _decode_nested(arguments))
        if self.accepted is not None:
            self.finished = True
        elif self.calls >= self.budget:
            self.finished = True
            result = ToolResult(result.text + f"\n[budget] {self.budget} tool calls spent: the episode ends without "
                                              "a question.", result.data, result.ok, result.error,
                                result.node_indices)
        else:
            left = self.budget - self.calls
            result.text += f"\n[{left} tool call{'s' if left != 1 else ''} left]"
        return result

    # ------------------------------------------------------------------ tools
    def _retrieve(self, args: RetrieverArgs) -> ToolResult:
        """The solver's lookup (:func:`..tools.node_id_retriever.list_nodes`) under the scout's limits: at most 5
        queries, ``topk`` validated (1-10) rather than capped, names cut at 100 characters."""
        queries = [q.strip() for q in args.queries if q.strip()][:5]
        if not queries:
            return ToolResult.failure(f"node_id_retriever needs non-empty 'queries', e.g. {RETRIEVER.example}.",
                                      INVALID_ARGUMENTS)
        g = self.graph
        lines, hits = list_nodes(g, self.index, self.labels, queries, args.topk, name_chars=100)
        results = [ScoutHit(query=hit.query, index=int(hit.node), node_id=g.node_id(hit.node), name=g.name(hit.node),
                            type=g.node_type(hit.node), score=round(float(hit.score), 6)) for hit in hits]
        return ToolResult("\n".join(lines), ScoutRetrieverResult(results=results),
                          node_indices=[int(hit.node) for hit in hits])

    def _cypher(self, args: CypherArgs) -> ToolResult:
        outcome = self.runner.run(args.query, args.params)
        touched = self._touched(outcome, args.params)
        if outcome.error is not None:
            return ToolResult(f"[error] {outcome.error}", CypherFailure(error="cypher", message=outcome.error),
                              ok=False, error="cypher", node_indices=touched)
        shown = outcome.rows[:ROWS_SHOWN]
        lines = [json.dumps(row, default=str, ensure_ascii=False) for row in shown]
        more = len(outcome.rows) - len(shown)
        lines.append(f"({len(outcome.rows)}{'+' if outcome.truncated else ''} rows"
                     f"{f', {more} not shown' if more else ''})")
        return ToolResult("\n".join(lines), CypherRowsResult(rows=shown, row_count=len(outcome.rows),
                                                              truncated=outcome.truncated), node_indices=touched)

    def _report(self, args: ReportArgs) -> ToolResult:
        problem, accepted = self._check(args)
        if problem is not None:
            return ToolResult.failure(f"Not accepted: {problem}", "rejected")
        assert accepted is not None
        self.accepted = accepted
        return ToolResult(f"Accepted. Answer (from the graph): {accepted.answer}", ReportResult(accepted=accepted),
                          node_indices=[self.graph.index_of(c) for c in accepted.clue_ids], finished=True)

    # ------------------------------------------------------------------ checks
    def _check(self, args: ReportArgs) -> tuple[str | None, Accepted | None]:
        g = self.graph
        if args.answer_type not in ANSWER_TYPES:
            return f"answer_type must be one of {', '.join(ANSWER_TYPES)}, got {args.answer_type!r}.", None
        if args.answer_type != self.answer_type:
            return f"this episode's objective asks for a {self.answer_type} question, not {args.answer_type}.", None
        if not args.question.strip() or not args.answer.strip():
            return "the question and the answer must be non-empty.", None
        unknown = [c for c in args.clue_ids if not g.has_node(c)]
        if unknown:
            return f"clue id(s) {unknown[:5]} are not nodes of the graph; use ids the tools showed.", None
        clues = list(dict.fromkeys([self.seed_id, *args.clue_ids]))
        shown = [c for c in clues if c in args.question]
        if shown:
            return f"the question shows internal id(s) {shown[:3]}; name the entities instead.", None
        outcome = self.runner.run(args.verification_cypher, args.verification_params)
        if outcome.error is not None:
            return f"the verification query failed: {outcome.error}", None
        derived = answer_from_rows(g, self.answer_type, outcome.rows, outcome.truncated, self.max_set)
        if isinstance(derived, str):
            return derived, None
        answer, answer_ids = derived
        witness = args.witness_id
        if self.answer_type == "boolean" and answer == "yes":
            if not witness or not g.has_node(witness):
                return "a 'yes' answer needs witness_id: the id of one node that makes it true.", None
            clues = list(dict.fromkeys([*clues, witness]))
        if not exact_match(args.answer, answer, self.answer_type):
            return (f"your verification query gives {answer!r} but you reported {args.answer!r}; report what the "
                    f"graph says, or fix the query."), None
        clues = list(dict.fromkeys([*clues, *answer_ids]))
        return None, Accepted(args.question.strip(), answer, self.answer_type, answer_ids, clues,
                              witness if answer == "yes" else None, args.verification_cypher,
                              dict(args.verification_params))

    def _touched(self, outcome: CypherOutcome, params: dict[str, Any]) -> list[int]:
        """Nodes a query returned, and nodes whose ids it was given or returned as values."""
        g = self.graph
        found = dict.fromkeys(outcome.node_indices)
        values = list(params.values()) + [v for row in outcome.rows for v in row.values()]
        for value in values:
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and g.has_node(item):
                    found.setdefault(g.index_of(item), None)
        return list(found)


def answer_from_rows(graph: KnowledgeGraph, answer_type: str, rows: list[dict[str, Any]], truncated: bool = False,
                     max_set: int = MAX_SET) -> tuple[str, list[str]] | str:
    """(answer text, answer node ids) from a verification query's rows under the answer rules of the module
    docstring, or a sentence saying what is wrong with the rows."""
    kind = answer_type
    if kind in ("number", "boolean"):
        if len(rows) != 1 or len(rows[0]) != 1:
            return (f"a {kind} verification query returns exactly one row with one column; got {len(rows)} "
                    f"row(s){f' of {len(rows[0])} columns' if rows else ''}.")
        value = next(iter(rows[0].values()))
        if kind == "number":
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                return f"a number verification query returns a number (an aggregation), got {value!r}."
            if isinstance(value, numbers.Integral):
                return str(int(value)), []
            number = float(value)
            return (str(int(number)) if number.is_integer() else f"{value:g}"), []
        if isinstance(value, bool):
            return ("yes" if value else "no"), []
        if isinstance(value, numbers.Real):
            return ("yes" if float(value) > 0 else "no"), []
        return f"a boolean verification query returns a count or true/false, got {value!r}."
    if truncated or not rows:
        return f"a {kind} verification query returns one row per answer node; got {len(rows)} row(s)."
    found = [_item(graph, next(iter(row.values()), None)) for row in rows]
    items = [item for item in found if item is not None]
    if len(items) < len(found):
        return "each verification row must start with the answer node (or its name or id)."
    names = list(dict.fromkeys(name for name, _ in items))
    ids = sorted({i for _, i in items if i})
    if kind == "entity":
        if len(names) != 1:
            return f"an entity question has exactly one answer; the verification query gives {len(names)}."
        return names[0], ids
    if len(names) > max_set:
        return (f"a set answer has 2 to {max_set} members; the verification query gives {len(names)}: add "
                f"constraints to narrow it.")
    if len(names) < 2:
        return "a set answer has at least 2 members; ask an entity question for one."
    return ", ".join(sorted(names, key=str.lower)), ids


def _item(graph: KnowledgeGraph, value: Any) -> tuple[str, str | None] | None:
    """(name, node id or None) of one answer value: a node, a node id or a name."""
    if isinstance(value, dict) and value.get("id") is not None and graph.has_node(str(value["id"])):
        node = graph.index_of(str(value["id"]))
        return graph.name(node), graph.node_id(node)
    if isinstance(value, str) and value.strip():
        if graph.has_node(value):
            return graph.name(graph.index_of(value)), value
        return value.strip(), None
    return None


def _decode_nested(arguments: str | dict | None) -> str | dict | None:
    """Accept nested arguments a model double-encoded as JSON strings (lists and objects)."""
    parsed, problem = parse_arguments(arguments)
    if problem is not None or not isinstance(parsed, dict):
        return arguments
    return {k: (decode_json_string(v) if k in ("queries", "params", "clue_ids", "verification_params") else v)
            for k, v in parsed.items()}
