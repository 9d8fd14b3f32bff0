"""The offline policy on relations that link a type to itself (issue 46): a package graph (``depends_on``) and a
hierarchy of formats (``subclass_of``). The side of the relation is read from the question ("What does X depend
on?" lists X's dependencies, "What depends on X?" its dependents); "the grandparent class of X" and "two levels
below X" walk two steps along the hierarchy; a word of a node's name asks for no relation ("Look up ... License")."""

from __future__ import annotations

import pytest

from tests.methods.ark.conftest import names


def test_the_subject_of_a_self_linked_relation_gets_its_targets(packages):
    result = packages.retrieve("What does requests depend on?")
    assert set(names(result, 4)) == {"urllib3", "idna", "certifi", "charset-normalizer"}  # not its dependents


@pytest.mark.parametrize("question", ["What depends on requests?", "Which packages depend on requests?"])
def test_the_object_of_a_self_linked_relation_gets_its_sources(packages, question):
    assert set(names(packages.retrieve(question), 2)) == {"responses", "docker"}  # not what requests needs


@pytest.mark.parametrize(("question", "other_side"), [
    ("What does urllib3 depend on?", {"requests", "responses", "docker", "botocore"}),  # it depends on nothing
    ("What depends on botocore?", {"urllib3"}),  # nothing depends on it
])
def test_an_empty_asked_side_is_said_not_answered_by_the_other_side(packages, question, other_side):
    result = packages.retrieve(question)
    assert not other_side & set(names(result, 10))  # they answer the converse question
    assert result.confidence == "low"
    assert "to no package by depends_on on the side asked" in result.confidence_reason


def test_the_agent_of_a_passive_is_the_relation_s_source(packages):
    assert set(names(packages.retrieve("Which packages are required by responses?"), 2)) == {"requests", "urllib3"}


@pytest.mark.parametrize(("question", "answers"), [
    ("What is the grandparent class of CSV?", {"Textual format"}),
    ("Which formats are two levels below File format?", {"Tabular format", "JSON", "BAM"}),
    ("What are the subclasses of the subclasses of File format?", {"Tabular format", "JSON", "BAM"}),
])
def test_two_steps_along_the_hierarchy(packages, question, answers):
    assert set(names(packages.retrieve(question), len(answers))) == answers  # not the first step's nodes


def test_two_conditions_along_the_hierarchy_are_no_two_steps(packages):
    result = packages.retrieve("Which formats are kinds of File format and kinds of Textual format?")
    assert "CSV" not in names(result, 3)  # a grandchild of File format, not a kind of both


@pytest.mark.parametrize(("question", "answer"), [("Look up Mozilla Public License 2.0 (MPL 2.0).",
                                                   "Mozilla Public License 2.0 (MPL 2.0)"),
                                                  ("Show me Python Software Foundation License.",
                                                   "Python Software Foundation License")])
def test_a_relation_word_inside_the_name_looked_up_asks_for_no_relation(packages, question, answer):
    # "License" names licensed_under, but inside the licence's name: the licence is asked for, not its packages
    assert names(packages.retrieve(question), 1) == [answer]


def test_the_relation_asked_selects_the_people(packages):
    assert names(packages.retrieve("Who maintains requests?")) == ["Nate Prewitt"]  # not its author


def test_a_relation_the_named_node_lacks_is_said_and_not_high(packages):
    result = packages.retrieve("Who maintains idna?")  # idna has an author and no maintainer
    assert result.confidence == "low"
    assert "no person by maintained_by" in result.confidence_reason


def test_a_described_node_s_label_stands_for_it_as_the_subject(packages):
    pytest.importorskip("sentence_transformers")  # "require" means depends_on by the packaged MiniLM (no stem says so)
    result = packages.retrieve('Which packages does the package described as "A utility library for mocking out the '
                               'requests Python library" require?')
    assert set(names(result, 2)) == {"requests", "urllib3"}  # what responses needs, not what needs it


@pytest.mark.parametrize(("question", "answers"), [
    ("Which licences do the dependencies of typing-inspect use?", {"Python Software Foundation License"}),
    ("What licences do the packages requests depends on use?",
     {"MIT License", "BSD License", "Mozilla Public License 2.0 (MPL 2.0)"}),
    ("Under which licences are the packages that depend on urllib3 released?", {"Apache Software License"}),
])
def test_a_relation_linking_a_type_to_itself_is_a_first_hop_to_another_type(packages, question, answers):
    # typing-inspect and requests are MIT and Apache themselves: their own licence is not what is asked
    result = packages.retrieve(question)
    assert {n.name for n in result.ranked[:len(answers)]} == answers


def test_a_first_hop_named_by_a_noun_leaves_its_side_open(packages):
    # "the dependencies of X" and "the dependents of X" name opposite sides of depends_on: no grammar tells them
    # apart, so both sides are read and the answer is not "high".
    result = packages.retrieve("Which licences do the dependencies of requests use?")
    assert result.confidence != "high"
    assert "MIT License" in {n.name for n in result.ranked[:2]}
