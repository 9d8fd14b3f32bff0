"""Reading a relation's name as English (issue 46): stems shared by a question word and a relation name, agent
nouns that ask for the relation's doer, and full stops that lie inside names."""

from __future__ import annotations

import pytest

from ark.question.schema_words import SchemaWords, agent_type, excludes_outside, split_keeps, stems

RELATIONS = ["directed", "acted_in", "has_genre", "maintained_by", "author_of", "requires"]
SCHEMA = [("person", "directed", "film"), ("person", "acted_in", "film"), ("film", "has_genre", "genre"),
          ("package", "maintained_by", "person"), ("person", "author_of", "package")]


@pytest.mark.parametrize(("words", "relation", "agent"), [
    ("who directed parasite", "directed", False),
    ("which director made barbie", "directed", True),
    ("which actors acted with x", "acted_in", True),
    ("who maintains x", "maintained_by", False),
    ("the authors of x", "author_of", True),
    ("what does x require", "requires", False),
])
def test_a_question_word_names_the_relation_of_its_stem(words, relation, agent):
    named = SchemaWords(RELATIONS).named(words.split())
    assert [(n.relation, n.agent) for n in named] == [(relation, agent)]


def test_words_of_no_relation_name_none():
    assert SchemaWords(RELATIONS).named(["which", "films", "are", "about", "time", "travel"]) == []


def test_type_words_are_left_to_the_types():
    assert SchemaWords(RELATIONS, ignored={"genre"}).named(["which", "genre"]) == []


def test_a_relation_description_names_it_too():
    words = SchemaWords(["rel_7"], {"rel_7": "the licence under which a package is released"})
    assert [n.relation for n in words.named(["under", "which", "licence", "is", "x", "released"])] == ["rel_7"]


def test_the_agent_of_a_passive_relation_is_its_target():
    assert agent_type("directed", SCHEMA) == "person"
    assert agent_type("maintained_by", SCHEMA) == "person"
    assert agent_type("author_of", SCHEMA) == "person"


def test_stems_cut_generic_endings_only():
    assert "direct" in stems("directed") and "direct" in stems("director")
    assert "act" in stems("actors") and "act" in stems("acted")
    assert stems("x") == {"x"}


@pytest.mark.parametrize(("text", "kept"), [
    ("Dr. Smith wrote it", True), ("Which depends on X-1.0 now", True), ("Look up Tom.", False),
    ("a lack of vitamin D. Which disease", False), ("the end. Which", False),
])
def test_a_full_stop_inside_a_name_is_kept(text, kept):
    assert split_keeps(text, text.index(".")) is kept


@pytest.mark.parametrize(("question", "names", "excludes"), [
    ("Which phenotypes are the mode of inheritance of Corneal opacification with other ocular anomalies?",
     ["Corneal opacification with other ocular anomalies"], False),
    ("Which other films did the director of Parasite make?", ["Parasite"], True),
    ("Which packages besides Other Tools depend on urllib3?", ["Other Tools", "urllib3"], True),
    ("Which genes are linked to OTHER ANOMALIES syndrome?", ["other anomalies syndrome"], False),
])
def test_an_excluding_word_inside_a_name_is_part_of_the_name(question, names, excludes):
    assert excludes_outside(question, names) is excludes
