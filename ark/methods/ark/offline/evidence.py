"""The offline policy's records: what a tool call showed (``SeenNode``), an entity the question names (``Anchor``),
a condition the answers must meet (``Condition``) and what the agent has learnt so far (``Evidence``, with the
candidates' scores in ``CandidateScores`` and the expand and page phases' bookkeeping in ``Expansions``).

Evidence is rebuilt from the conversation at every step; only the phases' ``absorb`` writes it. Planning reads it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from ....question import Mention, QuestionAnalysis, excludes_outside
from .sharing import SharedRoute


@dataclass(frozen=True)
class SeenNode:
    """A node a tool call returned, with the relations that link it to the call's centre (neighbourhoods)."""

    index: int
    name: str
    type: str
    out_relations: tuple[str, ...] = ()
    in_relations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Anchor:
    """A node the question names, found by a search: a starting point of the neighbourhood searches.
    ``negated`` when the question says it is absent (a finding the patient does not show)."""

    index: int
    name: str
    type: str
    negated: bool = False


@dataclass
class Condition:
    """One thing the answers must satisfy: a node the question names (``named``), a family of nodes whose names
    all contain the question's words when none bears them alone (``family``), or a node whose text the question
    paraphrases (``described``, e.g. a finding given by its definition)."""

    label: str
    members: list[int]
    kind: str = "named"
    negated: bool = False


@dataclass
class CandidateScores:
    """What neighbourhood listings said about the nodes found, written by :mod:`.candidates` (the expand, page,
    second-hop and verify phases) and read by the ranking: each candidate's score from the anchors that listed it,
    the centres that listed it (-1: a whole-graph search), its name, its verification score, the intermediate nodes
    towards the wanted type, each anchor's specificity, and the relations linking a candidate to each anchor."""

    score: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    hits: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))
    names: dict[int, str] = field(default_factory=dict)
    verified: dict[int, float] = field(default_factory=dict)
    intermediates: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    intermediate_types: dict[int, str] = field(default_factory=dict)
    anchor_weight: dict[int, float] = field(default_factory=dict)
    # candidate -> anchor -> relations linking them: the graph's evidence for a candidate (see evidence_rank)
    support: dict[int, dict[int, set[str]]] = field(default_factory=lambda: defaultdict(dict))

    def record_support(self, candidate: int, anchor: int, relations: tuple[str, ...]) -> None:
        """Note that ``anchor`` supports ``candidate`` through ``relations`` (the edges a tool listing showed)."""
        self.support[candidate].setdefault(anchor, set()).update(relations)


@dataclass
class Expansions:
    """The expand and page phases' bookkeeping: anchors explored towards a named intermediate type, each anchor's
    count of neighbours of the wanted type, the listings to page on (arguments, page size), and the expansions a
    relation filter left empty (asked again without it), and how many neighbours each anchor showed on the asked
    side of a relation linking its type to itself (``Evidence.direction``; none: that side is empty, paged on)."""

    via_middle: set[int] = field(default_factory=set)
    totals: dict[int, int] = field(default_factory=dict)
    calls: list[tuple[dict, int]] = field(default_factory=list)
    filtered_out: list[dict] = field(default_factory=list)
    asked_side: dict[int, int] = field(default_factory=lambda: defaultdict(int))


@dataclass
class Evidence:
    """What the agent has learnt so far, rebuilt from the observations in the conversation: what the question was
    anchored to (anchors, named nodes, the whole question's search, mentions with no named node, unread parts), the
    conditions the answers must meet and which candidates meet them, the candidates' ``scores`` and the
    ``expansions`` to page on. ``seed`` seeds the agent's own choices (a fresh generator per choice, so that planning
    draws nothing from the evidence)."""

    analysis: QuestionAnalysis
    seed: int
    agent_index: int = 0
    anchors: list[Anchor] = field(default_factory=list)
    named: list[int] = field(default_factory=list)  # nodes bearing the name the question asks about (named_phrase)
    # The wanted type read from the relation the question names and the anchors' type ("Who *directed* Parasite?":
    # the other end of ``directed`` from a film), when the question names no type.
    inferred_target: str | None = None
    # The relation the question means by the meaning of its words or frame when no stem names one ("Which packages
    # does X *require*?": depends_on), read against the relations at the anchors' types (see schema_plan).
    meant: str | None = None
    # "Who maintains the package described as "...""? the quoted description names a node the question goes from
    # (anchored as ``described``): that phrase is no condition on the answers' own text (see anchoring.described_by).
    quoted_used: list[str] = field(default_factory=list)
    retarget: bool = False  # the type named only labels the described anchor: the relation's far end is wanted
    described: list[int] = field(default_factory=list)  # the whole question's first hit, when it describes it
    asks_named: bool = False  # the named nodes are asked for themselves ("Look up X."): ``named`` holds them
    direction: tuple[str, str] | None = None  # (relation, "out"/"in"): the asked side of a self-linked relation
    # The words read as asking for what the schema lacks are an anchor's name and frame words ("What is X *made*
    # of?"): the question asks about the anchor, its neighbours answer (see anchoring.asks_about).
    asks_about_anchor: bool = False
    shared: SharedRoute | None = None  # "which *other* X share a Y with Z": Z → its Ys → the other Xs (sharing)
    broad: list[SeenNode] = field(default_factory=list)
    pending: list[tuple[Mention, list[SeenNode]]] = field(default_factory=list)  # mentions with no named node
    unread: list[str] = field(default_factory=list)  # parts of the question that stated something no anchor used
    conditions: list[Condition] = field(default_factory=list)
    condition_of: dict[int, int] = field(default_factory=dict)  # anchor index -> position in ``conditions``
    satisfied: dict[int, set[int]] = field(default_factory=lambda: defaultdict(set))  # candidate -> conditions
    anchor_relations: dict[int, set[str]] = field(default_factory=lambda: defaultdict(set))
    checked: set[int] = field(default_factory=set)  # candidates whose own neighbourhood was looked at
    scores: CandidateScores = field(default_factory=CandidateScores)
    expansions: Expansions = field(default_factory=Expansions)

    @property
    def target(self) -> str | None:
        """The wanted node type, if the question says one (or its relation and anchors imply one)."""
        if self.shared is not None:
            return self.shared.wanted
        if self.retarget or not self.analysis.target_types:
            return self.inferred_target
        return self.analysis.target_types[0]

    @property
    def excludes_named(self) -> bool:
        """Whether the question excludes the node it names ("which *other* films ..."): a word saying so that
        lies outside every anchor's name ("... with *other* ocular anomalies" may be part of a node's name)."""
        a = self.analysis
        return a.excludes_named and excludes_outside(a.question, [anchor.name for anchor in self.anchors])

    @property
    def relation_hints(self) -> list[str]:
        """The relations the question names by their words, then the one it means (``meant``)."""
        hints = self.analysis.relation_hints
        return hints if self.meant is None or self.meant in hints else [*hints, self.meant]

    @property
    def unsupported(self) -> str | None:
        """What the question asks for that the schema has no type or relation for (see QuestionAnalysis), unless
        the words asking for it mean a relation at the anchors' types (``meant``: "Which *actors* ...") or are only
        an anchor's name and frame words (``asks_about_anchor``: "What is X *made* of?")."""
        return None if self.meant is not None or self.asks_about_anchor else self.analysis.unsupported

    def positive_anchors(self) -> list[Anchor]:
        """The anchors the answers should be linked to (not the findings said to be absent)."""
        return [a for a in self.anchors if not a.negated]

    def anchor_indices(self) -> set[int]:
        return {a.index for a in self.anchors}
