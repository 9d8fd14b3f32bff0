"""ark.text.clean_inline: one line, whitespace collapsed, cut with an ellipsis; its shortcut for names that are
already collapsed gives what the definition does."""

from __future__ import annotations

import random

from ark.text import clean_inline

PIECES = ["a", "Bc", " ", "  ", "\n", "\t", "\r", "\x0b", "\x0c", "\x1c", "\x1f", "\x85", "\xa0", "\u1680", "\u2003",
          "\u2028", "\u2029", "\u202f", "\u205f", "\u3000", "\u200b", "\u180e", "é", "-", "(x)", "..."]


def test_clean_inline_equals_split_and_join_then_cut_on_random_text():
    rng = random.Random(5)
    for _ in range(20000):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12)))
        limit = rng.choice([1, 3, 5, 10, 40])
        flat = " ".join(text.split())
        expected = flat if len(flat) <= limit else flat[: max(limit - 3, 1)].rstrip() + "..."
        assert clean_inline(text, limit) == expected, (text, limit)


def test_clean_inline_takes_any_value_as_its_text():
    assert clean_inline(12345, 10) == "12345"
    assert clean_inline(None, 10) == "None"
