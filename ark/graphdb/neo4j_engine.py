"""The same :class:`~ark.graphdb.engine.CypherEngine` over a Neo4j server, through the official ``neo4j`` driver.

Queries run in managed read transactions (``session.execute_read``, access mode READ, so the server itself
refuses writes) with a server-side timeout (``neo4j.unit_of_work(timeout=...)``); rows are streamed and the
stream is dropped after ``limit`` (or ``max_rows`` + 1) records, so a huge result never reaches the client.
:func:`neo4j_import_statements` gives the statements (with parameter batches) that load an ARK graph into a
server with the same labels as the embedded export, so prompts and queries carry over unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .engine import (
    DEFAULT_MAX_ROWS,
    DEFAULT_TIMEOUT_S,
    CypherResult,
    check_limit,
    check_params,
    check_timeout,
    node_indices,
    too_many_rows,
)
from .errors import (
    CypherError,
    CypherParameterError,
    CypherQueryError,
    CypherSyntaxError,
    CypherTimeout,
    CypherUnavailable,
    WriteRefused,
)
from .guard import check_read_only
from .schema import CypherSchema

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

MAX_MESSAGE_CHARS = 600


class Neo4jEngine:
    """Read-only Cypher over a Neo4j server. Pass ``driver`` (anything with the driver's ``session()``) or a URL."""

    dialect = "neo4j"

    def __init__(self, url: str | None = None, *, user: str | None = None, password: str | None = None,
                 database: str | None = None, schema: CypherSchema | None = None, driver: Any = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        if driver is None:
            if not url:
                raise CypherUnavailable("no Neo4j URL: set ARK_NEO4J_URL or url under [graphdb] in config.toml")
            try:
                import neo4j
            except ImportError as exc:
                raise CypherUnavailable("the Neo4j engine needs the 'neo4j' extra: "
                                        "pip install 'ark-kg[neo4j]'") from exc
            auth = (user, password or "") if user else None
            # Retries of a failed read stop within the query's own time budget, not the driver's default 30 s.
            limit = float(timeout_s)
            driver = neo4j.GraphDatabase.driver(url, auth=auth, max_transaction_retry_time=limit,
                                                connection_timeout=min(limit, 5.0))
        self.url = url
        self.database = database
        self.schema = schema
        self.timeout_s = check_timeout(timeout_s, DEFAULT_TIMEOUT_S)
        self.max_rows = int(max_rows)
        self._driver = driver

    def __repr__(self) -> str:
        return f"Neo4jEngine(url={self.url!r}, database={self.database!r})"

    def session_options(self) -> dict[str, Any]:
        """Keyword arguments of ``driver.session()``: the database and READ access mode."""
        import neo4j

        options: dict[str, Any] = {"default_access_mode": neo4j.READ_ACCESS}
        if self.database:
            options["database"] = self.database
        return options

    def transaction_function(self, cypher: str, params: dict[str, Any], cap: int, timeout: float) -> Any:
        """The managed-transaction function run for one query: streams at most ``cap + 1`` rows."""
        import neo4j

        @neo4j.unit_of_work(timeout=timeout)
        def work(tx: Any) -> tuple[list[str], list[list[Any]]]:
            result = tx.run(cypher, params)
            columns = list(result.keys())
            rows: list[list[Any]] = []
            for record in result:
                rows.append([plain_value(v) for v in record.values()])
                if len(rows) > cap:
                    break
            return columns, rows

        return work

    def query(self, cypher: str, params: Mapping[str, Any] | None = None, limit: int | None = None,
              timeout_s: float | None = None) -> CypherResult:
        check_read_only(cypher, self.dialect)
        values = check_params(params)
        limit = check_limit(limit)
        timeout = check_timeout(timeout_s, self.timeout_s)
        cap = limit if limit is not None else self.max_rows
        started = time.perf_counter()
        try:
            with self._driver.session(**self.session_options()) as session:
                columns, rows = session.execute_read(self.transaction_function(cypher, values, cap, timeout))
        except Exception as exc:  # the driver raises many types; all become CypherError
            raise self._error(exc, timeout) from None
        truncated = len(rows) > cap
        if truncated and limit is None:
            raise too_many_rows(self.max_rows)
        rows = rows[:cap]
        return CypherResult(columns, rows, truncated, time.perf_counter() - started, node_indices(rows))

    def _error(self, exc: Exception, timeout: float) -> CypherError:
        from neo4j import exceptions as errors

        code = getattr(exc, "code", None) or ""
        message = (getattr(exc, "message", None) or str(exc)).strip()[:MAX_MESSAGE_CHARS]
        if isinstance(exc, errors.CypherSyntaxError) or code.endswith("Statement.SyntaxError"):
            return CypherSyntaxError(f"Cypher syntax error: {message}")
        if "TransactionTimedOut" in code:
            return CypherTimeout(f"the query ran past its {timeout:g} s time limit; narrow it (start from a node id, "
                                 "add LIMIT, avoid unbounded variable-length paths)")
        if code.endswith("Statement.AccessMode") or isinstance(exc, errors.ForbiddenOnReadOnlyDatabase):
            return WriteRefused("the graph database is read-only (use MATCH ... RETURN)")
        if code.endswith("Statement.ParameterMissing"):
            return CypherParameterError(f"{message} (pass it in params={{...}})")
        if isinstance(exc, errors.ServiceUnavailable | errors.SessionExpired | errors.AuthError):
            return CypherUnavailable(f"cannot reach the Neo4j server {self.url or ''}: {message}")
        if isinstance(exc, errors.Neo4jError):
            return CypherQueryError(message)
        if isinstance(exc, CypherError):
            return exc
        return CypherError(f"{type(exc).__name__}: {message}")

    def close(self) -> None:
        close = getattr(self._driver, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> Neo4jEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def plain_value(value: Any) -> Any:
    """A driver value as plain Python, shaped like the embedded engine's (see ``ladybug_engine.plain_value``)."""
    from neo4j.graph import Node, Path, Relationship

    if isinstance(value, Node):
        labels = sorted(value.labels)
        return {"_label": labels[0] if labels else "", **{k: plain_value(v) for k, v in value.items()}}
    if isinstance(value, Relationship):
        return {"_type": value.type, **{k: plain_value(v) for k, v in value.items()}}
    if isinstance(value, Path):
        return {"nodes": [plain_value(n) for n in value.nodes], "rels": [plain_value(r) for r in value.relationships]}
    if isinstance(value, dict):
        return {str(k): plain_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


# --------------------------------------------------------------------------------------------- import into a server
def neo4j_import_statements(graph: KnowledgeGraph, schema: CypherSchema | None = None, batch_size: int = 5000,
                            scan_rows: int | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """(statement, parameters) pairs that load ``graph`` into an empty Neo4j database: a uniqueness constraint per
    label, then nodes and edges in ``UNWIND $rows`` batches. Run them in write transactions, in order.

    Streamed as the embedded export is (:mod:`ark.graphdb.stream`): nodes and edges are read from the graph's
    arrays ``scan_rows`` at a time (one pass over the CSR per FROM/TO pair), so what is held at once is one batch,
    whatever the graph's size."""
    from .schema import build_schema
    from .stream import SCAN_ROWS, scan_property_columns

    window = scan_rows or SCAN_ROWS
    schema = schema or build_schema(graph, property_columns=scan_property_columns(graph, window))
    for spec in schema.nodes:
        yield (f"CREATE CONSTRAINT IF NOT EXISTS FOR (n:`{spec.label}`) REQUIRE n.id IS UNIQUE", {})
    for spec in schema.nodes:
        yield from _node_statements(graph, spec, batch_size, window)
    for rel_spec in schema.rels:
        for pair in rel_spec.pairs:
            yield from _edge_statements(graph, schema, rel_spec, pair, batch_size, window)


def _node_statements(graph: KnowledgeGraph, spec: Any, batch_size: int, window: int) -> Iterator[tuple[str, dict[str,
                     Any]]]:
    from .schema import convert_property
    from .stream import node_index_chunks

    statement = f"UNWIND $rows AS row CREATE (n:`{spec.label}`) SET n = row"
    for indices in node_index_chunks(graph, spec.node_type, batch_size, window):
        rows = []
        for i in indices.tolist():
            row = {"id": graph.node_id(i), "name": graph.name(i), "text": graph.text(i), "idx": int(i)}
            if spec.properties:
                props = graph.properties(i)
                row.update({c.name: convert_property(props.get(c.key), c.type) for c in spec.properties})
            rows.append(row)
        yield statement, {"rows": rows}


def _edge_statements(graph: KnowledgeGraph, schema: CypherSchema, spec: Any, pair: Any, batch_size: int,
                     window: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """The batches of one relation's edges between one FROM/TO pair, in the graph's edge order."""
    from .stream import _type_of, edge_chunks

    r = graph.relation_types.index(spec.relation)
    s_code = graph.node_types.index(_type_of(schema, pair.source))
    t_code = graph.node_types.index(_type_of(schema, pair.target))
    statement = (f"UNWIND $rows AS row MATCH (a:`{pair.source}` {{id: row.source}}), "
                 f"(b:`{pair.target}` {{id: row.target}}) CREATE (a)-[:`{spec.label}`]->(b)")
    codes = graph.node_type_codes
    rows: list[dict[str, str]] = []
    for src, dst, rel in edge_chunks(graph, window):
        keep = (rel == r) & (np.asarray(codes[src]) == s_code) & (np.asarray(codes[dst]) == t_code)
        for a, b in zip(src[keep].tolist(), dst[keep].tolist(), strict=True):
            rows.append({"source": graph.node_id(a), "target": graph.node_id(b)})
            if len(rows) == batch_size:
                yield statement, {"rows": rows}
                rows = []
    if rows:
        yield statement, {"rows": rows}
