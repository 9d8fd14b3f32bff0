"""Words of text, shared by every part that splits text outside the BM25 tokenizer, and the stopword sets.

One splitter (:func:`words`) with the word pattern and stopword set as parameters; the named sets below are the
only stopword lists in the package:

- :data:`ENGLISH_STOPWORDS`: function words without topical signal (the BM25 tokenizer's default, neighbourhood
  keyword ranking);
- :data:`NAME_STOPWORDS`: the few words ignored when matching an entity's name against a question;
- :data:`CONSTRAINT_STOPWORDS`: longer function words that never make a useful textual constraint (the quiz).

And :func:`terminal_safe`, the one escape of text from the graph, a model or code output before it reaches a
terminal (the command line's consoles apply it to everything they print).
"""

from __future__ import annotations

import json
import logging
import re
import sys
import unicodedata
import warnings
from collections.abc import Callable, Iterable

WORD = re.compile(r"\w+")
LETTERS_AND_DIGITS = re.compile(r"[^\W_]+")  # words without the underscore

ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    [
        "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as",
        "at", "be", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did",
        "do", "does", "doing", "down", "during", "each", "few", "for", "from", "further", "had", "has", "have",
        "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "if", "in", "into",
        "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "no", "nor", "not", "now",
        "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own",
        "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
        "themselves", "then", "there", "these", "they", "this", "those", "through", "to", "too", "under",
        "until", "up", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom",
        "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves"
    ]
)

NAME_STOPWORDS: frozenset[str] = frozenset(
    {"a", "an", "the", "of", "and", "or", "in", "on", "with", "to", "for", "by", "at", "is"}
)

CONSTRAINT_STOPWORDS: frozenset[str] = frozenset(
    [
        "about", "above", "after", "again", "against", "also", "among", "because", "been", "before",
        "being", "below", "between", "both", "cannot", "could", "does", "doing", "down", "during",
        "each", "either", "from", "further", "have", "having", "here", "however", "into", "itself",
        "more", "most", "much", "must", "neither", "other", "otherwise", "over", "same", "should",
        "some", "such", "than", "that", "their", "them", "then", "there", "these", "they", "this",
        "those", "through", "under", "until", "upon", "very", "were", "what", "when", "where",
        "which", "while", "whom", "whose", "will", "with", "within", "without", "would", "your",
        "only", "often", "usually", "may"
    ]
)


def words(text: str, stopwords: frozenset[str] = frozenset(), pattern: re.Pattern[str] = WORD) -> list[str]:
    """The lower-cased words of ``text`` (maximal matches of ``pattern``) that are not in ``stopwords``."""
    found = pattern.findall(text.lower())
    return [w for w in found if w not in stopwords] if stopwords else found


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The one choice closest to a misspelt ``name`` (:func:`difflib.get_close_matches`; compared case-blind), or
    None when none is close."""
    import difflib

    by_key: dict[str, str] = {}
    for choice in choices:
        by_key.setdefault(str(choice).lower(), str(choice))
    found = difflib.get_close_matches(str(name).lower(), list(by_key), n=1)
    return by_key[found[0]] if found else None


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the one choice closest to ``name``, or ``""``: a suffix for an error message."""
    found = closest(name, choices)
    return f" (did you mean {found!r}?)" if found is not None and found != name else ""


def clean_inline(text: str, limit: int) -> str:
    """One line, whitespace collapsed, cut to ``limit`` characters with an ellipsis. A printable string holds no
    whitespace but the space, so one without a double space or a space at either end is already collapsed (most
    node names: the check costs a third of the split and join, 20 names a search call)."""
    if type(text) is str and text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        flat = text
    else:
        flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: max(limit - 3, 1)].rstrip() + "..."


def terminal_safe(text: str, keep: str = "\n\t") -> str:
    """``text`` as it may reach a terminal: printable characters (spaces included) and those in ``keep`` pass; every
    other one is shown as its Python escape (``\\x1b``, ``\\x9b``, ``\\u202e``). That covers the C0 and C1 controls
    (ESC and CSI start the sequences that clear the screen, move the cursor or write the clipboard), DEL, format
    characters such as bidirectional overrides, and line or paragraph separators. A whitelist: what is not known to
    print as itself is escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep or unicodedata.category(c) == "Zs" else repr(c)[1:-1]
                   for c in text)


def json_terminal_safe(encoded: str) -> str:
    """JSON text (as ``json.dumps(..., ensure_ascii=False)`` writes it) with every character :func:`terminal_safe`
    would escape written as a JSON ``\\u`` escape instead: still the same JSON, and safe to print."""
    if encoded.isprintable():
        return encoded
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in encoded)


class TerminalSafeFormatter(logging.Formatter):
    """A log formatter whose whole output (message, arguments, traceback) passes :func:`terminal_safe`: a log line
    carrying a request path, a graph name or an exception about a model's text prints escaped. Wraps the formatter
    a handler already had (None: the plain ``%(message)s`` one)."""

    def __init__(self, inner: logging.Formatter | None = None) -> None:
        super().__init__()
        self.inner = inner or logging.Formatter()

    def format(self, record: logging.LogRecord) -> str:
        return terminal_safe(self.inner.format(record))


class TerminalSafeStderrHandler(logging.Handler):
    """What :data:`logging.lastResort` does (records of WARNING and above, to the current ``sys.stderr``, when no
    handler is configured), through :class:`TerminalSafeFormatter`."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(TerminalSafeFormatter())

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - a log line that cannot be written must not stop the program
            self.handleError(record)


def terminal_safe_formatwarning(inner: Callable[..., str]) -> Callable[..., str]:
    """``warnings.formatwarning`` whose text (message and source line) passes :func:`terminal_safe`. Python's own
    ``showwarning`` and logging's captured warnings (``logging.captureWarnings``) both format through it."""

    def formatwarning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                      line: str | None = None) -> str:
        return terminal_safe(inner(message, category, filename, lineno, line))

    formatwarning.terminal_safe = True  # type: ignore[attr-defined]
    return formatwarning


def escape_log_output(*logger_names: str) -> None:
    """Escape everything logging and Python's warnings print to a terminal: the fallback for loggers without
    handlers, warnings (shown directly or captured by logging), and the handlers already set on ``logger_names`` (a
    server's own loggers)."""
    if not isinstance(logging.lastResort, TerminalSafeStderrHandler):
        logging.lastResort = TerminalSafeStderrHandler()
    if not getattr(warnings.formatwarning, "terminal_safe", False):
        warnings.formatwarning = terminal_safe_formatwarning(warnings.formatwarning)
    for name in logger_names:
        for handler in logging.getLogger(name).handlers:
            if not isinstance(handler.formatter, TerminalSafeFormatter):
                handler.setFormatter(TerminalSafeFormatter(handler.formatter))
