"""Small hand-made graphs shared by the tests (the one home of graph fixtures).

The clinical graph: a tiny, hand-made biomedical graph for tests of the agent, the offline policy and ``ark ask``.

Phenotypes, diseases and genes with short documents and typed edges, shaped like the HPO graph
(``disease -has_phenotype-> phenotype``, ``disease -associated_gene-> gene``, ``phenotype -is_a-> phenotype``).
It is small but rich enough for each offline strategy to have one clear answer:

- one hop: "Which genes are implicated in Marfan syndrome?" → FBN1 (``NCBIGene:2200``);
- shared findings: ectopia lentis + arachnodactyly + aortic root dilatation + tall stature → Marfan syndrome
  (Homocystinuria and Loeys-Dietz syndrome share only two of them each);
- two hops: genes of diseases featuring febrile seizure → SCN1A (``NCBIGene:6323``) through Dravet syndrome;
- no convincing entity: a description of bleeding after minor injury → Hemophilia A, found by broad search.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ark.graph import EdgeTable, KnowledgeGraph, NodeTable, build_graph, load_graph, save_graph

PHENOTYPES = [
    ("HP:0000118", "Phenotypic abnormality", "Root of all phenotypic abnormalities."),
    ("HP:0000478", "Abnormality of the eye", "Any abnormality of the eye, including the globe and lens."),
    ("HP:0000924", "Abnormality of the skeletal system", "An abnormality of bones, joints or limbs."),
    ("HP:0001626", "Abnormality of the cardiovascular system", "Any abnormality of the heart or vessels."),
    ("HP:0000707", "Abnormality of the nervous system", "An abnormality of the brain, spinal cord or nerves."),
    ("HP:0001083", "Ectopia lentis", "Dislocation or malposition of the crystalline lens of the eye."),
    ("HP:0000545", "Myopia", "Nearsightedness: distant objects appear blurred."),
    ("HP:0001166", "Arachnodactyly", "Abnormally long and slender fingers and toes (spider fingers)."),
    ("HP:0000098", "Tall stature", "A height above the 97th centile for age."),
    ("HP:0001382", "Joint hypermobility", "Joints that move beyond the normal range."),
    ("HP:0002616", "Aortic root dilatation", "Widening of the aortic root, at risk of dissection."),
    ("HP:0000193", "Bifid uvula", "A uvula split in two."),
    ("HP:0000316", "Hypertelorism", "Widely spaced eyes."),
    ("HP:0001250", "Seizure", "A sudden episode of abnormal electrical activity of the brain."),
    ("HP:0002373", "Febrile seizure", "A seizure triggered by fever in infancy or early childhood."),
    ("HP:0001249", "Intellectual disability", "Subnormal intellectual functioning that begins in childhood."),
    ("HP:0001263", "Global developmental delay", "Delay in reaching motor, speech and social milestones."),
    ("HP:0001892", "Abnormal bleeding", "A tendency to bleed, spontaneously or after trauma."),
    ("HP:0000978", "Bruising susceptibility", "Bruises appear after trivial knocks."),
]

IS_A = {
    "HP:0000478": "HP:0000118", "HP:0000924": "HP:0000118", "HP:0001626": "HP:0000118", "HP:0000707": "HP:0000118",
    "HP:0001083": "HP:0000478", "HP:0000545": "HP:0000478", "HP:0001166": "HP:0000924", "HP:0000098": "HP:0000924",
    "HP:0001382": "HP:0000924", "HP:0002616": "HP:0001626", "HP:0000193": "HP:0000118", "HP:0000316": "HP:0000478",
    "HP:0001250": "HP:0000707", "HP:0002373": "HP:0001250", "HP:0001249": "HP:0000707", "HP:0001263": "HP:0000707",
    "HP:0001892": "HP:0001626", "HP:0000978": "HP:0001892",
}

# (id, name, text, phenotypes, genes)
DISEASES = [
    ("OMIM:154700", "Marfan syndrome",
     "A connective tissue disorder affecting the eyes, skeleton and heart.",
     ["HP:0001083", "HP:0001166", "HP:0002616", "HP:0000098", "HP:0000545", "HP:0001382"], ["NCBIGene:2200"]),
    ("OMIM:609192", "Loeys-Dietz syndrome",
     "An aortic aneurysm syndrome with widespread arterial tortuosity and craniofacial features.",
     ["HP:0002616", "HP:0001166", "HP:0000193", "HP:0000316", "HP:0001382"], ["NCBIGene:7046", "NCBIGene:7048"]),
    ("OMIM:236200", "Homocystinuria",
     "An inborn error of methionine metabolism with thrombosis and lens dislocation.",
     ["HP:0001083", "HP:0000098", "HP:0001249", "HP:0000545", "HP:0001250"], ["NCBIGene:875"]),
    ("OMIM:607208", "Dravet syndrome",
     "A severe epileptic encephalopathy of infancy, often first noticed with fever.",
     ["HP:0002373", "HP:0001250", "HP:0001249", "HP:0001263"], ["NCBIGene:6323"]),
    ("OMIM:130050", "Ehlers-Danlos syndrome, vascular type",
     "A connective tissue disorder with fragile arteries and thin translucent skin.",
     ["HP:0001382", "HP:0000978"], ["NCBIGene:1281"]),
    ("OMIM:306700", "Hemophilia A",
     "An X-linked disorder of blood clotting: prolonged bleeding after a minor injury or surgery, and bleeding "
     "into joints and muscles.",
     ["HP:0001892", "HP:0000978"], ["NCBIGene:2157"]),
]

GENES = [
    ("NCBIGene:2200", "FBN1", "Fibrillin 1, a component of connective tissue microfibrils."),
    ("NCBIGene:7046", "TGFBR1", "Transforming growth factor beta receptor 1."),
    ("NCBIGene:7048", "TGFBR2", "Transforming growth factor beta receptor 2."),
    ("NCBIGene:875", "CBS", "Cystathionine beta-synthase, an enzyme of methionine metabolism."),
    ("NCBIGene:6323", "SCN1A", "Sodium voltage-gated channel alpha subunit 1."),
    ("NCBIGene:1281", "COL3A1", "Collagen type III alpha 1 chain."),
    ("NCBIGene:2157", "F8", "Coagulation factor VIII."),
]

# Questions exercising each strategy of the offline policy, with the node id expected first.
ONE_HOP = ("Which genes are implicated in Marfan syndrome?", "NCBIGene:2200")
SHARED_FINDINGS = ("A patient presents with ectopia lentis, arachnodactyly, aortic root dilatation and tall stature. "
                   "Which disease fits best?", "OMIM:154700")
TWO_HOP = ("Which genes are linked to diseases featuring febrile seizure?", "NCBIGene:6323")
BROAD = ("Which disease causes prolonged bleeding after a minor injury?", "OMIM:306700")


def build_clinical_graph() -> KnowledgeGraph:
    """The graph described in the module docstring (in memory)."""
    return build_graph(*_clinical_tables(), metadata={"name": "clinical", "source": "tests/support/graphs.py"})


def _clinical_tables(phenotype: str = "phenotype", disease: str = "disease", gene: str = "gene", is_a: str = "is_a",
                     has_phenotype: str = "has_phenotype", associated_gene: str = "associated_gene",
                     source: str = "clinical") -> tuple[NodeTable, EdgeTable]:
    """The clinical graph's tables, under the given type and relation names."""
    ids, types, names, texts = [], [], [], []
    for node_id, name, text in PHENOTYPES:
        ids.append(node_id), types.append(phenotype), names.append(name), texts.append(f"{name}. {text}")
    for node_id, name, text, _, _ in DISEASES:
        ids.append(node_id), types.append(disease), names.append(name), texts.append(f"{name}. {text}")
    for node_id, name, text in GENES:
        ids.append(node_id), types.append(gene), names.append(name), texts.append(f"{name}. {text}")
    edges: list[tuple[str, str, str]] = [(child, parent, is_a) for child, parent in IS_A.items()]
    for node_id, _, _, phenotypes, genes in DISEASES:
        edges += [(node_id, p, has_phenotype) for p in phenotypes]
        edges += [(node_id, g, associated_gene) for g in genes]
    src, dst, rel = zip(*edges, strict=True)
    return NodeTable(ids, types, names, texts, source=source), EdgeTable(src, dst, rel)


