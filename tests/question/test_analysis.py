"""Question analysis (``ark.question``): what is asked when the schema cannot say it, connective clauses, asides."""

from __future__ import annotations

import pytest

from ark.question import QuestionReader
from tests.support.graphs import build_conditions_graph


@pytest.fixture(scope="module")
def reader():
    return QuestionReader(build_conditions_graph())


@pytest.mark.parametrize(("question", "asked"), [
    ("What is the best treatment for Marfan syndrome?", "treatment"),
    ("Which drugs are used against Homocystinuria?", "drugs"),
    ("What is the prevalence of Marfan syndrome?", "prevalence"),
    ("Which clinical trials study FBN1?", "clinical trials"),
])
def test_a_request_the_schema_cannot_express_is_named(reader, question, asked):
    assert reader.read(question).unsupported == asked


@pytest.mark.parametrize("question", [
    "Which diseases present with arachnodactyly and ectopia lentis?",  # a node type is named
    "What is the inheritance of Marfan syndrome?",  # a relation (has_inheritance) is named
    "What causes Marfan syndrome?",  # nothing is asked by a noun
    "A patient presents with nystagmus and thin skin.",  # no interrogative at all
])
def test_questions_the_schema_can_express_are_not_flagged(reader, question):
    assert reader.read(question).unsupported is None


def test_long_mentions_are_cut_into_clauses_at_connectives(reader):
    analysis = reader.read("Which disease with autosomal recessive inheritance is linked to the FANCA gene and shows "
                           "pancytopenia?")
    # "Which disease" says what is asked, not which node: no clause (see the next test).
    assert [c.text for c in analysis.clauses] == ["autosomal recessive inheritance", "the FANCA gene"]


@pytest.mark.parametrize(("question", "clauses"), [
    ("Which genes are associated with diseases that present with ectopia lentis?", ["ectopia lentis"]),
    ("Can you name the genes that are associated with diseases that are caused by variants in the gene FANCA?",
     ["variants in the gene FANCA"]),
    ("What phenotypes are associated with changes in genes that are linked to Marfan syndrome?", ["Marfan syndrome"]),
    ("Which phenotypes are seen in patients with Sandhoff disease that has autosomal recessive inheritance?",
     ["Which phenotypes are seen in patients", "Sandhoff disease", "has autosomal recessive inheritance"]),
])
def test_clauses_that_only_name_a_node_type_are_not_searched(reader, question, clauses):
    """Parts made of question words and type words ("Which genes", "diseases", "are") or headed by a type word
    ("changes in genes") say what kind of node is meant; a type word after a capitalised word is part of a name."""
    assert [c.text for c in reader.read(question).clauses] == clauses


def test_a_parenthesised_list_is_an_aside_not_mentions(reader):
    analysis = reader.read("Which disease shows a reduction of all blood cell types (red cells, white cells, and "
                           "platelets)?")
    assert [m.text for m in analysis.mentions] == ["Which disease shows a reduction of all blood cell types"]


def test_a_type_word_inside_a_proper_name_does_not_ask_for_that_type(reader):
    assert reader.read("Which drugs are used against Marfan disease?").unsupported == "drugs"
    assert reader.read("Which diseases are used against Marfan syndrome?").unsupported is None


def test_with_or_without_belongs_to_a_name_and_negates_nothing(reader):
    """Disease names say "X with or without Y": one mention, not two, and not a finding said to be absent."""
    analysis = reader.read("Which genes are linked to Retinal dystrophy and iris coloboma with or without congenital "
                           "cataract?")
    assert [m.text for m in analysis.mentions][-1] == "iris coloboma with or without congenital cataract"
    assert not any(m.negated for m in analysis.mentions)
    assert "without congenital cataract" in analysis.question_without_negations
    assert reader.read("Which diseases present with nystagmus and without thin skin?").mentions[-1].negated


