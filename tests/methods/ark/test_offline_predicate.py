"""The offline policy when the question's type word says what the named node is, not what is asked for ("Where is
German *an official language*?": German is the language; the countries are wanted), on a small graph of official
languages and currencies from CLDR (tests/fixtures/official_languages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ark.loaders.tabular import load_tabular
from ark.methods.ark.api import ARK

LANGUAGES = Path(__file__).parents[2] / "fixtures" / "official_languages"
GERMAN_OFFICIAL = {"Austria", "Belgium", "Switzerland", "Germany", "Liechtenstein", "Luxembourg"}


@pytest.fixture(scope="module")
def ark():
    return ARK(load_tabular(LANGUAGES))


@pytest.mark.parametrize(("question", "answers"), [
    ("Where is German an official language?", GERMAN_OFFICIAL),
    ("Where is Romansh spoken as an official language?", {"Switzerland"}),
    ("Which countries have Dutch as an official language?", {"Belgium", "Netherlands"}),
])
def test_a_type_word_saying_what_the_anchor_is_leaves_the_answers_to_the_relation(ark, question, answers):
    result = ark.retrieve(question)
    assert {n.name for n in result.ranked[:len(answers)]} == answers
    assert all(n.type == "country" for n in result.ranked[:len(answers)])


def test_a_type_word_asking_for_the_anchor_s_type_still_asks_for_it(ark):
    # "Which other languages ...": the type word comes before the anchor and asks; two hops through the countries.
    result = ark.retrieve("Which other languages are official where French is official?")
    top = [n.name for n in result.ranked[:5]]
    assert "French" not in top
    assert set(top) == {"German", "Dutch", "Luxembourgish", "Italian", "Romansh"}
    languages = ark.retrieve("Which languages are official in Belgium?")
    assert {n.name for n in languages.ranked[:3]} == {"Dutch", "French", "German"}
