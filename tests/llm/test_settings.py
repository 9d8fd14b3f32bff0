"""LLM settings resolution: explicit args > environment > config file > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from ark.llm import LLMSettings, Usage, resolve_settings

CONFIG = """
[llm]
base_url = "http://config-host:8000/v1"
api_key = "config-key"
model = "config-model"
temperature = 0.2
max_tokens = 512
concurrency = 3
"""


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    return path


def test_config_file_overrides_defaults(config_file):
    s = resolve_settings(config_path=config_file, environ={})
    assert (s.base_url, s.api_key, s.model) == ("http://config-host:8000/v1", "config-key", "config-model")
    assert (s.temperature, s.max_tokens, s.concurrency) == (0.2, 512, 3)
    assert s.timeout_s == 120 and s.max_retries == 4  # untouched defaults


def test_environment_overrides_config_file(config_file):
    env = {"OPENAI_BASE_URL": "http://env-host/v1", "OPENAI_API_KEY": "env-key", "ARK_MODEL": "env-model"}
    s = resolve_settings(config_path=config_file, environ=env)
    assert (s.base_url, s.api_key, s.model) == ("http://env-host/v1", "env-key", "env-model")
    assert s.temperature == 0.2  # not set by the environment: the config file still counts


def test_explicit_args_override_environment_and_none_is_ignored(config_file):
    env = {"OPENAI_BASE_URL": "http://env-host/v1", "ARK_MODEL": "env-model"}
    s = resolve_settings(config_path=config_file, environ=env, model="arg-model", temperature=0.0,
                         base_url=None)
    assert s.model == "arg-model" and s.temperature == 0.0
    assert s.base_url == "http://env-host/v1"  # base_url=None means "not given"


def test_reads_ark_home_config_and_process_environment(tmp_path, monkeypatch):
    (tmp_path / "config.toml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("ARK_HOME", str(tmp_path))
    monkeypatch.setenv("ARK_MODEL", "env-model")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    s = resolve_settings()
    assert s.model == "env-model" and s.base_url == "http://config-host:8000/v1"
    assert s.cache_dir == tmp_path / "llm-cache"
    assert resolve_settings(use_cache=False).cache_dir is None


def test_defaults_without_any_source(tmp_path):
    s = resolve_settings(config_path=tmp_path / "missing.toml", environ={"ARK_HOME": str(tmp_path)})
    assert s.model is None and not s.configured()
    assert s.temperature == 0.7 and s.max_tokens == 2048 and s.concurrency == 8
    assert s.cache_dir == tmp_path / "llm-cache"


def test_configured_needs_model_and_endpoint_or_key():
    assert LLMSettings(model="m", base_url="http://x/v1").configured()
    assert LLMSettings(model="m", api_key="k").configured()
    assert not LLMSettings(model="m").configured()
    assert not LLMSettings(base_url="http://x/v1").configured()


def test_bad_values_are_named(tmp_path, config_file):
    with pytest.raises(ValueError, match="unknown LLM setting.*'modle'.*valid settings"):
        resolve_settings(config_path=config_file, environ={}, modle="x")
    bad = tmp_path / "bad.toml"
    bad.write_text('[llm]\nmodel = "m"\ntemprature = 1\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"unknown \[llm\] key\(s\) \['temprature'\]"):
        resolve_settings(config_path=bad, environ={})
    bad.write_text("[llm\n", encoding="utf-8")
    with pytest.raises(ValueError, match="not valid TOML"):
        resolve_settings(config_path=bad, environ={})
    with pytest.raises(ValidationError, match="temperature"):
        resolve_settings(config_path=config_file, environ={}, temperature=5)


def test_api_key_is_hidden_from_repr():
    assert "secret" not in repr(LLMSettings(model="m", api_key="secret"))


def test_usage_adds_up():
    assert Usage(1, 2, 3) + Usage(10, 20, 30) == Usage(11, 22, 33)


def test_max_tool_calls_per_turn_from_the_config_file(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[llm]\nmax_tool_calls_per_turn = 5\n", encoding="utf-8")
    assert resolve_settings(config_path=path, environ={}).max_tool_calls_per_turn == 5
    assert resolve_settings(config_path=tmp_path / "absent.toml", environ={}).max_tool_calls_per_turn == 32
    path.write_text("[llm]\nmax_tool_calls_per_turn = 0\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="max_tool_calls_per_turn"):
        resolve_settings(config_path=path, environ={})
