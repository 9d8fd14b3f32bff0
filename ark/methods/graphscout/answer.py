r"""The solver's final answer: the ``\answer{...}`` wrapper on the last line of its last message (GraphScout §3.4.2,
Appendix B.2), and the answer type a question asks for.

:func:`extract_answer` returns the wrapped text when the reply's last line (trailing code fences and blank lines
ignored) holds the wrapper, else None. Braces inside the answer nest (``\answer{{1, 2}}`` is ``{1, 2}``).
"""

from __future__ import annotations

import re

from ..base import AnswerType

WRAPPER = r"\answer{...}"
_OPEN = "\\answer{"
_FENCE = re.compile(r"^\s*(?:```\w*|\$\$?)\s*$")
_BOOLEAN_OPENERS = re.compile(r"^\s*(?:is|are|does|do|did|can|could|has|have|was|were)\b"
                              r"(?!\s+(?:you|we)\s+(?:name|list|find|give|tell|identify|show|provide|retrieve)\b)",
                              re.IGNORECASE)  # "Can you name ..." asks for things, not yes/no
_SINGULAR = re.compile(r"^\s*(?:what|which|who)\s+is\b", re.IGNORECASE)
_COUNT = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.IGNORECASE)


def extract_answer(content: str | None) -> str | None:
    r"""The text inside the last ``\answer{...}`` when it sits on the reply's last line, else None."""
    lines = [line for line in (content or "").splitlines() if line.strip() and not _FENCE.match(line)]
    if not lines or _OPEN not in lines[-1]:
        return None
    line = lines[-1]
    start = line.rindex(_OPEN) + len(_OPEN)
    depth = 1
    for position in range(start, len(line)):
        char = line[position]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return line[start:position].strip()
    return None


def answer_type(question: str, target_types: list[str]) -> AnswerType:
    """The answer type a question asks for: "how many" -> number; a question opening with is/are/does/... ->
    boolean (not "can you name/list ..."); "what is"/"which is" or "which <singular wanted type>" -> entity;
    otherwise a set."""
    if _COUNT.search(question):
        return "number"
    if _BOOLEAN_OPENERS.match(question):
        return "boolean"
    if _SINGULAR.match(question):
        return "entity"
    if target_types:
        from ...graph import normalize_name

        singular = normalize_name(target_types[0])
        opener = re.search(rf"\b(?:which|what)\s+(?:\w+\s+){{0,2}}?{re.escape(singular)}\b(?!s)", question.lower())
        if opener:
            return "entity"
    return "set"
