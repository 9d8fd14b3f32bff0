"""The user's words as data (``ark/question/vocabulary.toml``): matched against any graph's schema, extended by a
graph folder's own ``vocabulary.toml``, refused with a clear error when malformed."""

from __future__ import annotations

import pytest

from ark.graph import load_graph
from ark.methods.ark.api import ARK
from ark.question import QuestionReader
from ark.question.vocabulary import VocabularyError, graph_vocabulary, read_vocabulary
from tests.support.graphs import build_clinical_graph, build_prime_like_graph


@pytest.fixture(scope="module")
def prime():
    return build_prime_like_graph()


@pytest.fixture(scope="module")
def prime_reader(prime):
    return QuestionReader(prime)


@pytest.mark.parametrize(("question", "wanted"), [
    ("What are the symptoms of Marfan syndrome?", "effect/phenotype"),
    ("Which clinical features does Homocystinuria have?", "effect/phenotype"),
    ("What manifestations are seen in Dravet syndrome?", "effect/phenotype"),
    ("Which conditions are linked to FBN1?", "disease"),
    ("Which disorders present with arachnodactyly?", "disease"),
    ("Which proteins are involved in Dravet syndrome?", "gene/protein"),
])
def test_everyday_words_name_the_types_of_a_prime_shaped_schema(prime_reader, question, wanted):
    analysis = prime_reader.read(question)
    assert analysis.target_types == [wanted]
    assert analysis.unsupported is None


def test_a_word_for_findings_points_at_the_relation_that_holds_them(prime_reader):
    assert prime_reader.read("What are the symptoms of Marfan syndrome?").relation_hints == ["phenotype_present"]
    # The type's own name says which type is wanted, not which relation.
    assert prime_reader.read("What phenotypes does Marfan syndrome have?").relation_hints == []


def test_kinds_ask_along_the_hierarchy_relation_and_are_not_refused(prime_reader):
    analysis = prime_reader.read("Which specific kinds of seizure occur in Dravet syndrome?")
    assert analysis.hierarchy == "narrower"
    assert analysis.unsupported is None
    # The kinds of a node are of the type the hierarchy orders.
    assert analysis.target_types == ["effect/phenotype"]


def test_the_offline_policy_answers_symptoms_on_a_prime_shaped_graph(prime):
    from tests.support.graphs import build_index

    result = ARK(prime, index=build_index(prime)).retrieve("What are the symptoms of Dravet syndrome?")
    dravet = prime.index_of("OMIM:607208")
    linked = {int(n) for n in prime.neighbors(dravet).nodes.tolist()}
    assert result.ranked and all(n.type == "effect/phenotype" for n in result.ranked)
    assert all(n.index in linked for n in result.ranked[:2])
    assert result.confidence != "low"


def test_a_graph_folder_adds_its_own_words(tmp_path):
    folder = tmp_path / "graph"
    question = "Which ailments present with arachnodactyly?"
    assert QuestionReader(build_prime_like_graph(folder)).read(question).target_types == []
    (folder / "vocabulary.toml").write_text('[[type]]\nwords = ["ailment"]\nschema = ["disease"]\n')
    graph = load_graph(folder)
    assert QuestionReader(graph).read(question).target_types == ["disease"]
    result = ARK(graph).retrieve(question)
    assert result.ranked[0].type == "disease"


def test_the_shipped_words_work_on_the_hpo_shaped_graph_too():
    reader = QuestionReader(build_clinical_graph())
    analysis = reader.read("What are the signs of Marfan syndrome?")
    assert analysis.target_types == ["phenotype"] and analysis.relation_hints == ["has_phenotype"]
    assert reader.read("Which illnesses are associated with FBN1?").target_types == ["disease"]


@pytest.mark.parametrize(("text", "message"), [
    ('[[type]]\nwords = "ailment"\n', "'words' must be a list of non-empty strings"),
    ('[[types]]\nwords = ["ailment"]\n', "unknown table(s) types; valid: frame, hierarchy, type"),
    ('[hierarchy]\ndeeper = ["x"]\n', "unknown key(s) deeper in [hierarchy]"),
    ('[[type]\n', "not valid TOML"),
])
def test_a_malformed_vocabulary_is_refused_naming_the_file_and_the_value(tmp_path, text, message):
    path = tmp_path / "vocabulary.toml"
    path.write_text(text)
    with pytest.raises(VocabularyError) as caught:
        read_vocabulary(path)
    assert str(path) in str(caught.value) and message in str(caught.value)
    with pytest.raises(VocabularyError):
        graph_vocabulary(tmp_path)
