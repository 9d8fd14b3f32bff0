"""A word inside a name the question states whole is part of the name: "No Woman, No Cry" is a song, not a
question excluding a song called "Cry" (the sibling of a name stated whole not being read in pieces). A negation
outside any stated name still excludes."""

from __future__ import annotations

from pathlib import Path

import pytest

from ark.loaders.tabular import load_tabular
from ark.methods.ark.api import ARK
from tests.methods.ark.conftest import names

SONGS = [("nwnc", "song", "No Woman, No Cry", "A reggae song."), ("woman", "song", "Woman", "A song."),
         ("cry", "song", "Cry", "A ballad."), ("marley", "artist", "Bob Marley", ""),
         ("lennon", "artist", "John Lennon", ""), ("ray", "artist", "Johnnie Ray", "")]
PERFORMED = [("nwnc", "marley"), ("woman", "lennon"), ("cry", "ray")]


@pytest.fixture(scope="module")
def songs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("songs")
    rows = "".join(f'{i},{t},"{n}","{d}"\n' for i, t, n, d in SONGS)
    (folder / "nodes.csv").write_text("id,type,name,description\n" + rows)
    (folder / "edges.csv").write_text("from,to,type\n" + "".join(f"{s},{t},performed_by\n" for s, t in PERFORMED))
    return ARK(load_tabular(folder))


@pytest.mark.parametrize("question", ["Who performed No Woman, No Cry?", "Which artist performed No Woman, No Cry?"])
def test_a_negation_word_inside_a_name_stated_whole_is_part_of_the_name(songs, question):
    result = songs.retrieve(question)
    assert names(result, 1) == ["Bob Marley"]  # not the closest text matches of a song said to be absent
    assert result.confidence == "high" and "No Woman, No Cry" in result.confidence_reason


def test_the_disease_named_whole_with_absent_in_it_anchors_whole(tmp_path: Path):
    # The HPO case on a graph of two diseases: "... and absent language" ends one disease's name.
    (tmp_path / "nodes.csv").write_text(
        "id,type,name,description\n"
        'long,disease,"Disorder with hypotonia, seizures, and absent language",\n'
        "short,disease,Disorder with hypotonia and seizures,\nlang,phenotype,Language,\n"
        "g1,gene,HECW2,\ng2,gene,OTUD7A,\n")
    (tmp_path / "edges.csv").write_text("from,to,type\nlong,g1,associated_with\nshort,g2,associated_with\n"
                                        "long,lang,has_phenotype\n")
    result = ARK(load_tabular(tmp_path)).retrieve(
        "What genes are linked to Disorder with hypotonia, seizures, and absent language?")
    assert names(result, 1) == ["HECW2"]
