"""Fitting the outside tools' results to a character cap (``ResultLimits.max_chars``).

Unlike the agent's own observations (which shorten every entry and never drop one), the tools that only outside
agents call (surroundings, paths) list whole entries and stop at the cap with a note, because an MCP client's
budget is the user's, not the paper's; the structured result lists exactly the entries shown.
"""

from __future__ import annotations


def fit_entries(header: list[str], entries: list[list[str]], footer: list[str], limit: int) -> tuple[str, int]:
    """``header``, then as many whole entries as fit in ``limit`` characters (with a note when some are left out),
    then ``footer``; also returns how many entries are shown."""
    lines = header + [line for entry in entries for line in entry]
    text, kept = _fit(lines, footer, limit)
    kept -= len(header)
    shown = used = 0
    for entry in entries:
        if used >= kept:
            break
        shown += 1
        used += len(entry)
    return text, shown


def _fit(lines: list[str], footer: list[str], limit: int) -> tuple[str, int]:
    """The fitted text and how many of ``lines`` it kept."""
    note = f"(Output cut to {limit} characters.)"
    text = "\n".join(lines + footer)
    if len(text) <= limit:
        return text, len(lines)
    budget = limit - len("\n".join(footer)) - len(note) - 2
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join([*kept, note, *footer])[:limit], len(kept)
