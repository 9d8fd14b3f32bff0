"""The offline policy on a graph whose relations no question verb names (issue 46): foods, plants and animals cut
from WordNet (``tests/fixtures/food_schema``). A question saying more than a name asks about the named node; "what
else ... the same" never asks for it; a name inside a quoted description anchors nothing; "high" needs an answer
the graph links to the question's entities."""

from __future__ import annotations

import pytest

from tests.methods.ark.conftest import names


@pytest.mark.parametrize("question", ["Where does largemouth bass come from?", "What is largemouth bass made of?"])
def test_words_beyond_the_name_ask_about_the_named_node(foods, question):
    result = foods.retrieve(question)
    assert "largemouth bass" not in names(result)
    assert "asks for the node it names" not in (result.confidence_reason or "")


@pytest.mark.parametrize("question", ["I need the record for largemouth bass.", "Tell me about largemouth bass.",
                                      "What is largemouth bass?"])
def test_a_lookup_still_answers_with_the_named_node(foods, question):
    result = foods.retrieve(question)
    assert names(result, 1) == ["largemouth bass"]
    assert result.confidence == "high"


def test_what_else_in_the_same_category_leaves_the_named_node_out(foods):
    result = foods.retrieve("What else belongs to the same category as spoon bread?")
    top = names(result, 10)
    assert "spoon bread" not in top
    assert top[0] in {"corn cake", "skillet corn bread", "ashcake", "cornpone", "corn dab", "hush puppy",
                      "johnnycake"}
    assert result.confidence != "high"  # no word says which relation is shared: the one with most edges, a guess


def test_a_name_inside_a_quoted_description_is_no_anchor(foods):
    result = foods.retrieve('Which foods contain the food described as "edible oil-rich seed of wild mango"?')
    assert names(result, 1) == ["dika bread"]  # contains the dika nut, the node described
    assert "wild mango" not in (result.confidence_reason or "")


def test_a_type_word_inside_the_anchors_name_asks_for_no_type(foods):
    # (genera are linked to genera in the fixture, as in WordNet: Ostrea is a member of Ostreidae)
    result = foods.retrieve("Which species belong to genus Chrysanthemum?")
    assert names(result, 1) == ["chop-suey greens"]


@pytest.mark.parametrize("question", ["What food comes from genus Chrysanthemum?", "Which genus is largemouth in?"])
def test_high_needs_an_answer_linked_to_the_anchor(foods, question):
    # No food of that genus and no genus of largemouth are in the fixture: the text matches are never "high".
    result = foods.retrieve(question)
    assert result.confidence == "low"
    assert "No answer linked to" in result.confidence_reason


@pytest.mark.parametrize("question", ["What categories do the foods of largemouth fall into?",
                                      "What else belongs to the same category as dika nut?"])
def test_no_high_when_what_is_asked_for_or_linked_is_not_read(foods, question):
    # "categories" names no type or relation here; the named node of a "what else" question is linked to nothing.
    assert foods.retrieve(question).confidence != "high"
