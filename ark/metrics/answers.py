"""Answer metrics of question answering (GraphScout §4.1): exact match and token-level F1 after normalising both
answers by type.

Types (:data:`ANSWER_TYPES`) and their normal forms:

- ``entity``: lower case, Unicode NFKC, punctuation replaced by spaces, articles (a, an, the) dropped,
  whitespace collapsed (``"The Marfan-syndrome."`` -> ``"marfan syndrome"``);
- ``set``: items split on commas, semicolons, new lines, ``|`` and a final ``and``, each normalised as an entity,
  de-duplicated and sorted, so order and separators do not matter;
- ``number``: the first number in the text (``"1,234"``, ``"3.50"``, ``"-2"``, or a number word up to
  ninety-nine), written canonically (``"There are 12 genes"`` -> ``"12"``, ``"3.50"`` -> ``"3.5"``);
- ``boolean``: ``yes`` or ``no`` from the first word (yes/true/correct/y vs no/false/incorrect/n/not).

Exact match compares the normal forms; token F1 is the F1 of the bags of tokens of the normal forms (SQuAD-style,
the paper's F1 and its answer reward). For sets :func:`item_f1` also gives the F1 over whole items.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

ANSWER_TYPES = ("entity", "set", "number", "boolean")
ANSWER_METRICS = ("exact_match", "f1")

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCTUATION = re.compile(f"[{re.escape(string.punctuation)}‘’“”–—•]")
_ITEM_SPLIT = re.compile(r"\s*(?:[,;|\n]|\band\b)\s*")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_YES = frozenset({"yes", "true", "correct", "y", "yeah", "yep"})
_NO = frozenset({"no", "false", "incorrect", "n", "not", "nope"})
_UNIT_WORDS = """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
sixteen seventeen eighteen nineteen"""
_TEN_WORDS = "twenty thirty forty fifty sixty seventy eighty ninety"
_UNITS = {word: i for i, word in enumerate(_UNIT_WORDS.split())}
_TENS = {word: 10 * (i + 2) for i, word in enumerate(_TEN_WORDS.split())}


def normalize_text(text: Any) -> str:
    """Lower case, NFKC, punctuation to spaces, no articles, single spaces."""
    text = unicodedata.normalize("NFKC", "" if text is None else str(text)).lower()
    text = _PUNCTUATION.sub(" ", text)
    return " ".join(_ARTICLES.sub(" ", text).split())


def split_items(answer: Any) -> list[str]:
    """The items of a set answer (a list, or text with separators), each normalised; sorted and unique."""
    if isinstance(answer, list | tuple | set | frozenset):
        raw = [str(a) for a in answer]
    else:
        raw = _ITEM_SPLIT.split(str(answer or ""))
    items = {normalize_text(_BULLET.sub("", item)) or item.strip().lower() for item in raw}  # keep an item "A"
    return sorted(item for item in items if item)


def parse_number(text: Any) -> float | None:
    """The first number in ``text`` (digits with optional thousands commas and decimals, or number words)."""
    if isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return float(text)
    text = str(text or "")
    found = _NUMBER.search(text)
    if found:
        return float(found.group(0).replace(",", ""))
    words = re.findall(r"[a-z]+", text.lower().replace("-", " "))
    for i, word in enumerate(words):
        if word in _TENS:
            unit = _UNITS.get(words[i + 1]) if i + 1 < len(words) else None
            return float(_TENS[word] + (unit if unit is not None and 0 < unit < 10 else 0))
        if word in _UNITS:
            return float(_UNITS[word])
    return None


def format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"


def parse_boolean(text: Any) -> bool | None:
    if isinstance(text, bool):
        return text
    words = normalize_text(text).split()
    if not words:
        return None
    if words[0] in _YES:
        return True
    if words[0] in _NO:
        return False
    return None


def infer_answer_type(answer: Any) -> str:
    """A gold answer's type when none is given: lists are sets, yes/no is boolean, a bare number is a number,
    anything else an entity (commas alone do not make a set: names such as "Aphasia, Primary Progressive")."""
    if isinstance(answer, list | tuple | set | frozenset):
        return "set"
    if isinstance(answer, bool):
        return "boolean"
    if isinstance(answer, int | float):
        return "number"
    text = normalize_text(answer)
    if text in _YES | _NO:
        return "boolean"
    if re.fullmatch(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?", str(answer).strip()):
        return "number"
    return "entity"


def check_answer_type(answer_type: str | None, gold: Any) -> str:
    if answer_type is None:
        return infer_answer_type(gold)
    if answer_type not in ANSWER_TYPES:
        raise ValueError(f"unknown answer type {answer_type!r}; valid: {', '.join(ANSWER_TYPES)}")
    return answer_type


def normalize_answer(answer: Any, answer_type: str) -> str:
    """``answer`` in the normal form of ``answer_type`` (a string; set items joined by ``" | "``)."""
    check_answer_type(answer_type, answer)
    if answer_type == "set":
        return " | ".join(split_items(answer))
    if answer_type == "number":
        value = parse_number(answer)
        return format_number(value) if value is not None else normalize_text(answer)
    if answer_type == "boolean":
        value = parse_boolean(answer)
        return normalize_text(answer) if value is None else ("yes" if value else "no")
    if isinstance(answer, list | tuple | set | frozenset):
        answer = ", ".join(str(a) for a in answer)
    return normalize_text(answer)


def exact_match(prediction: Any, gold: Any, answer_type: str | None = None) -> float:
    """1.0 when the normal forms are equal (sets: same items in any order), else 0.0."""
    answer_type = check_answer_type(answer_type, gold)
    if prediction is None:
        return 0.0
    return float(normalize_answer(prediction, answer_type) == normalize_answer(gold, answer_type))


def token_f1(prediction: Any, gold: Any, answer_type: str | None = None) -> float:
    """F1 of the token bags of the two normal forms (1.0 when both are empty)."""
    answer_type = check_answer_type(answer_type, gold)
    predicted = normalize_answer(prediction, answer_type).replace("|", " ").split() if prediction is not None else []
    expected = normalize_answer(gold, answer_type).replace("|", " ").split()
    if not predicted and not expected:
        return 1.0
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def item_f1(prediction: Any, gold: Any) -> float:
    """F1 over whole normalised items of two set answers."""
    predicted, expected = set(split_items(prediction)), set(split_items(gold))
    if not predicted and not expected:
        return 1.0
    common = len(predicted & expected)
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def answer_metrics(prediction: Any, gold: Any, answer_type: str | None = None) -> dict[str, float]:
    """``exact_match`` and ``f1`` (plus ``item_f1`` for sets) of one answer."""
    answer_type = check_answer_type(answer_type, gold)
    metrics = {"exact_match": exact_match(prediction, gold, answer_type), "f1": token_f1(prediction, gold, answer_type)}
    if answer_type == "set":
        metrics["item_f1"] = item_f1(prediction, gold) if prediction is not None else 0.0
    return metrics


def mean_answer_metrics(rows: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Mean of each metric over the rows that have it."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for row in rows:
        for name, value in row.items():
            sums[name] = sums.get(name, 0.0) + float(value)
            counts[name] = counts.get(name, 0) + 1
    return {name: sums[name] / counts[name] for name in sums}
