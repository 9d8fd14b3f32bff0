"""A quoted description that names the node a question goes from ("Who maintains the package described as
"World timezone definitions"?"): the long quoted phrases searched on their own, the node their search finds when
its text says most of the phrase, and whether the type the question names only labels that node ("Under what
license is *the package* described as "..." released?": the licence is asked for). Pure reads."""

from __future__ import annotations

from ....question import QuestionAnalysis, name_tokens
from .context import PolicyContext
from .evidence import Anchor, Evidence, SeenNode
from .spans import find_run

DESCRIPTION_WORDS = 4  # a quoted phrase of this many words or more may describe a node (a term is shorter)
SAYS = 0.7  # share of the phrase's words the node's text must say
LABEL_SPAN = 30  # characters between a type word and the quoted phrase it labels ("the package described as")


def described_phrases(a: QuestionAnalysis) -> list[str]:
    """The quoted phrases long enough to describe a node (searched on their own by the anchor phase)."""
    return [q for q in a.quoted if len(name_tokens(q)) >= DESCRIPTION_WORDS]


def described_by(ctx: PolicyContext, ev: Evidence, hits: dict[str, list[SeenNode]]) -> tuple[str, Anchor] | None:
    """The first long quoted phrase whose search's first hit that says most of it (a hit before it may bear a
    word of the phrase as its name: "... seed of *wild mango*"), with that node as an anchor; None when no phrase
    describes a node, or the node is already an anchor."""
    for phrase in described_phrases(ev.analysis):
        words = set(name_tokens(phrase))
        saying = [n for n in hits.get(phrase) or [] if ctx.graph.is_valid_index(n.index)
                  and len(words & ctx.tokens(ctx.graph.text(n.index))) >= SAYS * len(words)]
        # A node the phrase names ("... seed of *wild mango*") is what the description speaks of, not described.
        said = name_tokens(phrase)
        unnamed = [n for n in saying if not name_tokens(n.name) or find_run(said, name_tokens(n.name)) < 0]
        node = next(iter(unnamed or saying), None)
        if node is not None and node.index not in ev.anchor_indices():
            return phrase, Anchor(node.index, node.name, node.type)
    return None


def asks_beyond(ev: Evidence, node: Anchor) -> bool:
    """Whether the question asks for something linked to the described node rather than for the node: it names
    or means a relation, looks along the hierarchy from it (words outside the quote: "the *kinds of* the data
    described as "..."") or asks for a type other than the node's."""
    a = ev.analysis
    if a.relation_hints or a.schema_relations or ev.meant:
        return True
    unquoted = a.question.lower()
    for phrase in a.quoted:
        unquoted = unquoted.replace(phrase.lower(), " ")
    if a.hierarchy and a.hierarchy_phrase.lower() in unquoted:
        return True
    return bool(a.target_types) and a.target_types[0] != node.type


def labels_only(ev: Evidence) -> bool:
    """Whether every word naming the wanted type labels a quoted description just after it ("the *package*
    described as "...""): the type is the described node's, and the answers' type is read from the relation."""
    a = ev.analysis
    if not a.target_types or not ev.quoted_used:
        return False
    starts = [a.question.find(q) for q in ev.quoted_used]
    positions = [pos for pos, t in a.type_mentions if t == a.target_types[0]]
    return bool(positions) and all(any(0 < start - pos <= LABEL_SPAN for start in starts) for pos in positions)
