"""Which Cypher engine to use and how to reach a server: explicit args > environment > config file > defaults.

Environment: ``ARK_GRAPHDB`` (``ladybug`` or ``neo4j``), ``ARK_NEO4J_URL``, ``ARK_NEO4J_USER``,
``ARK_NEO4J_PASSWORD``, ``ARK_NEO4J_DATABASE``. Config file: the ``[graphdb]`` table of ``$ARK_HOME/config.toml``::

    [graphdb]
    engine = "neo4j"
    url = "bolt://localhost:7687"
    user = "neo4j"
    password = "..."
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..config import ark_home

ENGINES = ("ladybug", "neo4j")
ENV_VARS = {"engine": "ARK_GRAPHDB", "url": "ARK_NEO4J_URL", "user": "ARK_NEO4J_USER",
            "password": "ARK_NEO4J_PASSWORD", "database": "ARK_NEO4J_DATABASE"}
CONFIG_TABLE = "graphdb"


class GraphDBSettings(BaseModel):
    """The Cypher engine: embedded ladybug (default) or a Neo4j server reached over bolt."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    engine: Literal["ladybug", "neo4j"] = "ladybug"
    url: str | None = Field(default=None, description="bolt URL of the Neo4j server, e.g. bolt://localhost:7687")
    user: str | None = None
    password: str | None = Field(default=None, repr=False)
    database: str | None = Field(default=None, description="Neo4j database name (None: the server's default)")
    timeout_s: float = Field(default=10.0, gt=0, description="per-query time limit")
    max_rows: int = Field(default=1000, gt=0, description="rows a query may return without an explicit limit")


def resolve_graphdb_settings(*, config_path: Path | str | None = None, environ: Mapping[str, str] | None = None,
                             **overrides: Any) -> GraphDBSettings:
    """Merge ``overrides`` (None ignored) > environment > ``[graphdb]`` of the config file > defaults."""
    env = os.environ if environ is None else environ
    unknown = sorted(set(overrides) - set(GraphDBSettings.model_fields))
    if unknown:
        raise ValueError(f"unknown graphdb setting(s) {unknown}; valid: {sorted(GraphDBSettings.model_fields)}")
    path = Path(config_path) if config_path is not None else ark_home(env) / "config.toml"
    values: dict[str, Any] = {}
    if path.is_file():
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"config file {path} is not valid TOML: {exc}") from exc
        table = document.get(CONFIG_TABLE, {})
        if not isinstance(table, dict):
            raise ValueError(f"config file {path}: [{CONFIG_TABLE}] must be a table, got {table!r}")
        bad = sorted(set(table) - set(GraphDBSettings.model_fields))
        if bad:
            raise ValueError(f"config file {path}: unknown [{CONFIG_TABLE}] key(s) {bad}; "
                             f"valid keys: {sorted(GraphDBSettings.model_fields)}")
        values.update(table)
    values.update({name: env[var] for name, var in ENV_VARS.items() if env.get(var)})
    values.update({key: value for key, value in overrides.items() if value is not None})
    if values.get("engine") not in (None, *ENGINES):
        raise ValueError(f"unknown graph database engine {values['engine']!r}; valid: {', '.join(ENGINES)}")
    return GraphDBSettings(**values)
