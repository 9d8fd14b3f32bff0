"""Offline ARK against bm25 and bm25-rel on the film fixture (issue 46): questions of six kinds, exact answers.

    python benchmarks/offline_films.py [--graph tests/fixtures/film_schema] [--show-failures]

The graph (``tests/fixtures/film_schema``: persons, films, genres; ``directed``, ``acted_in``, ``has_genre``) is
imported with ARK's table importer. Each question's answer set is computed from the graph's edges; the kinds are a
name lookup (several phrasings), a description → the film, a relation named by a verb, an agent noun or "who", an
intersection of two conditions, a two-hop through an intermediate node, and "other X sharing Y" (the named node
left out). Prints per kind the Hit@1 of each method, and for ark how often "high" confidence was right. A
development set: it was written beside the offline policy's schema reading, so read it as such (the held-out
figures are on graphs and questions the policy never saw).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT = HERE.parent / "tests" / "fixtures" / "film_schema"
LOOKUPS = ("Look up {x}.", "I need the record for {x}.", "Tell me about {x}.", "{x}")


def linked(graph, index: int, relation: str, outgoing: bool) -> set[int]:
    """The nodes ``index`` links to by ``relation`` (``outgoing``: index is the edge's source)."""
    code = graph.relation_code(relation)
    n = graph.neighbors(index)
    return {int(v) for v, r, o in zip(n.nodes.tolist(), n.relations.tolist(), n.outgoing.tolist(), strict=True)
            if r == code and bool(o) == outgoing}


def questions(graph) -> list[tuple[str, str, set[int]]]:
    """(kind, question, answers) over every film, person and genre of the graph."""
    films, persons = graph.nodes_of_type("film").tolist(), graph.nodes_of_type("person").tolist()
    name = graph.name
    out: list[tuple[str, str, set[int]]] = []
    for n, film in enumerate(films):
        out.append(("lookup", LOOKUPS[n % len(LOOKUPS)].format(x=name(film)), {film}))
        description = graph.text(film).split("description: ", 1)[-1].rstrip(".")
        out.append(("description", f"Which film is about this: {description[0].lower()}{description[1:]}?", {film}))
        directors = linked(graph, film, "directed", outgoing=False)
        actors = linked(graph, film, "acted_in", outgoing=False)
        wording = ("Who directed {x}?", "Which director made {x}?", "Who acted in {x}?", "Which actors acted in {x}?")
        asked = wording[n % 4].format(x=name(film))
        out.append(("relation", asked, directors if n % 4 < 2 else actors))
        same = {f for d in directors for f in linked(graph, d, "directed", outgoing=True)} - {film}
        if same:
            out.append(("other", f"Which other films share a director with {name(film)}?", same))
    for person in persons:
        directed = linked(graph, person, "directed", outgoing=True)
        acted = linked(graph, person, "acted_in", outgoing=True)
        if directed:
            out.append(("relation", f"Which films did {name(person)} direct?", directed))
            genres = {g for f in directed for g in linked(graph, f, "has_genre", outgoing=True)}
            out.append(("two-hop", f"Which genres are the films directed by {name(person)}?", genres))
            cast = {a for f in directed for a in linked(graph, f, "acted_in", outgoing=False)}
            if cast:
                out.append(("two-hop", f"Which actors acted in films directed by {name(person)}?", cast))
            for genre in sorted({g for f in directed for g in linked(graph, f, "has_genre", outgoing=True)})[:1]:
                both = {f for f in directed if genre in linked(graph, f, "has_genre", outgoing=True)}
                out.append(("intersection", f"Which {name(genre).lower()} films did {name(person)} direct?", both))
        if acted:
            co = {a for f in acted for a in linked(graph, f, "acted_in", outgoing=False)} - {person}
            if co:
                out.append(("other", f"Which other actors acted in a film with {name(person)}?", co))
            for other in persons:
                both = acted & linked(graph, other, "acted_in", outgoing=True)
                if other > person and both:
                    out.append(("intersection", f"Which films did {name(person)} and {name(other)} act in?", both))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--graph", type=Path, default=DEFAULT)
    parser.add_argument("--show-failures", action="store_true")
    args = parser.parse_args(argv)
    from ark.loaders.tabular import load_tabular
    from ark.methods.ark.api import ARK
    from ark.methods.registry import build_method

    graph = load_tabular(args.graph)
    ark = ARK(graph)
    baselines = {m: build_method(m, graph) for m in ("bm25", "bm25-rel")}
    hits: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    high: dict[str, list[bool]] = defaultdict(list)
    for kind, question, right in questions(graph):
        result = ark.retrieve(question)
        ok = bool(result.ranked) and result.ranked[0].index in right
        hits[kind]["ark"].append(ok)
        if result.confidence == "high":
            high[kind].append(ok)
        if args.show_failures and not ok:
            print(f"fail {kind}: {question} -> {[n.name for n in result.ranked[:3]]} ({result.confidence})")
        for method, retriever in baselines.items():
            ranked = retriever.retrieve(question, 5).indices
            hits[kind][method].append(bool(ranked) and ranked[0] in right)
    print("| kind | n | bm25 | bm25-rel | ark (offline) | ark high right |\n|---|---:|---:|---:|---:|---:|")
    for kind in [*hits, "all"]:
        rows = hits[kind] if kind != "all" else {m: [x for k in hits for x in hits[k][m]]
                                                 for m in ("bm25", "bm25-rel", "ark")}
        oks = high[kind] if kind != "all" else [x for k in high for x in high[k]]
        cells = [f"{sum(rows[m]) / len(rows[m]):.2f}" for m in ("bm25", "bm25-rel", "ark")]
        print(f"| {kind} | {len(rows['ark'])} | {' | '.join(cells)} | {sum(oks)}/{len(oks)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
