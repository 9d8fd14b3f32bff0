"""Optional LLM paraphrases of templated questions, kept only when they keep every name and quoted phrase.

The templated question stays in ``query``; the paraphrase goes to ``query_paraphrase`` (``None`` when the model
failed or dropped something the answers depend on), so the ground truth never changes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ..llm import ChatPolicy, LLMError
from ..llm.messages import Message, SystemMessage, UserMessage
from .traverse import mentions

SYSTEM_PROMPT = (
    "You rewrite questions about a knowledge graph so they read like a person asking. Keep the meaning exactly: "
    "every condition must stay, nothing may be added. Copy every entity name and every quoted term verbatim. "
    "Reply with the rewritten question only."
)


def required_strings(record: dict[str, Any]) -> list[str]:
    """Strings a faithful paraphrase must contain: the anchors' names and the textual phrase."""
    needed = list(record.get("anchor_names", []))
    phrase = record.get("params", {}).get("text_phrase")
    if phrase:
        needed.append(phrase)
    return needed


def is_faithful(paraphrase: str, record: dict[str, Any]) -> bool:
    """True when ``paraphrase`` is non-empty and mentions every required string as whole words (ignoring case)."""
    return bool(paraphrase.strip()) and all(mentions(paraphrase, s) for s in required_strings(record))


async def paraphrase_one(client: ChatPolicy, record: dict[str, Any]) -> str | None:
    """The model's paraphrase of one question, or ``None`` if it failed or is not faithful."""
    messages: list[Message] = [SystemMessage(SYSTEM_PROMPT), UserMessage(record["query"])]
    try:
        reply = await client.next_message(messages, tools=[], tool_choice="none")
    except LLMError:
        return None
    content = (reply.message.content or "").strip()
    faithful = is_faithful(content, record)
    reply.accept()
    return content if faithful else None


async def paraphrase_all(client: ChatPolicy, records: list[dict[str, Any]]) -> int:
    """Set ``query_paraphrase`` on every record (concurrently; the client limits concurrency); return kept count."""
    results = await asyncio.gather(*(paraphrase_one(client, r) for r in records))
    for record, text in zip(records, results, strict=True):
        record["query_paraphrase"] = text
    return sum(text is not None for text in results)