def save_clinical_graph(folder: Path) -> Path:
    """Build the graph and save it to ``folder`` (a graph directory ``ark ask`` accepts); return the folder."""
    save_graph(build_clinical_graph(), folder)
    return folder


# ---------------------------------------------------------------- a small epilepsy/migraine graph (tool tests)
# Node index = position in this list.
NODES = [
    ("D:dravet", "disease", "Dravet syndrome", "Dravet syndrome: severe epilepsy of infancy with febrile seizures"),
    ("D:migraine", "disease", "Migraine", "Migraine with aura: recurrent headache attacks"),
    ("P:seizure", "phenotype", "Seizure", "Seizure: an intermittent abnormality of nervous system physiology"),
    ("P:febrile", "phenotype", "Febrile seizure", "Febrile seizure: seizures triggered by fever in children"),
    ("P:headache", "phenotype", "Headache", "Headache: pain in the head"),
    ("G:SCN1A", "gene/protein", "SCN1A", "SCN1A sodium channel alpha subunit, mutated in epilepsy"),
    ("G:CACNA1A", "gene/protein", "CACNA1A", "CACNA1A calcium channel gene associated with migraine"),
    ("P:nervous", "phenotype", "Abnormality of the nervous system", "Abnormality of the nervous system"),
]
EDGES = [
    ("D:dravet", "P:seizure", "has_phenotype"),
    ("D:dravet", "P:febrile", "has_phenotype"),
    ("D:migraine", "P:headache", "has_phenotype"),
    ("G:SCN1A", "D:dravet", "associated_with"),
    ("G:CACNA1A", "D:migraine", "associated_with"),
    ("G:SCN1A", "P:febrile", "has_phenotype"),
    ("P:seizure", "P:nervous", "is_a"),
    ("P:febrile", "P:seizure", "is_a"),
    ("P:headache", "P:nervous", "is_a"),
    ("D:dravet", "G:SCN1A", "associated_with"),  # both directions between the same pair
]


