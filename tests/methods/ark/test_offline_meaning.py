"""The offline policy reads a relation question against the graph's own schema (issue 46): a stopword names no
relation, the word naming the relation asked is no condition where a node of a type the relation never links bears
it, the named node of a relation question is not padded into its answers, and, where the packaged MiniLM is
installed, a verb or agent noun no stem links to a relation ("require", "actors") is read by its meaning."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from ark.loaders.tabular import load_tabular
from ark.methods.ark.api import ARK
from tests.methods.ark.conftest import names

PACKAGES = [("fastapi", "Web framework for building APIs"), ("starlette", "The little ASGI framework"),
            ("pydantic", "Data validation using type hints"), ("anyio", "High level compatibility layer"),
            ("rich", "Render rich text and tables in the terminal"), ("pygments", "A syntax highlighting package"),
            ("typer", "Build command line applications")]
DEPENDS = [("fastapi", "starlette"), ("fastapi", "pydantic"), ("starlette", "anyio"), ("typer", "rich"),
           ("rich", "pygments")]
LICENCES = {"fastapi": "MIT", "starlette": "BSD", "pydantic": "MIT", "anyio": "MIT", "rich": "MIT",
            "pygments": "BSD", "typer": "MIT"}
AUTHORS = {"fastapi": "Sebastian Ramirez", "typer": "Sebastian Ramirez", "rich": "Will McGugan",
           "pydantic": "Samuel Colvin", "starlette": "Tom Christie", "anyio": "Alex Gronholm",
           "pygments": "Georg Brandl"}


def _write(folder: Path, nodes: list[tuple[str, str, str, str]], edges: list[tuple[str, str, str]]) -> Path:
    folder.mkdir()
    with open(folder / "nodes.csv", "w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows([("id", "type", "name", "description"), *nodes])
    with open(folder / "edges.csv", "w", newline="", encoding="utf-8") as out:
        csv.writer(out).writerows([("from", "to", "type"), *edges])
    return folder


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    nodes = [(f"pkg:{n}", "package", n, d) for n, d in PACKAGES]
    nodes += [(f"lic:{x}", "licence", x, "") for x in sorted(set(LICENCES.values()))]
    nodes += [(f"per:{x}", "person", x, "") for x in sorted(set(AUTHORS.values()))]
    edges = [(f"pkg:{a}", f"pkg:{b}", "depends_on") for a, b in DEPENDS]
    edges += [(f"pkg:{p}", f"lic:{x}", "licensed_under") for p, x in LICENCES.items()]
    edges += [(f"pkg:{p}", f"per:{x}", "written_by") for p, x in AUTHORS.items()]
    edges += [("pkg:typer", "per:Will McGugan", "maintained_by"), ("pkg:rich", "per:Will McGugan", "maintained_by")]
    return ARK(load_tabular(_write(tmp_path_factory.mktemp("packages") / "graph", nodes, edges)))


@pytest.fixture(scope="module")
def films(tmp_path_factory):
    nodes = [("f1", "film", "Slumdog Millionaire", "A Mumbai teenager reflects on his life."),
             ("f2", "film", "La La Land", "A pianist and an actress fall in love in Los Angeles."),
             ("p1", "person", "Danny Boyle", ""), ("p2", "person", "Dev Patel", ""),
             ("p3", "person", "A. R. Rahman", ""), ("p4", "person", "Damien Chazelle", ""),
             ("p5", "person", "Emma Stone", ""), ("p6", "person", "Justin Hurwitz", ""),
             ("g1", "genre", "Music", ""), ("g2", "genre", "Drama", "")]
    edges = [("f1", "p1", "directed_by"), ("f1", "p2", "starring"), ("f1", "p3", "music_by"), ("f1", "g2", "has_genre"),
             ("f2", "p4", "directed_by"), ("f2", "p5", "starring"), ("f2", "p6", "music_by"), ("f2", "g1", "has_genre")]
    return ARK(load_tabular(_write(tmp_path_factory.mktemp("films") / "graph", nodes, edges)))


def test_a_stopword_names_no_relation_and_the_type_after_which_is_asked_for(packages):
    # "under" is no agent noun of licensed_under / classified_under: the licence is asked for, not packages
    result = packages.retrieve("Under which licence is rich released?")
    assert names(result, 1) == ["MIT"]
    assert all(node.type == "licence" for node in result.ranked)


def test_the_named_node_of_a_relation_question_is_not_padded_into_its_answers(packages):
    result = packages.retrieve("Which packages does fastapi depend on?")
    assert set(names(result, 2)) == {"starlette", "pydantic"}
    assert "fastapi" not in names(result, 10)


def test_the_word_naming_the_relation_is_no_condition_on_a_type_it_never_links(films):
    # the genre "Music" bears the word that names music_by: the composer is asked for, not films of that genre
    result = films.retrieve("Who composed the music for Slumdog Millionaire?")
    assert names(result) == ["A. R. Rahman"]


def test_a_verb_no_stem_links_is_read_by_its_meaning(packages):
    pytest.importorskip("sentence_transformers")
    from ark.methods.ark.offline.meaning import _encoder

    if _encoder() is None:
        pytest.skip("the packaged MiniLM is not installed")
    result = packages.retrieve("Which packages does fastapi require?")
    assert set(names(result, 2)) == {"starlette", "pydantic"}
    assert "fastapi" not in names(result, 10)


def test_an_agent_noun_no_type_names_is_read_by_its_meaning(films):
    pytest.importorskip("sentence_transformers")
    from ark.methods.ark.offline.meaning import _encoder

    if _encoder() is None:
        pytest.skip("the packaged MiniLM is not installed")
    result = films.retrieve("Which actors appear in La La Land?")  # no type is called "actor": starring is meant
    assert names(result) == ["Emma Stone"]


@pytest.fixture(scope="module")
def families(tmp_path_factory):
    nodes = [("g1", "gene", "GNA12", ""), ("g2", "gene", "GNA13", ""), ("g3", "gene", "ITGB6", ""),
             ("g4", "gene", "ITGB1", ""), ("f1", "family", "G_12_alpha", ""), ("f2", "family", "ITGB", ""),
             ("f3", "family", "Integrins", ""), ("c1", "complex", "G_12", ""), ("c2", "complex", "Signalling_unit", "")]
    edges = [("g1", "f1", "member_of"), ("g2", "f1", "member_of"), ("g3", "f2", "member_of"), ("g4", "f2", "member_of"),
             ("f2", "f3", "member_of"), ("f1", "c1", "part_of"), ("g1", "c2", "part_of")]
    return ARK(load_tabular(_write(tmp_path_factory.mktemp("families") / "graph", nodes, edges)))


def test_the_type_of_a_named_node_is_a_stop_on_the_way(families):
    # "the family of GNA12": GNA12's family, then the complexes containing it; not GNA12's own complex
    result = families.retrieve("Which complexes contain the family of GNA12?")
    assert names(result, 1) == ["G_12"]


def test_two_type_words_in_one_noun_phrase_ask_for_the_head(families):
    # "what protein family": a family is asked for ("protein" names genes in the shipped vocabulary)
    result = families.retrieve("What protein family is ITGB6 a member of?")
    assert names(result, 1) == ["ITGB"]
    assert all(node.type == "family" for node in result.ranked)


def test_the_wanted_type_of_a_named_node_is_a_stop_only_when_the_question_steps_on(families):
    # "which *broader* family is the family of ITGB6 in?": ITGB6's family, then the family above it
    assert names(families.retrieve("Which broader family is the family of ITGB6 in?"), 1) == ["Integrins"]
    # "families that are the families of ITGB6": the wanted type said again names the answers themselves
    assert names(families.retrieve("Which families are the families of ITGB6?"), 1) == ["ITGB"]
