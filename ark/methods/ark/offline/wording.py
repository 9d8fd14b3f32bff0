"""How the offline policy matches a question's words to node names beyond exact words, and finds the parts of a
question it could not use (so the answer can say so instead of dropping them silently).

Pure functions of word tuples; the words that frame a question come from the vocabulary (ark/question).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

STEM = 5  # letters two words must share to count as one stem ("inherited" ~ "inheritance")


def same_stem(a: str, b: str) -> bool:
    """Whether two words are equal or share their first ``STEM`` letters (both at least that long)."""
    return a == b or (len(a) >= STEM and len(b) >= STEM and a[:STEM] == b[:STEM])


def plural_of(word: str, other: str) -> bool:
    """Whether ``word`` is ``other`` in the plural (seizures, syndromes, ataxias, ...)."""
    return word in (other + "s", other + "es") or (other.endswith("y") and word == other[:-1] + "ies")


def named_by_stems(name: tuple[str, ...] | frozenset[str], words: Iterable[str]) -> bool:
    """Whether ``words`` say a node name with one word inflected differently: in the plural ("forms of cataracts"
    says "Cataract"), or, for names of three or more words, by a word of the same stem ("inherited as autosomal
    dominant" says "Autosomal dominant inheritance"). Every other name word occurs exactly."""
    said, named = set(words), set(name)
    inexact = [w for w in named if w not in said]
    if len(inexact) != 1:
        return False
    if any(plural_of(w, inexact[0]) for w in said):
        return True
    return len(named) >= 3 and any(same_stem(inexact[0], w) for w in said)


def said_with_content(name: tuple[str, ...] | frozenset[str], words: Iterable[str], ignorable: frozenset[str]) -> bool:
    """Whether the words a name shares exactly with the question hold content (not only framing or relation words
    such as "clinical" of "Clinical modifier" in "clinical modifiers of D"); a one-word name counts by itself."""
    said, named = set(words), set(name)
    exact = named & said if len(named) > 1 else named
    return any(len(w) >= 2 and not w.isdigit() and w not in ignorable for w in exact)


def unread_words(tokens: Iterable[str], used: Iterable[str], ignorable: frozenset[str]) -> list[str]:
    """The words of a part of the question that say something no anchor used: not question, type, relation or
    framing words (``ignorable``), not a number or single letter, and not sharing a stem with a used word."""
    used = set(used)
    out = []
    for token in tokens:
        if token in ignorable or token.isdigit() or len(token) < 2:
            continue
        if any(same_stem(token, w) for w in used) or any(same_stem(token, w) for w in ignorable if len(w) >= STEM):
            continue
        out.append(token)
    return out


def unread_mentions(mentions: Sequence[tuple[str, Sequence[str]]], used: Iterable[str],
                    ignorable: frozenset[str]) -> list[str]:
    """The texts of the mentions (``(text, tokens)``) that anchored nothing and state something (see
    :func:`unread_words`), each once, in the question's order."""
    used = set(used)
    out: list[str] = []
    for text, tokens in mentions:
        if text not in out and unread_words(tokens, used, ignorable):
            out.append(text)
    return out