def build_small_graph():
    ids, types, names, texts = zip(*NODES, strict=True)
    src, dst, rel = zip(*EDGES, strict=True)
    return build_graph(NodeTable(ids, types, names, texts), EdgeTable(src, dst, rel), metadata={"name": "tiny"})


def build_index(graph):
    """The real BM25 index over the graph's node documents."""
    try:
        from ark.index import open_index
    except ImportError:
        from ark.index import BM25Index

        return BM25Index.build(graph.text(i) for i in range(graph.num_nodes))
    return open_index(graph, kind="bm25")


# ---------------------------------------------------------------- ark-agent-cli folders (loader and CLI tests)
TABULAR_NODES = [
    {"id": "007", "name": "Marfan syndrome", "type": "disease",
     "properties": {"source": "OMIM", "summary": "A connective tissue disorder.", "description": "Tall stature.",
                    "synonyms": ["MFS", "Marfan"], "score": 3, "_internal": "x"}},
    {"id": "FBN1", "name": "FBN1", "type": "gene", "properties": {"summary": "Fibrillin 1."}},
    {"id": "HP:1", "name": "Arachnodactyly", "type": "phenotype", "properties": None},
]
TABULAR_EDGES = [
    {"from": "007", "to": "HP:1", "type": "has_phenotype", "properties": {"frequency": "common"}},
    {"from": "FBN1", "to": "007", "type": "causes", "properties": None},
]


def properties_json(value) -> str:
    return "" if value is None else json.dumps(value)


HEADERS = {"nodes": ["id", "name", "type", "properties"], "edges": ["from", "to", "type", "properties"]}


def write_folder(folder: Path, fmt: str, nodes=TABULAR_NODES, edges=TABULAR_EDGES,
                 graph_json: dict | None = None) -> Path:
    """Write a graph folder in ``fmt`` (parquet, csv or jsonl); ``properties`` become JSON strings."""
    folder.mkdir(parents=True, exist_ok=True)
    for stem, rows in (("nodes", nodes), ("edges", edges)):
        flat = [{**row, "properties": properties_json(row.get("properties"))} if "properties" in row else row
                for row in rows]
        path = folder / f"{stem}.{fmt}"
        if fmt == "parquet":
            columns = list(flat[0]) if flat else HEADERS[stem]
            pq.write_table(pa.table({c: pa.array([r.get(c) for r in flat], pa.string()) for c in columns}), path)
        elif fmt == "csv":
            with path.open("w", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=list(flat[0]) if flat else HEADERS[stem])
                writer.writeheader()
                writer.writerows(flat)
        else:
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    if graph_json is not None:
        (folder / "graph.json").write_text(json.dumps(graph_json))
    return folder


