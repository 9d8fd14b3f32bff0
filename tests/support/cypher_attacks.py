"""Model-written Cypher that the read-only guard lets through but the embedded engine cannot take, and a scripted
model that sends it.

Measured on ladybug 0.22.0 in ARK's own process (2026-12-02, 2 shared cores): :data:`CRASH` ends the process with
SIGSEGV after about 4 s (the parser's recursion; 20,000 NOTs in a row did the same, 80,016 characters, now refused by
the guard's nesting bound); :data:`HANG` was still running after 60 s with a 5 s ``timeout_s`` (lists nested 500
deep ran past 100 s; also refused by the guard now). Both are under the guard's 100,000 characters.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from tests.support.openai_server import Step, text_reply

CRASH = "RETURN true" + " OR true" * 12_000
HANG = "RETURN 1" + "+1" * 40_000
NOT_CHAIN = "RETURN " + "NOT " * 20_000 + "true"  # the audit's crash (issue 44)
DEEP_LISTS = "RETURN " + "[" * 5_000 + "1" + "]" * 5_000  # the audit's hang
FINE = "MATCH (d:disease) RETURN count(d) AS diseases"


def cypher_model(queries: Mapping[str, str], answer: str = "Answer: done") -> Callable[[dict], Step]:
    """A responder for the ``cypher`` method: its query call gets the query of the first marker of ``queries``
    found in the question, its answer call gets ``answer``."""
    def respond(body: dict) -> Step:
        messages = body.get("messages", [])
        system = str(messages[0].get("content", "")) if messages else ""
        if not system.startswith("You translate a question"):
            return text_reply(answer)
        user = str(messages[-1].get("content", ""))
        query = next((q for marker, q in queries.items() if marker in user), FINE)
        return text_reply(f"```cypher\n{query}\n```")

    return respond
