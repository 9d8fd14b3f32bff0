"""The offline policy on a graph of another domain (issue 46): a film graph whose types and relations are its own
(person, film, genre; directed, acted_in, has_genre). The question is read against that schema: the relation a
word names, the type it leads to, the named node when it is asked for, two hops with the anchor left out."""

from __future__ import annotations

import pytest

from tests.methods.ark.conftest import names


@pytest.mark.parametrize(("question", "answer"), [
    ("Who directed Parasite?", "Bong Joon-ho"),
    ("Which director made Barbie?", "Greta Gerwig"),
    ("Who acted in Blade Runner 2049?", "Ryan Gosling"),
])
def test_the_relation_a_word_names_selects_the_answers(films, question, answer):
    result = films.retrieve(question)
    assert names(result) == [answer]  # the director alone: no actor, genre or other director beside it
    assert result.confidence == "high"


def test_an_agent_noun_asks_for_its_type_two_hops_away_without_the_anchor(films):
    result = films.retrieve("Which actors acted with Cillian Murphy?")
    top = names(result, 10)
    assert "Cillian Murphy" not in top
    assert top[0] == "Tom Hardy"  # in two of Murphy's films
    assert {"Emily Blunt", "Matt Damon", "Leonardo DiCaprio"} <= set(top)
    assert "Christopher Nolan" not in top  # he directed them: acted_in is the relation asked about
    assert all(node.type == "person" for node in result.ranked)


@pytest.mark.parametrize("question", ["I need the record for Oppenheimer.", "Look up Oppenheimer.",
                                      "Tell me about Oppenheimer."])
def test_a_lookup_answers_with_the_named_node(films, question):
    result = films.retrieve(question)
    assert names(result, 1) == ["Oppenheimer"]
    assert "asks for the node it names" in result.confidence_reason


def test_other_leaves_the_named_node_out_and_hops_through_the_relation_named(films):
    result = films.retrieve("Which other films share a director with Inception?")
    assert "Inception" not in names(result, 10)
    assert set(names(result, 3)) == {"Oppenheimer", "Dunkirk", "Interstellar"}


def test_two_named_conditions_in_one_mention_are_intersected(films):
    result = films.retrieve("Which comedy films star Margot Robbie?")
    assert names(result, 1) == ["Barbie"]
    # "star" names no relation of this graph (acted_in, directed): the answer is not decisive
    assert result.confidence == "medium"


def test_a_name_with_a_full_stop_inside_is_one_mention(films):
    from ark.question import QuestionReader

    reader = QuestionReader(films.graph)
    texts = [m.text for m in reader.read("Which films did Dr. Smith make with X-1.0 in 2001?").mentions]
    assert any("Dr. Smith" in t and "X-1.0" in t for t in texts), texts


def test_a_description_keeps_the_whole_question_search_hit(films):
    # "drama" names a genre node: the description is not hijacked by it
    result = films.retrieve("Which film is described as a drama where allied soldiers are evacuated from a French "
                            "beach?")
    assert names(result, 1) == ["Dunkirk"]
    assert result.confidence == "medium" and "describes Dunkirk" in result.confidence_reason


def test_several_relations_between_the_types_and_none_named_is_not_high(films):
    result = films.retrieve("Which films are linked to Ryan Gosling?")
    assert set(names(result, 3)) == {"Barbie", "Blade Runner 2049", "La La Land"}
    assert result.confidence != "high"


@pytest.mark.parametrize("question", ["What else has the same genre as Parasite?",
                                      "Name the films besides Parasite that are in a genre of Parasite."])
def test_sharing_a_neighbour_goes_through_the_shared_nodes_and_leaves_the_named_one_out(films, question):
    # Parasite is a thriller and a comedy: the others of either, each sharing one genre with it (a tie)
    result = films.retrieve(question)
    assert set(names(result, 4)) == {"Inception", "Memories of Murder", "Barbie", "Lady Bird"}
    assert "Parasite" not in names(result, 10)
    assert result.confidence != "high"


def test_a_plot_with_who_in_it_keeps_the_search_hit_of_the_whole_description(films):
    # "who led" would ask for a person; no person's text says the plot, the film's does
    result = films.retrieve("The story of the physicist who led the wartime project that built the first atomic bomb")
    assert names(result, 1) == ["Oppenheimer"]