# ---------------------------------------------------------------- a drug graph for the Cypher export
# A tiny graph with what the Cypher export must handle: node properties of several kinds, type and relation
# names that are not Cypher identifiers (``gene/protein``, ``order``), and one relation joining several type pairs.
# 
# - drugs ``DB1`` (aspirin) and ``DB2`` (warfarin) with a float ``weight``, an int ``approved_year``, a bool
#   ``otc``, a list of strings ``synonyms`` and a nested ``vendor`` object;
# - ``gene/protein`` nodes ``G1`` (PTGS1), ``G2`` (VKORC1), ``G3`` (CYP2C9);
# - ``disease`` nodes ``D1`` (thrombosis), ``D2`` (pain) and an ``order`` node ``O1`` (a node type named like a
#   reserved word);
# - ``targets``: drug -> gene/protein; ``interacts``: drug -> drug AND gene/protein -> gene/protein (one relation,
#   two type pairs); ``treats``: drug -> disease; ``belongs to``: disease -> order.
DRUG_NODES = [
    ("DB1", "drug", "aspirin", {"weight": 180.16, "approved_year": 1899, "otc": True,
                                "synonyms": ["acetylsalicylic acid", "ASA"], "vendor": {"name": "Bayer"}}),
    ("DB2", "drug", "warfarin", {"weight": 308.3, "approved_year": 1954, "otc": False,
                                 "synonyms": ["coumadin"], "vendor": {"name": "BMS"}}),
    ("G1", "gene/protein", "PTGS1", {"chromosome": "9"}),
    ("G2", "gene/protein", "VKORC1", {"chromosome": "16"}),
    ("G3", "gene/protein", "CYP2C9", {"chromosome": "10"}),
    ("D1", "disease", "thrombosis", {}),
    ("D2", "disease", "pain", {}),
    ("O1", "order", "vascular disorders", {}),
]
DRUG_EDGES = [
    ("DB1", "G1", "targets"), ("DB2", "G2", "targets"), ("DB2", "G3", "targets"),
    ("DB1", "DB2", "interacts"), ("G2", "G3", "interacts"),
    ("DB1", "D2", "treats"), ("DB2", "D1", "treats"), ("DB1", "D1", "treats"),
    ("D1", "O1", "belongs to"),
]


def build_drug_graph() -> KnowledgeGraph:
    """The drug graph described above."""
    ids, types, names, props = zip(*DRUG_NODES, strict=True)
    texts = [f"{name} ({node_type})" for _, node_type, name, _ in DRUG_NODES]
    src, dst, rel = zip(*DRUG_EDGES, strict=True)
    return build_graph(NodeTable(list(ids), list(types), list(names), texts, list(props), source="drugs"),
                       EdgeTable(list(src), list(dst), list(rel)), metadata={"name": "drugs"})


