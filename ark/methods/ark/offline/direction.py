"""The direction of a relation that links a type to itself ("What does X *depend on*?" asks for X's dependencies,
"What *depends on* X?" for its dependents): read from the question's grammar around the node it names, and from
the relation's own phrasing (an active name, ``depends_on``: its source does what it says; a passive one,
``cited_by``: its target does). Hierarchy relations have their own words (broader, narrower). Pure reads."""

from __future__ import annotations

import re

from ....graph import normalize_name
from ....question import TAXONOMY_RELATIONS
from .context import PolicyContext
from .evidence import Evidence, SeenNode
from .spans import name_spans

# The named node stands as the subject of the question's verb: after a "do" auxiliary ("What *does* X depend on?",
# "Which packages *does* X require?"), just after an inverted copula ("What *is* X a kind of?"), or as the agent of
# a passive ("Which packages are required *by* X?").
_AUXILIARY = re.compile(r"\b(?:do|does|did)\b", re.IGNORECASE)
_SUBJECT_JUST_AFTER = re.compile(r"\b(?:by|is|are|was|were)\s+(?:the\s+)?$", re.IGNORECASE)
# The words labelling a described node stand for it ("What is *the family described as* "..." a member of?").
_LABEL = re.compile(r"\b(?:the|a|an)\s+(?:[\w-]+\s+){0,3}?described\s+as\s*:?\s*[\"“‘']?\s*$", re.IGNORECASE)
_NOUN_OF = re.compile(r"\b[a-z]\w*\s+of\s+(?:the\s+)?$", re.IGNORECASE)  # "the dependencies *of* X"
_PASSIVE_NAME = re.compile(r"(?:^|[_\s-])by$", re.IGNORECASE)  # "cited_by": the target cites the source


def self_relation(ctx: PolicyContext, ev: Evidence) -> str | None:
    """The one relation the question names or means that links the anchor's type to itself (not a hierarchy
    relation), when the question has one anchor and asks for nodes of that type (or names no type), or goes
    through it to the wanted type (``PolicyContext.through_itself``)."""
    anchors = ev.positive_anchors()
    if len(anchors) != 1 or ev.shared is not None:
        return None
    own = anchors[0].type
    if ev.target not in (None, own) and not ctx.through_itself(own, ev.target, ev):
        return None
    hierarchy = TAXONOMY_RELATIONS | ctx.reader.hierarchy_relations
    found = [r for r in ev.relation_hints if (own, r, own) in ctx.schema and normalize_name(r) not in hierarchy]
    return found[0] if len(found) == 1 else None


def relation_direction(ctx: PolicyContext, ev: Evidence) -> tuple[str, str] | None:
    """(relation, "out" or "in"): the side of the anchor its answers lie on along a relation linking its type to
    itself; "out" when the anchor is the relation's source (the answers its targets). None when no such relation
    is asked or the question's words do not place the anchor."""
    relation = self_relation(ctx, ev)
    if relation is None:
        return None
    a = ev.analysis
    said = (name_spans(a.question, [phrase]) for phrase in [*ev.quoted_used, ev.positive_anchors()[0].name])
    start = next((spans[0][0] for spans in said if spans), -1)  # the described node by its quote, if quoted
    if start < 0:
        return None
    before = _LABEL.sub("", a.question[:start]) if ev.quoted_used else a.question[:start]
    if ev.target not in (None, ev.positive_anchors()[0].type) and _NOUN_OF.search(before):
        # A first hop named by a noun ("the licences of the dependencies of X"): which side "dependencies" or
        # "dependents" names is the noun's meaning, not the grammar's; both sides are read.
        return None
    subject = bool(_AUXILIARY.search(before) or _SUBJECT_JUST_AFTER.search(before))
    source = subject != bool(_PASSIVE_NAME.search(relation))
    return relation, "out" if source else "in"


def along_direction(ev: Evidence, center: object, nodes: list[SeenNode]) -> list[SeenNode]:
    """The listed neighbours on the asked side of the centre, counted in ``ev.expansions.asked_side``: none when
    none is (the other side answers another question: "What does X depend on?" is not "What depends on X?")."""
    if ev.direction is None:
        return nodes
    relation, side = ev.direction
    kept = [n for n in nodes if relation in (n.out_relations if side == "out" else n.in_relations)]
    if isinstance(center, int):
        ev.expansions.asked_side[center] += len(kept)
    return kept


def asked_side_empty(ev: Evidence) -> str | None:
    """The self-linked relation asked along (``Evidence.direction``) when it links every anchor explored to
    nothing on the asked side ("What does X depend on?" of a package that depends on nothing), else None."""
    seen = ev.expansions.asked_side
    if ev.direction is None or not seen or any(seen.values()):
        return None
    return ev.direction[0]
