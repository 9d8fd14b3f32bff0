"""Questions a clinician asks after the single-anchor ones, with exact answers computed from the graph.

Five shapes (issue "offline answers a newcomer can trust"): ``family`` (the findings of a family of named subtypes:
no node bears the family's name), ``conjunction`` (answers with two findings), ``attribute`` (an attribute such as a
mode of inheritance, and a finding), ``compound`` (attribute + named neighbour + a finding described by its
definition) and ``unanswerable`` (a relation the schema cannot express). Findings follow the true-path rule: an
answer annotated with a finding's descendant has the finding.

The roles are read from the schema, not named: the *finding* type has a taxonomy (an is-a relation onto itself);
the *answer* type is the one with most edges to findings; its *attribute* relation is a second relation to findings
with few distinct targets; its *partner* relation links it to a third type (HPO: disease, phenotype,
has_inheritance, associated_gene).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..graph import KnowledgeGraph, normalize_name
from ..graph.csr import entry_blocks
from ..question import TAXONOMY_RELATIONS, name_tokens

SHAPES = ("family", "conjunction", "attribute", "compound", "unanswerable")
_DEFINITION = re.compile(r"Definition:\s*([^\n]+)")
# Relations a biomedical user asks for that a phenotype ontology does not hold: the missing word and a question.
_MISSING = (("treatment", "What is the best treatment for {name}?"),
            ("drugs", "Which drugs are used against {name}?"),
            ("prevalence", "What is the prevalence of {name}?"),
            ("trials", "Which clinical trials study {name}?"))


@dataclass(frozen=True)
class Roles:
    """Which types and relations play each part in the shapes."""

    answer: str
    finding: str
    taxonomy: str
    finding_relation: str
    attribute_relation: str | None
    partner: str | None
    partner_relation: str | None


def schema_roles(graph: KnowledgeGraph) -> Roles:
    """Read the roles from the schema (see the module docstring); ValueError when the graph has no taxonomy."""
    taxonomies = [t for t in graph.schema if t.source_type == t.target_type
                  and normalize_name(t.relation) in TAXONOMY_RELATIONS]
    if not taxonomies:
        raise ValueError("the graph has no is-a relation between nodes of one type; the shapes need a taxonomy")
    finding, taxonomy = taxonomies[0].source_type, taxonomies[0].relation
    into = sorted((t for t in graph.schema if t.target_type == finding and t.source_type != finding),
                  key=lambda t: -t.count)
    if not into:
        raise ValueError(f"no relation links another type to {finding!r}")
    # The answer type is the one with most kinds of relation to findings (HPO: a disease has phenotypes, a mode of
    # inheritance, an onset ...), then most edges.
    kinds: dict[str, int] = {}
    for triple in into:
        kinds[triple.source_type] = kinds.get(triple.source_type, 0) + 1
    answer = max(kinds, key=lambda t: kinds[t])
    main = next(t for t in into if t.source_type == answer)
    attribute = None
    for triple in into:
        if triple.source_type == answer and triple is not main:
            targets = _targets(graph, triple.relation)
            if 1 < len(targets) <= 50:
                attribute = triple.relation
                break
    partners = [t for t in graph.schema if answer in (t.source_type, t.target_type)
                and finding not in (t.source_type, t.target_type)]
    partner = partners[0] if partners else None
    other = None if partner is None else (partner.target_type if partner.source_type == answer else partner.source_type)
    return Roles(answer, finding, taxonomy, main.relation, attribute, other,
                 partner.relation if partner else None)


def _targets(graph: KnowledgeGraph, relation: str) -> set[int]:
    """The nodes some ``relation`` edge points at: the rows holding an incoming entry of it, read a block of rows at a
    time (memory bounded by the block, not by the graph's edges)."""
    incoming = 2 * graph.relation_code(relation) + 1
    found: set[int] = set()
    for rows, _, codes in entry_blocks(graph):
        found.update(np.unique(rows[codes == incoming]).tolist())
    return found


class ShapeTruth:
    """Exact answers of the shapes on one graph (true-path rule for findings)."""

    def __init__(self, graph: KnowledgeGraph, roles: Roles | None = None) -> None:
        self.graph = graph
        self.roles = roles or schema_roles(graph)

    def descendants(self, node: int) -> set[int]:
        """The node and every node below it along the taxonomy (children point at their parents)."""
        seen, stack = {node}, [node]
        while stack:
            current = stack.pop()
            for child in self.graph.neighbors(current, self.roles.taxonomy, "in").nodes.tolist():
                if child not in seen:
                    seen.add(child)
                    stack.append(child)
        return seen

    def linked(self, node: int, relation: str, node_type: str) -> set[int]:
        found = self.graph.neighbors(node, relation, "both").nodes.tolist()
        return {n for n in found if self.graph.node_type(n) == node_type}

    def having(self, finding: int, relation: str | None = None) -> set[int]:
        """Answer-type nodes linked by ``relation`` (default: the finding relation) to the finding or below it."""
        relation = relation or self.roles.finding_relation
        out: set[int] = set()
        for node in self.descendants(finding):
            out |= self.linked(node, relation, self.roles.answer)
        return out

    def findings_of(self, answers: set[int]) -> set[int]:
        out: set[int] = set()
        for node in answers:
            out |= self.linked(node, self.roles.finding_relation, self.roles.finding)
        return out

    @cached_property
    def attribute_modes(self) -> dict[int, set[int]]:
        """Each attribute value (e.g. a mode of inheritance) and the answers that have it (true path)."""
        if self.roles.attribute_relation is None:
            return {}
        return {mode: self.having(mode, self.roles.attribute_relation)
                for mode in _targets(self.graph, self.roles.attribute_relation)}


def definition(text: str) -> str | None:
    """The definition sentence of a node's text ("Definition: ..."), without its final period."""
    match = _DEFINITION.search(text)
    if not match:
        return None
    sentence = re.split(r"(?<=[a-z)])\.\s", match.group(1).strip())[0].rstrip(". ")
    return sentence[:1].lower() + sentence[1:] if sentence else None


class _ShapeQuiz:
    """The questions made so far, with what every shape's maker draws from; one seeded ``rng`` shared in order."""

    def __init__(self, graph: KnowledgeGraph, seed: int) -> None:
        self.graph = graph
        self.truth = ShapeTruth(graph)
        self.roles = self.truth.roles
        self.rng = random.Random(seed)
        self.answers = [int(i) for i in graph.nodes_of_type(self.roles.answer)]
        self.findings = [int(i) for i in graph.nodes_of_type(self.roles.finding)]
        self.questions: list[dict] = []

    def add(self, shape: str, question: str, truth_ids: set[int], **extra) -> None:
        """Append a question of ``shape`` numbered within its shape, its answers as node ids."""
        g, questions = self.graph, self.questions
        questions.append({"id": f"{shape}-{sum(q['shape'] == shape for q in questions) + 1}", "shape": shape,
                          "question": question, "wanted_type": extra.pop("wanted", self.roles.answer),
                          "answer_ids": sorted(g.node_id(i) for i in truth_ids), **extra})

    def self_linked(self, node: int, relation: str | None) -> set[int]:
        return self.truth.linked(node, relation or self.roles.finding_relation, self.roles.answer)


def generate_shapes(graph: KnowledgeGraph, per_shape: int = 4, seed: int = 17) -> list[dict]:
    """``per_shape`` questions of each shape with their exact answers (ids), seeded."""
    quiz = _ShapeQuiz(graph, seed)
    _add_families(quiz, per_shape)
    _add_conjunctions(quiz, per_shape)
    modes = {m: s for m, s in quiz.truth.attribute_modes.items() if len(s) >= 100}
    _add_attributes(quiz, per_shape, modes)
    _add_compounds(quiz, per_shape, modes)
    truth, roles = quiz.truth, quiz.roles
    named = [a for a in quiz.answers if len(truth.linked(a, roles.finding_relation, roles.finding)) >= 20]
    for word, template in _MISSING[:per_shape]:
        quiz.add("unanswerable", template.format(name=graph.name(quiz.rng.choice(named))), set(), wanted=None,
                 missing=word)
    return quiz.questions


def _add_families(quiz: _ShapeQuiz, per_shape: int) -> None:
    """family: a name prefix (before a comma) that several answers share and no node bears."""
    g, truth, roles, answers = quiz.graph, quiz.truth, quiz.roles, quiz.answers
    exact_names = {normalize_name(g.name(i)) for i in range(g.num_nodes)}
    families: dict[str, list[int]] = {}
    for node in answers:
        base = g.name(node).split(",")[0].strip()
        if len(name_tokens(base)) >= 2 and normalize_name(base) not in exact_names:
            families.setdefault(base, []).append(node)
    bases = sorted(b for b, members in families.items() if len(members) >= 3)
    quiz.rng.shuffle(bases)
    made = 0
    for base in bases:
        words = set(name_tokens(base))
        members = {a for a in answers if words <= set(name_tokens(g.name(a)))}
        found = truth.findings_of(members)
        if not found:
            continue
        quiz.add("family", f"What {roles.finding}s are associated with {base}?", found,
                 wanted=roles.finding, family=[g.node_id(m) for m in sorted(members)])
        made += 1
        if made == per_shape:
            break


_CONJUNCTION_PHRASINGS = ("Which {t}s present with {a} and {b}?", "Which {t}s have both {a} and {b}?",
                          "Which {t}s show {a} and {b}?")


def _add_conjunctions(quiz: _ShapeQuiz, per_shape: int) -> None:
    """conjunction: two findings of one answer, neither below the other, that at least five answers share."""
    g, truth, roles, rng = quiz.graph, quiz.truth, quiz.roles, quiz.rng
    made, tries = 0, 0
    while made < per_shape and tries < 2000:
        tries += 1
        disease = rng.choice(quiz.answers)
        own = sorted(truth.linked(disease, roles.finding_relation, roles.finding))
        own = [f for f in own if 10 <= len(quiz.self_linked(f, None)) <= 400]
        if len(own) < 2:
            continue
        a, b = rng.sample(own, 2)
        if a in truth.descendants(b) or b in truth.descendants(a):
            continue
        both = truth.having(a) & truth.having(b)
        if len(both) < 5:
            continue
        phrasing = _CONJUNCTION_PHRASINGS[made % len(_CONJUNCTION_PHRASINGS)]
        quiz.add("conjunction", phrasing.format(t=roles.answer, a=g.name(a).lower(), b=g.name(b).lower()), both,
                 anchors=[g.node_id(a), g.node_id(b)])
        made += 1


def _add_attributes(quiz: _ShapeQuiz, per_shape: int, modes: dict[int, set[int]]) -> None:
    """attribute: an attribute mode (e.g. an inheritance) together with a finding."""
    g, truth, roles, rng = quiz.graph, quiz.truth, quiz.roles, quiz.rng
    made, tries = 0, 0
    while modes and made < per_shape and tries < 2000:
        tries += 1
        mode = rng.choice(sorted(modes))
        finding = rng.choice(quiz.findings)
        if not 20 <= len(quiz.self_linked(finding, None)) <= 1500:
            continue
        both = modes[mode] & truth.having(finding)
        if len(both) < 5:
            continue
        quiz.add("attribute", f"Which {roles.answer}s have {g.name(mode).lower()} and {g.name(finding).lower()}?",
                 both, anchors=[g.node_id(mode), g.node_id(finding)],
                 other_modes=[g.node_id(m) for m in sorted(modes) if m != mode])
        made += 1


def _add_compounds(quiz: _ShapeQuiz, per_shape: int, modes: dict[int, set[int]]) -> None:
    """compound: an attribute mode, a partner and a finding described by its definition."""
    g, truth, roles, rng = quiz.graph, quiz.truth, quiz.roles, quiz.rng
    partner_type, partner_relation = roles.partner, roles.partner_relation  # both set or both None
    if not partner_relation or partner_type is None:
        return
    made, tries = 0, 0
    while modes and made < per_shape and tries < 5000:
        tries += 1
        disease = rng.choice(quiz.answers)
        own_modes = [m for m in modes if disease in modes[m]]
        partners = sorted(truth.linked(disease, partner_relation, partner_type))
        described = [f for f in truth.linked(disease, roles.finding_relation, roles.finding)
                     if definition(g.text(f)) and len(quiz.self_linked(f, None)) <= 400]
        if not own_modes or not partners or not described:
            continue
        mode, partner, finding = own_modes[0], rng.choice(partners), rng.choice(sorted(described))
        both = modes[mode] & truth.having(finding) & truth.linked(partner, partner_relation, roles.answer)
        quiz.add("compound", f"Which {roles.answer} with {g.name(mode).lower()} is linked to the {g.name(partner)} "
                 f"{roles.partner} and shows {definition(g.text(finding))}?", both,
                 anchors=[g.node_id(mode), g.node_id(partner), g.node_id(finding)])
        made += 1

# Tracked sets of these shapes, in the quiz's query format (``ark quiz GRAPH --recipe NAME``; ``ark eval`` scores
# them per template). Unanswerable questions have no answer to score, so they are left to
# ``benchmarks/offline_shapes.py``, which checks the stated confidence.
SHAPE_RECIPES: dict[str, dict[str, int]] = {"hpo-shapes": {"per_shape": 50, "seed": 2026}}


def shape_queries(graph: KnowledgeGraph, name: str) -> list[dict]:
    """The records of shape recipe ``name``: ``{"id", "query", "answer_ids", "template"}`` plus the shape's fields;
    questions whose truth is empty are left out."""
    if name not in SHAPE_RECIPES:
        raise ValueError(f"unknown shape recipe {name!r}; valid: {', '.join(SHAPE_RECIPES)}")
    records = []
    for question in generate_shapes(graph, **SHAPE_RECIPES[name]):
        if question["answer_ids"]:
            records.append({"id": f"{name}-{question['id']}", "query": question.pop("question"),
                            "template": question["shape"], **question})
    return records

