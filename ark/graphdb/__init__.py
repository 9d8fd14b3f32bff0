"""Any ARK graph as a read-only Cypher database: embedded ladybug (extra ``graphdb``) or a Neo4j server (extra
``neo4j``), behind one :class:`CypherEngine` interface with short, actionable errors.

    from ark.graphdb import open_cypher
    engine = open_cypher(graph)                      # exported once, cached beside the graph
    engine.query("MATCH (d:disease)-[:associated_gene]->(g:gene) WHERE d.name = $name RETURN g.name",
                 {"name": "Marfan syndrome"}).records()
    print(engine.schema.describe())                  # node/relationship tables for a prompt

Nothing here imports ladybug or neo4j until an engine is opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .engine import DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, CypherEngine, CypherResult
from .errors import (
    CypherCrashed,
    CypherError,
    CypherParameterError,
    CypherQueryError,
    CypherResourceError,
    CypherSyntaxError,
    CypherTimeout,
    CypherUnavailable,
    TooManyRows,
    WriteRefused,
)
from .guard import check_read_only
from .schema import CypherSchema, build_schema, cypher_identifier

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph

__all__ = [
    "DEFAULT_MAX_ROWS",
    "DEFAULT_TIMEOUT_S",
    "CypherCrashed",
    "CypherEngine",
    "CypherError",
    "CypherParameterError",
    "CypherQueryError",
    "CypherResourceError",
    "CypherResult",
    "CypherSchema",
    "CypherSyntaxError",
    "CypherTimeout",
    "CypherUnavailable",
    "GraphDBSettings",
    "TooManyRows",
    "WriteRefused",
    "build_schema",
    "check_read_only",
    "cypher_identifier",
    "open_cypher",
    "resolve_graphdb_settings",
]


def __getattr__(name: str) -> Any:
    # Settings pull in pydantic; the sandbox worker imports this package and should start fast.
    if name in ("GraphDBSettings", "resolve_graphdb_settings"):
        from . import settings

        return getattr(settings, name)
    raise AttributeError(f"module 'ark.graphdb' has no attribute {name!r}")


def open_cypher(graph: KnowledgeGraph, settings: Any = None, *, progress: bool = False,
                **options: Any) -> CypherEngine:
    """A read-only engine over ``graph``: the embedded ladybug export (default), every query run in a worker
    process with its deadline enforced from outside (:mod:`ark.graphdb.isolated`), or the configured Neo4j server.

    ``settings`` (a :class:`GraphDBSettings`) defaults to :func:`resolve_graphdb_settings` (environment and
    ``[graphdb]`` in config.toml);
    ``options`` go to the engine (e.g. ``timeout_s``, ``buffer_pool_mb``; ladybug: ``workers``, ``memory_mb``).
    For trusted queries in this process, :func:`ark.graphdb.ladybug_engine.open_ladybug`.
    """
    from .settings import resolve_graphdb_settings

    settings = settings or resolve_graphdb_settings()
    options.setdefault("timeout_s", settings.timeout_s)
    options.setdefault("max_rows", settings.max_rows)
    if settings.engine == "neo4j":
        from .neo4j_engine import Neo4jEngine
        from .schema import build_schema as schema_of

        return Neo4jEngine(settings.url, user=settings.user, password=settings.password, database=settings.database,
                           schema=schema_of(graph, property_columns=_property_columns(graph)), **options)
    from .isolated import open_isolated

    return open_isolated(graph, progress=progress, **options)


def _property_columns(graph: KnowledgeGraph) -> dict[str, Any]:
    from .stream import scan_property_columns

    return scan_property_columns(graph)
