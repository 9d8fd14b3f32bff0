"""LLM connection settings and how they are resolved: explicit args > environment > config file > defaults.

Environment: ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``, ``ARK_MODEL``. Config file: the ``[llm]`` table of
``$ARK_HOME/config.toml`` (``ARK_HOME`` defaults to ``~/.cache/ark``), keyed by `LLMSettings` field names::

    [llm]
    base_url = "http://localhost:8000/v1"
    model = "Qwen/Qwen2.5-7B-Instruct"
    temperature = 0.7
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ark.config import ark_home
from ark.llm.policy import DEFAULT_MAX_TOOL_CALLS_PER_TURN

ENV_VARS = {"base_url": "OPENAI_BASE_URL", "api_key": "OPENAI_API_KEY", "model": "ARK_MODEL"}
CONFIG_TABLE = "llm"
# A model named ``hf:PATH`` is a local Hugging Face model run in the process (``ark.llm.local_backend``).
LOCAL_PREFIX = "hf:"


class LLMSettings(BaseModel):
    """How to reach an OpenAI-compatible chat endpoint and how to sample from it."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False)  # never shown in repr or logs
    model: str | None = None
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=2048, gt=0)
    timeout_s: float = Field(default=120.0, gt=0)  # the whole request (connect, send, headers and body), per try
    max_retries: int = Field(default=4, ge=0)
    concurrency: int = Field(default=8, ge=1)
    cache_dir: Path | None = None  # None: no response cache
    seed: int | None = None
    max_tool_calls_per_turn: int = Field(default=DEFAULT_MAX_TOOL_CALLS_PER_TURN, ge=1, le=10_000)

    def configured(self) -> bool:
        """True when a model is set and there is somewhere to send it (a base URL or an API key)."""
        return bool(self.model) and bool(self.base_url or self.api_key)


def read_config_file(path: Path) -> dict[str, Any]:
    """The ``[llm]`` table of a TOML config file ({} when the file does not exist)."""
    if not path.is_file():
        return {}
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"config file {path} is not valid TOML: {exc}") from exc
    table = document.get(CONFIG_TABLE, {})
    if not isinstance(table, dict):
        raise ValueError(f"config file {path}: [{CONFIG_TABLE}] must be a table, got {table!r}")
    unknown = sorted(set(table) - set(LLMSettings.model_fields))
    if unknown:
        raise ValueError(f"config file {path}: unknown [{CONFIG_TABLE}] key(s) {unknown}; "
                         f"valid keys: {sorted(LLMSettings.model_fields)}")
    return dict(table)


def resolve_settings(*, config_path: Path | str | None = None, environ: Mapping[str, str] | None = None,
                     use_cache: bool = True, **overrides: Any) -> LLMSettings:
    """Merge settings: ``overrides`` (None values are ignored) > environment > config file > defaults.

    ``config_path`` defaults to ``$ARK_HOME/config.toml``; ``environ`` to ``os.environ``. When no layer sets
    ``cache_dir`` it defaults to ``$ARK_HOME/llm-cache``; ``use_cache=False`` turns the response cache off.
    """
    env = os.environ if environ is None else environ
    unknown = sorted(set(overrides) - set(LLMSettings.model_fields))
    if unknown:
        raise ValueError(f"unknown LLM setting(s) {unknown}; "
                         f"valid settings: {sorted(LLMSettings.model_fields)}")
    home = ark_home(env)
    values: dict[str, Any] = {"cache_dir": home / "llm-cache"}
    values.update(read_config_file(Path(config_path) if config_path is not None else home / "config.toml"))
    values.update({field: env[var] for field, var in ENV_VARS.items() if env.get(var)})
    values.update({key: value for key, value in overrides.items() if value is not None})
    if not use_cache:
        values["cache_dir"] = None
    return LLMSettings(**values)