def test_a_mention_says_whether_its_own_first_word_negates_it(reader):
    """"absent speech" is negated by its own word (which may be part of a name), "absent thumb" in "Absent: ..." by
    its sentence as well (see the offline policy's anchoring.stated_in_names)."""
    analysis = reader.read("A patient presents with ataxia, absent speech. Absent: seizures, absent thumb.")
    said = {m.text: (m.negated, m.cued) for m in analysis.mentions}
    assert said["absent speech"] == (True, True)
    assert said["absent thumb"] == (True, False) and said["seizures"] == (True, False)
    assert not any(negated for negated, _ in (said[t] for t in said if "ataxia" in t))


@pytest.mark.parametrize(("question", "phrase"), [
    ('What is the clinical term for "Spider fingers"?', "Spider fingers"),
    ("Which medical term do clinicians use for dislocated lens?", "dislocated lens"),
    ("Find the phenotype that laypeople call involuntary rhythmic eye movements.",
     "involuntary rhythmic eye movements"),
    ('A patient describes their problem as "Dancing eyes". Which phenotype term is that?', "Dancing eyes"),
    ("What do people call long slender fingers?", "long slender fingers"),
    ("What is increased body height called?", "increased body height"),
])
def test_a_question_asking_what_something_is_called_names_the_node_it_wants(reader, question, phrase):
    """Asking for a term or name is not a request the schema lacks: the phrase is a name or synonym of the answer
    (and its quotation marks leave no empty quotes in a mention)."""
    analysis = reader.read(question)
    assert analysis.named_phrase == phrase
    assert analysis.unsupported is None
    assert all('" "' not in m.text for m in analysis.mentions)


def test_a_type_word_inside_the_name_asked_about_asks_for_no_type(reader):
    analysis = reader.read("Which medical term do clinicians use for translucent skin disease?")
    assert analysis.named_phrase == "translucent skin disease"
    assert analysis.target_types == []
    assert reader.read("Find the phenotype that laypeople call translucent skin disease.").target_types == ["phenotype"]


@pytest.mark.parametrize("question", [
    "Can you name the genes that are associated with diseases caused by variants in the gene FANCA?",  # name: a verb
    "List the genes associated with diseases described with the term 'vascular'.",  # a term given in passing
    "Which disease is linked to the FBN1 gene and shows ectopia lentis (also called dislocated lens)?",
    "Which genes are linked to a disease called Marfan syndrome?",
    "What is the best treatment for Marfan syndrome?",
])
def test_a_name_given_in_passing_is_not_what_is_asked(reader, question):
    assert reader.read(question).named_phrase is None


@pytest.mark.parametrize(("question", "quoted"), [
    ('A patient describes their problem as "Witch\'s chin". Which phenotype term is that?', ["Witch's chin"]),
    ("Which genes have 'autism' in their description and mention 'caused'?", ["autism", "caused"]),
    ("Which disease shows epilepsia partialis continua (also called Kojevnikov's or Kozhevnikov's epilepsy)?", []),
])
def test_a_quoted_phrase_ends_at_the_mark_that_opened_it(reader, question, quoted):
    """An apostrophe is no closing quote: "Witch's chin" is one phrase, and two possessives quote nothing."""
    assert reader.read(question).quoted == quoted


@pytest.mark.parametrize(("question", "direction", "steps"), [
    ("What is the grandparent of Nystagmus?", "broader", 2),
    ("Which phenotypes are two levels below Nystagmus?", "narrower", 2),
    ("What are the subtypes of the subtypes of Nystagmus?", "narrower", 2),
    ("What is the parent of Nystagmus?", "broader", 1),
    ("Which phenotypes are more specific forms of Nystagmus?", "narrower", 1),  # two phrases, one step
    ("Which phenotypes are kinds of Nystagmus and kinds of Ataxia?", "narrower", 1),  # two conditions
])
def test_two_steps_along_the_hierarchy_are_read(reader, question, direction, steps):
    analysis = reader.read(question)
    assert (analysis.hierarchy, analysis.hierarchy_steps) == (direction, steps)
