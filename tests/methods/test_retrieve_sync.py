"""``Retriever.retrieve`` runs an asynchronous method to its output without ever repr-ing that output (asyncio.run
reprs its main task, result included, while restoring the Ctrl-C handler: for a real ranking with trajectories
that cost a command ~70 M instructions)."""

from __future__ import annotations

import pytest

from ark.methods.base import Retriever


class Output:
    reprs = 0

    def __repr__(self) -> str:
        type(self).reprs += 1
        return "Output()"


class AsyncOnly(Retriever):
    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.closed = False

    async def aretrieve(self, query, k):
        if self.fail:
            raise ValueError(f"no answer to {query!r}")
        return Output()

    async def aclose(self) -> None:
        self.closed = True


def test_retrieve_returns_the_output_unrepresented_and_closes():
    Output.reprs = 0
    method = AsyncOnly()
    assert isinstance(method.retrieve("q", 5), Output)
    assert method.closed and Output.reprs == 0


def test_retrieve_raises_the_methods_error_and_still_closes():
    method = AsyncOnly(fail=True)
    with pytest.raises(ValueError, match="no answer to 'q'"):
        method.retrieve("q", 5)
    assert method.closed
