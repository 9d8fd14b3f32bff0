"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import ScriptedOpenAIServer


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    """A scripted loopback OpenAI server (tests/support/openai_server.py); `.base_url` ends in /v1."""
    with ScriptedOpenAIServer() as server:
        yield server