# ---------------------------------------------------------------- the conditions graph (offline policy conditions)
# A clinical graph shaped like HPO for questions with several conditions: modes of inheritance are phenotype nodes
# linked by ``has_inheritance`` (and stated in the disease's text, as the HPO loader writes it), findings have an
# is-a hierarchy (true-path rule), and no disease is named "Ehlers-Danlos syndrome" alone (only its subtypes).
CONDITION_PHENOTYPES = [
    ("HP:0000005", "Mode of inheritance", "The pattern in which a trait is passed on."),
    ("HP:0000006", "Autosomal dominant inheritance", "One altered copy of an autosomal gene suffices."),
    ("HP:0000007", "Autosomal recessive inheritance", "Two altered copies of an autosomal gene are needed."),
    ("HP:0000118", "Phenotypic abnormality", "Root of all phenotypic abnormalities."),
    ("HP:0001166", "Arachnodactyly", "Abnormally long and slender fingers and toes."),
    ("HP:0001083", "Ectopia lentis", "Dislocation or malposition of the crystalline lens of the eye."),
    ("HP:0000639", "Nystagmus", "Rhythmic, involuntary oscillations of one or both eyes."),
    ("HP:0000666", "Horizontal nystagmus", "Nystagmus whose oscillations are side to side."),
    ("HP:0001382", "Joint hypermobility", "Joints that move beyond the normal range."),
    ("HP:0000963", "Thin skin", "Skin that is abnormally thin and translucent."),
    ("HP:0001876", "Pancytopenia", "An abnormal reduction in numbers of all blood cell types."),
    ("HP:0000098", "Tall stature", "A height above the 97th centile for age."),
]
CONDITION_IS_A = {
    "HP:0000006": "HP:0000005", "HP:0000007": "HP:0000005", "HP:0001166": "HP:0000118",
    "HP:0001083": "HP:0000118", "HP:0000639": "HP:0000118", "HP:0000666": "HP:0000639",
    "HP:0001382": "HP:0000118", "HP:0000963": "HP:0000118", "HP:0001876": "HP:0000118", "HP:0000098": "HP:0000118",
}
# Layperson synonyms, listed in the finding's text as the HPO loader writes them ("Synonyms: a; b").
CONDITION_SYNONYMS = {
    "HP:0001166": ["Spider fingers", "Long slender fingers"],
    "HP:0000639": ["Involuntary rhythmic eye movements", "Dancing eyes"],
    "HP:0001083": ["Dislocated lens"],
    "HP:0000098": ["Increased body height"],
    "HP:0000963": ["Translucent skin disease"],  # a synonym holding a type word, as HPO's "... artery disease"
}
# (id, name, inheritance, phenotypes, genes)
CONDITION_DISEASES = [
    ("OMIM:154700", "Marfan syndrome", "HP:0000006", ["HP:0001166", "HP:0001083", "HP:0000098"], ["FBN1"]),
    ("OMIM:236200", "Homocystinuria", "HP:0000007", ["HP:0001166", "HP:0001083", "HP:0000098"], ["CBS"]),
    ("OMIM:609192", "Loeys-Dietz syndrome 1", "HP:0000006", ["HP:0001166", "HP:0001382"], ["TGFBR1"]),
    ("OMIM:225100", "Ectopia lentis 2", "HP:0000007", ["HP:0001083"], ["ADAMTSL4"]),
    ("OMIM:277600", "Weill-Marchesani syndrome 1", "HP:0000007", ["HP:0001083", "HP:0000639"], ["ADAMTS10"]),
    ("OMIM:203100", "Albinism, oculocutaneous, type IA", "HP:0000007", ["HP:0000639", "HP:0000963"], ["TYR"]),
    ("OMIM:203200", "Albinism, oculocutaneous, type II", "HP:0000007", ["HP:0000666"], ["OCA2"]),
    ("OMIM:310700", "Congenital motor nystagmus 1", "HP:0000006", ["HP:0000639"], ["FRMD7"]),
    ("OMIM:164100", "Nystagmus 2, congenital", "HP:0000006", ["HP:0000666", "HP:0000098"], ["NYS2"]),
    ("OMIM:130000", "Ehlers-Danlos syndrome, classic type", "HP:0000006", ["HP:0001382", "HP:0000963"], ["COL5A1"]),
    ("OMIM:130050", "Ehlers-Danlos syndrome, vascular type", "HP:0000006", ["HP:0000963"], ["COL3A1"]),
    ("OMIM:225400", "Ehlers-Danlos syndrome, kyphoscoliotic type", "HP:0000007", ["HP:0001382"], ["PLOD1"]),
    ("OMIM:227650", "Fanconi anemia, complementation group A", "HP:0000007", ["HP:0001876"], ["FANCA"]),
    ("OMIM:127550", "Dyskeratosis congenita, autosomal dominant 1", "HP:0000006", ["HP:0001876"], ["TERC"]),
    ("OMIM:614566", "Bone marrow failure syndrome 1", "HP:0000006", ["HP:0001876"], ["FANCA"]),
    # A name holding a node-type word: a question's "... with diseases that ..." must not anchor it.
    ("OMIM:209950", "Mendelian susceptibility to mycobacterial diseases", "HP:0000007", ["HP:0000963"],
     ["IL12RB1"]),
]
# The question shapes on this graph, with their exact answers (true-path rule for findings).
FAMILY_QUESTION = "What phenotypes are associated with Ehlers-Danlos syndrome?"
FAMILY_ANSWERS = {"HP:0001382", "HP:0000963"}
CONJUNCTION_QUESTION = "Which diseases present with arachnodactyly and ectopia lentis?"
CONJUNCTION_ANSWERS = {"OMIM:154700", "OMIM:236200"}
ATTRIBUTE_QUESTION = "Which diseases have autosomal recessive inheritance and nystagmus?"
ATTRIBUTE_ANSWERS = {"OMIM:277600", "OMIM:203100", "OMIM:203200"}  # type II through Horizontal nystagmus
COMPOUND_QUESTION = ("Which disease with autosomal recessive inheritance is linked to the FANCA gene and shows an "
                     "abnormal reduction in numbers of all blood cell types (red cells, white cells, and platelets)?")
