"""A film graph of our own making (issue 46 asks for one beside the graphs from others' data): 40 well-known films,
their directors, main cast, composers, genres and country, written here from public film credits; the one-line
plots are ours. Larger than ``examples/films`` and with the cases the issue names (Cillian Murphy's co-stars, who
directed Parasite, which director made Barbie).

Types: film (year, plot), person, genre, country. Relations: directed_by, starring, music_by, has_genre,
made_in (film -> person, genre, country).
"""

from __future__ import annotations

import re
from pathlib import Path

from .tables import DomainData, Edge, Node, Relation, TwoHop

FILMS = Path(__file__).with_name("films.psv")  # title|year|directors|cast|composers|genres|country|plot
RELATIONS = {
    "directed_by": Relation(
        "directed_by", ask_dst=("Who directed {x}?", "Which director made {x}?", "Who was the director of {x}?"),
        ask_src=("Which films did {x} direct?", "What has {x} directed?"), clause="were directed by {x}",
        shared=("Which other films have the same director as {x}?",), target="the director"),
    "starring": Relation(
        "starring", ask_dst=("Who stars in {x}?", "Which actors appear in {x}?", "Who acted in {x}?"),
        ask_src=("Which films did {x} act in?", "What films feature {x}?"), clause="star {x}",
        shared=("Which other films share an actor with {x}?",)),
    "music_by": Relation(
        "music_by", ask_dst=("Who composed the music for {x}?", "Who wrote the score of {x}?"),
        ask_src=("Which films did {x} score?", "For which films did {x} write the music?"),
        clause="have music by {x}", shared=("Which other films have the same composer as {x}?",)),
    "has_genre": Relation(
        "has_genre", ask_dst=("What genre is {x}?", "Which genres does {x} belong to?"),
        ask_src=("Which films are {x} films?",), clause="are {x} films"),
    "made_in": Relation(
        "made_in", ask_dst=("Which country is {x} from?", "Where was {x} made?"),
        ask_src=("Which films were made in {x}?",), clause="were made in {x}"),
}
TWO_HOPS = [
    TwoHop("<starring", "starring", "Which actors acted with {x}?"),
    TwoHop("directed_by", "<directed_by", "Which other films did the director of {x} make?"),
    TwoHop("<starring", "directed_by", "Which directors has {x} worked with?"),
    TwoHop("<directed_by", "music_by", "Which composers have scored films by {x}?"),
]
PLURALS = {"film": "films", "person": "people", "genre": "genres", "country": "countries"}


def _key(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


def build(limit: int | None = None) -> DomainData:
    """The films (the first ``limit`` when given) with their people, genres and countries."""
    nodes: dict[str, Node] = {}
    edges: list[Edge] = []
    rows = [line.split("|") for line in FILMS.read_text(encoding="utf-8").strip().splitlines()[1:]]
    for title, year, directors, cast, composers, genres, country, plot in rows[:limit] if limit else rows:
        film = f"film:{_key(title)}"
        nodes[film] = Node(film, "film", title, plot, {"year": year})
        for relation, names, node_type in (("directed_by", directors, "person"), ("starring", cast, "person"),
                                           ("music_by", composers, "person"), ("has_genre", genres, "genre"),
                                           ("made_in", country, "country")):
            for name in (n.strip() for n in names.split(", ") if n.strip() not in ("", "-")):
                node_id = f"{node_type}:{_key(name)}"
                nodes.setdefault(node_id, Node(node_id, node_type, name))
                edges.append(Edge(film, node_id, relation))
    return DomainData("films", "Forty films, their directors, cast, composers, genres and countries (ours)",
                      "written for ARK's benchmarks from public film credits",
                      sorted(nodes.values(), key=lambda n: n.id), edges, RELATIONS, PLURALS, TWO_HOPS)
