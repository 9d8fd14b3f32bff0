"""Two tracked evaluation sets that test search by name, generated reproducibly from a graph with a fixed seed.

- **Name lookup** (:func:`name_lookup_queries`): for ``per_type`` sampled nodes of each type, the node's own name,
  a lower-cased variant with punctuation turned into spaces (``"Ehlers-Danlos syndrome, type IV"`` ->
  ``"ehlers danlos syndrome type iv"``; only when it differs from the name) and, for nodes that have them, one
  of their exact synonyms (``exact_synonyms``, e.g. HPO phenotypes). Any node one of whose names (name or exact
  synonym) reads the same as the query counts as an answer. ``template`` is the node type, so ``ark eval``
  prints Hit@1 per type; the id ends with the variant (``name``, ``lower``, ``synonym``).
- **Layperson synonyms** (:func:`layperson_queries`): questions asking for the clinical term of a layperson
  phrase ("What is the clinical term for 'Large head'?" -> Macrocephaly), from the ``layperson_synonyms`` property
  (the HPO loader's EXACT layperson synonyms). A phrase that is itself the name of a node of that type is skipped
  (its clinical term would be itself); every node listing the phrase as a layperson synonym is an answer.

Both are written by ``ark quiz GRAPH --recipe hpo-names`` / ``--recipe hpo-layperson`` (seeds fixed in
:data:`LOOKUP_RECIPES`), and ``benchmarks/recipes/hpo_names.sh`` evaluates them.
"""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..graph import KnowledgeGraph
from ..index.exact import exact_key

NAME_KEYS = ("name", "exact_synonyms")
LAYPERSON_KEY = "layperson_synonyms"
LAYPERSON_PHRASINGS = (
    'What is the clinical term for "{phrase}"?',
    'A patient describes their problem as "{phrase}". Which phenotype term is that?',
    "Which medical term do clinicians use for {lower}?",
    "Find the phenotype that laypeople call {lower}.",
)


@dataclass(frozen=True)
class LookupRecipe:
    """A fixed configuration of one of the sets above."""

    kind: str  # "names" or "layperson"
    seed: int
    per_type: int = 500  # names: nodes per type
    n: int = 500  # layperson: questions
    node_types: tuple[str, ...] | None = None  # names: the types to sample (None: every type)


LOOKUP_RECIPES: dict[str, LookupRecipe] = {
    "hpo-names": LookupRecipe("names", seed=20250116, per_type=500, node_types=("gene", "disease", "phenotype")),
    "hpo-layperson": LookupRecipe("layperson", seed=20250117, n=500),
}


def lower_variant(name: str) -> str:
    """The name lower-cased with punctuation turned into spaces (the form a hurried user types)."""
    return exact_key(name)


def _texts(value: object) -> list[str]:
    """A property's values as text: a list's items, one value as itself, none for an absent one."""
    if value is None:
        return []
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _names_of(graph: KnowledgeGraph, i: int) -> list[str]:
    props = graph.properties(i)
    flat = [graph.name(i), *(text for key in NAME_KEYS[1:] for text in _texts(props.get(key)))]
    return [v for v in flat if v]


def _nodes_by_name_key(graph: KnowledgeGraph) -> dict[str, list[int]]:
    by_key: dict[str, list[int]] = defaultdict(list)
    for i in range(graph.num_nodes):
        for value in dict.fromkeys(exact_key(v) for v in _names_of(graph, i)):
            if value:
                by_key[value].append(i)
    return by_key


def name_lookup_queries(graph: KnowledgeGraph, per_type: int = 500, seed: int = 0,
                        node_types: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The name-lookup set (see the module doc): query records in type, then node, then variant order."""
    rng = random.Random(seed)
    by_key = _nodes_by_name_key(graph)
    records: list[dict[str, Any]] = []
    for node_type in node_types or tuple(graph.node_types):
        node_type = graph.resolve_node_type(node_type)
        members = [int(i) for i in graph.nodes_of_type(node_type) if exact_key(graph.name(int(i)))]
        chosen = sorted(rng.sample(members, min(per_type, len(members))))
        for i in chosen:
            name = graph.name(i)
            variants = [("name", name)]
            if lower_variant(name) and lower_variant(name) != name:
                variants.append(("lower", lower_variant(name)))
            synonyms = [s for s in _texts(graph.properties(i).get("exact_synonyms")) if exact_key(s) != exact_key(name)]
            if synonyms:
                variants.append(("synonym", rng.choice(synonyms)))
            for variant, text in variants:
                answers = by_key.get(exact_key(text), [i])
                records.append({"id": f"{graph.node_id(i)}|{variant}", "query": text,
                                "answer_ids": [graph.node_id(a) for a in answers], "template": node_type})
    return records


def layperson_queries(graph: KnowledgeGraph, n: int = 500, seed: int = 0) -> list[dict[str, Any]]:
    """The layperson-synonym question set (see the module doc)."""
    rng = random.Random(seed)
    named: dict[str, set[str]] = defaultdict(set)  # name key -> node types so named
    phrases: dict[str, dict[str, Any]] = {}  # phrase key -> {"phrase", "type", "nodes"}
    for i in range(graph.num_nodes):
        named[exact_key(graph.name(i))].add(graph.node_type(i))
    for i in range(graph.num_nodes):
        for phrase in _texts(graph.properties(i).get(LAYPERSON_KEY)):
            key = exact_key(phrase)
            if not key:
                continue
            entry = phrases.setdefault(key, {"phrase": phrase, "type": graph.node_type(i), "nodes": []})
            if graph.node_type(i) == entry["type"] and i not in entry["nodes"]:
                entry["nodes"].append(i)
    usable = sorted(key for key, entry in phrases.items() if entry["type"] not in named.get(key, set()))
    records = []
    for number, key in enumerate(sorted(rng.sample(usable, min(n, len(usable))))):
        entry = phrases[key]
        phrasing = rng.randrange(len(LAYPERSON_PHRASINGS))
        query = LAYPERSON_PHRASINGS[phrasing].format(phrase=entry["phrase"], lower=entry["phrase"].lower())
        records.append({"id": f"layperson-s{seed}-{number:04d}", "query": query,
                        "answer_ids": [graph.node_id(a) for a in entry["nodes"]], "template": "layperson_synonym",
                        "phrase": entry["phrase"], "phrasing": phrasing})
    return records


def generate_lookup(graph: KnowledgeGraph, name: str) -> list[dict[str, Any]]:
    """The records of recipe ``name`` (one of :data:`LOOKUP_RECIPES`)."""
    if name not in LOOKUP_RECIPES:
        raise ValueError(f"unknown lookup recipe {name!r}; valid: {', '.join(LOOKUP_RECIPES)}")
    recipe = LOOKUP_RECIPES[name]
    if recipe.kind == "names":
        return name_lookup_queries(graph, recipe.per_type, recipe.seed, recipe.node_types)
    return layperson_queries(graph, recipe.n, recipe.seed)