COMPOUND_ANSWER = "OMIM:227650"
UNANSWERABLE_QUESTION = "What is the best treatment for Marfan syndrome?"
# Two hops through a type the question names only as the antecedent of a relative clause ("diseases that ...").
TWO_HOP_QUESTION = "Which genes are associated with diseases that present with ectopia lentis?"
TWO_HOP_ANSWERS = {"GENE:FBN1", "GENE:CBS", "GENE:ADAMTSL4", "GENE:ADAMTS10"}


def build_conditions_graph() -> KnowledgeGraph:
    """The conditions graph described above (in memory)."""
    names = {node_id: name for node_id, name, _ in CONDITION_PHENOTYPES}
    ids, types, labels, texts = [], [], [], []
    for node_id, name, definition in CONDITION_PHENOTYPES:
        ids.append(node_id), types.append("phenotype"), labels.append(name)
        synonyms = CONDITION_SYNONYMS.get(node_id)
        texts.append(f"{name}\nDefinition: {definition}" + (f"\nSynonyms: {'; '.join(synonyms)}" if synonyms else ""))
    genes = sorted({g for *_, gs in CONDITION_DISEASES for g in gs})
    edges: list[tuple[str, str, str]] = [(child, parent, "is_a") for child, parent in CONDITION_IS_A.items()]
    for node_id, name, inheritance, phenotypes, disease_genes in CONDITION_DISEASES:
        ids.append(node_id), types.append("disease"), labels.append(name)
        texts.append(f"{name}\nDisease from OMIM.\nInheritance: {names[inheritance]}\n"
                     f"Associated genes: {', '.join(disease_genes)}")
        edges.append((node_id, inheritance, "has_inheritance"))
        edges += [(node_id, p, "has_phenotype") for p in phenotypes]
        edges += [(node_id, f"GENE:{g}", "associated_gene") for g in disease_genes]
    for gene in genes:
        ids.append(f"GENE:{gene}"), types.append("gene"), labels.append(gene), texts.append(f"{gene} gene")
    src, dst, rel = zip(*edges, strict=True)
    return build_graph(NodeTable(ids, types, labels, texts, source="conditions"), EdgeTable(src, dst, rel),
                       metadata={"name": "conditions", "source": "tests/support/graphs.py"})


def build_prime_like_graph(folder: Path | None = None) -> KnowledgeGraph:
    """The clinical graph under PRIME's names (``effect/phenotype``, ``gene/protein``; ``phenotype_present``,
    ``disease_protein``, ``parent_child``): what the vocabulary must match without knowing HPO. Saved to and
    loaded from ``folder`` when given (a graph directory, where a ``vocabulary.toml`` may sit)."""
    graph = build_graph(*_clinical_tables("effect/phenotype", "disease", "gene/protein", "parent_child",
                                           "phenotype_present", "disease_protein", source="prime-like"),
                        metadata={"name": "prime-like"})
    if folder is None:
        return graph
    save_graph(graph, folder)
    return load_graph(folder)
