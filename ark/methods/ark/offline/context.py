"""What the offline policy knows before any question: the graph, its schema's routes between types, the question
reader and its words, and the nodes of the tool results read so far. Built once per policy, shared by its phases."""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Sequence

from ....graph import KnowledgeGraph, normalize_name
from ....question import QUESTION_WORDS, TAXONOMY_RELATIONS, QuestionAnalysis, QuestionReader, name_tokens
from .evidence import Anchor, Evidence, SeenNode
from .listings import listing_of
from .spans import word_at

SEEN_RESULTS_KEPT = 512  # tool results whose nodes are kept for the next replays (a few questions' worth)
_OF_ANCHOR = re.compile(r"\s+of\s+(?:the\s+)?")  # "the family *of* X": X's family
_RELATIVE_CLAUSE = re.compile(r"\s+(?:that|which|whose|who|where)\b")


class PolicyContext:
    """The graph-level state of an offline policy: never changed by a question."""

    def __init__(self, graph: KnowledgeGraph, verify: int = 40, max_answers: int = 20) -> None:
        self.graph = graph
        self.verify = verify
        self.max_answers = max_answers
        self._seen_results: dict[int, tuple[object, list[SeenNode], int | None]] = {}  # see nodes
        self.tokens = functools.lru_cache(maxsize=200_000)(lambda text: frozenset(name_tokens(text)))
        self.reader = QuestionReader(graph)
        # The reading of a question: every step of every agent replays it; an analysis is never modified.
        self.analysis = functools.lru_cache(maxsize=SEEN_RESULTS_KEPT)(self.reader.read)
        # Words that say what is asked rather than name an entity: interrogatives, auxiliaries, type names.
        self.question_words = frozenset({"what", "which", "who", "are", "is", "was", "were", "do", "does", "can",
                                         "associated", "linked", "related", "have", "has", "show", "shows",
                                         "present", "presents", "list", "name", "find", "give", "all"}
                                        | set().union(*self.reader.type_words.values()))
        # Words that say how a question asks, not what the answers must meet (see anchoring.note_unread).
        relation_words = set().union(*self.reader.relation_words.values(), *self.reader.relation_vocabulary.values())
        self.ignorable = self.question_words | QUESTION_WORDS | self.reader.frame_words | relation_words
        # The words that only frame a question (no relation's): a node named by them alone names nothing asked.
        self.frame_only = self.question_words | QUESTION_WORDS | self.reader.frame_words
        self.type_sizes = graph.type_counts()
        self.links = {(t.source_type, t.target_type) for t in graph.schema}
        self.links |= {(b, a) for a, b in self.links}
        # The relation that links most pairs of two types (per source type, towards the wanted type at use).
        counts: dict[tuple[str, str], tuple[int, str]] = {}
        for t in graph.schema:
            for pair in ((t.source_type, t.target_type), (t.target_type, t.source_type)):
                counts[pair] = max(counts.get(pair, (0, "")), (t.count, t.relation))
        self.main_relations = {pair: relation for pair, (_, relation) in counts.items()}
        self.schema = [(t.source_type, t.relation, t.target_type) for t in graph.schema]
        # (type, type) -> relation -> edges of it between them, either way round
        self.relation_counts: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
        self.relations_between: dict[tuple[str, str], set[str]] = defaultdict(set)
        for t in graph.schema:
            for pair in {(t.source_type, t.target_type), (t.target_type, t.source_type)}:
                self.relation_counts[pair][t.relation] = self.relation_counts[pair].get(t.relation, 0) + t.count
            self.relations_between[(t.source_type, t.target_type)].add(t.relation)
            self.relations_between[(t.target_type, t.source_type)].add(t.relation)

    def nodes(self, data: object) -> list[SeenNode]:
        """The nodes a tool call returned, in its order, from its structured result (see :func:`listing_of`)."""
        return list(self._read(data)[1])

    def total(self, data: object) -> int | None:
        """A neighbourhood result's total before its page (None when it states none)."""
        return self._read(data)[2]

    def _read(self, data: object) -> tuple[object, list[SeenNode], int | None]:
        """Each step replays the whole history, so a result is read once and kept (by identity: the history
        holds the same result objects) for the replays of the steps after it."""
        key = id(data)
        seen = self._seen_results.get(key)
        if seen is not None and seen[0] is data:
            return seen
        g = self.graph
        listing = listing_of(data)
        nodes = [SeenNode(r.index, g.name(r.index), g.node_type(r.index), tuple(r.out), tuple(r.in_))
                 for r in listing.results if g.is_valid_index(r.index)]
        if len(self._seen_results) >= SEEN_RESULTS_KEPT:
            self._seen_results.clear()
        self._seen_results[key] = read = (data, nodes, listing.total)
        return read

    def text_of(self, index: int) -> str:
        """A node's text, or nothing for an index the graph does not hold."""
        return self.graph.text(index) if self.graph.is_valid_index(index) else ""

    # ---------------------------------------------------------------- the schema's routes
    def self_linked(self, node_type: str | None) -> bool:
        """Whether the schema relates nodes of this type to each other (e.g. an is-a hierarchy of terms)."""
        return node_type is not None and (node_type, node_type) in self.links

    def related_to_named(self, ev: Evidence, target: str | None) -> bool:
        """Whether a named node of the wanted type is a starting point rather than an answer: when such nodes can
        relate to each other (an is-a hierarchy), or when the question names another type to go through."""
        if self.self_linked(target) or ev.excludes_named:
            return True  # "which *other* films ...": the named film is where the question starts
        # A relation the question names that leads from the wanted type to another one ("which actors *acted*
        # with Cillian Murphy": acted_in links persons to films): the named node of that type is a start.
        named = [n.relation for n in ev.analysis.schema_relations] + ([ev.meant] if ev.meant else [])
        if any(target in (s, t) and s != t for relation in named for s, r, t in self.schema if r == relation):
            return True
        mentions = ev.analysis.type_mentions
        first = next((pos for pos, t in mentions if t == target), None)
        return first is not None and any(pos > first and t != target for pos, t in mentions)

    def hop_type(self, anchor_type: str, ev: Evidence) -> tuple[str | None, bool]:
        """The type to explore from an anchor, and whether it is an intermediate stop: a type the question names
        between the wanted type and the anchor ("genes linked to *diseases* that have phenotype X"), else the wanted
        type if the schema links it directly, else a type that links both."""
        target = ev.target
        if ev.shared is not None:
            return ev.shared.middle, True  # "the same director as X": X's directors first
        if target is None:
            return None, False
        middle = self.named_intermediate(ev)
        if middle and (anchor_type, middle) in self.links and (middle, target) in self.links:
            return middle, True
        if self.through_itself(anchor_type, target, ev):
            return anchor_type, True
        if (anchor_type, target) in self.links:
            return target, False
        middles = [t for t in self.graph.node_types if (anchor_type, t) in self.links and (t, target) in self.links]
        # The type in between that a relation the question names leads to, else one the question names.
        hinted = set(ev.relation_hints)
        named = {t for _, t in ev.analysis.type_mentions}
        middles.sort(key=lambda t: (not hinted & self.relations_between.get((anchor_type, t), set()), t not in named))
        return (middles[0] if middles else target), False

    def through_itself(self, anchor_type: str, target: str, ev: Evidence) -> bool:
        """Whether the question names a relation linking the anchor's type to itself that does not lead to the
        wanted type ("the licences of the *dependencies* of X"): the nodes it links to the anchor are a first
        stop, the wanted type one more hop on, for a question with one anchor (a hierarchy's relation aside: its
        steps are read from the question)."""
        if anchor_type == target or len(ev.positive_anchors()) != 1:
            return False
        own = self.relations_between.get((anchor_type, anchor_type), set())
        onward = self.relations_between.get((anchor_type, target), set()) | self.relations_between.get(
            (target, anchor_type), set())
        return any(r in own and r not in onward and normalize_name(r) not in TAXONOMY_RELATIONS
                   for r in ev.relation_hints)

    def named_intermediate(self, ev: Evidence) -> str | None:
        """A node type mentioned after the wanted type that does not label an anchor ("the phenotype X")."""
        a = ev.analysis
        lower = a.question.lower()
        anchor_starts = [lower.find(anchor.name.lower()) for anchor in ev.anchors]
        mentions = a.type_mentions
        if not a.target_types:
            return None
        target_at = next((pos for pos, t in mentions if t == a.target_types[0]), None)
        if target_at is None:
            return None
        for pos, node_type in mentions:
            if pos <= target_at:
                continue
            end = pos + len(word_at(lower, pos))
            # Each anchor after the word, and whether only "of (the)" lies between them: "the *family of* GNA12"
            # is GNA12's family, a stop on the way; "the gene RHAG" labels the anchor.
            gaps = [(start, _OF_ANCHOR.fullmatch(lower[end:start]) is not None) for start in anchor_starts
                    if start >= 0]
            labels_anchor = any(start - pos <= len(node_type) + 12 and not of for start, of in gaps if start >= pos)
            # The wanted type again names the answers ("phenotypes that are clinical *features of* X"), unless the
            # question steps on from it ("which *broader* family is the *family of* X in?").
            again = node_type == a.target_types[0] and not a.hierarchy
            if not labels_anchor and not again and any(of for start, of in gaps if start > pos):
                return node_type
            # An intermediate opens a relative clause ("... diseases that have ..."); a bare repeat of a type
            # ("... and are phenotypes annotated to X") is a conjunct about the answers themselves.
            opens_clause = _RELATIVE_CLAUSE.match(lower, end)
            if not labels_anchor and opens_clause:
                return node_type
        return None

    def hierarchy(self, a: QuestionAnalysis, anchors: Sequence[Anchor]) -> str | None:
        """The way along the hierarchy the question looks, unless the words that said so lie inside the name of a
        node it names ("bilateral tonic-clonic seizure with *generalized* onset" asks for nothing broader)."""
        if not a.hierarchy:
            return None
        said = set(name_tokens(a.hierarchy_phrase))
        return None if any(said <= self.tokens(anchor.name) for anchor in anchors) else a.hierarchy

    def relation_hint(self, anchor_type: str, other: str | None, a: QuestionAnalysis,
                      exclude: tuple[str, str] | None = None, anchors: Sequence[Anchor] = (),
                      meant: str | None = None) -> str | None:
        """The relation to filter a neighbourhood by: a taxonomy relation when the question looks along the
        hierarchy, else the one relation between the two types the question names (when there are several)."""
        if other is None:
            return None
        between = self.relations_between.get((anchor_type, other), set())
        if exclude is not None:
            between = between - self.relations_between.get(exclude, set())
        if self.hierarchy(a, anchors):
            taxonomy = [r for r in between if normalize_name(r) in TAXONOMY_RELATIONS]
            if len(taxonomy) == 1:
                return taxonomy[0]
        hinted = [r for r in dict.fromkeys([*a.relation_hints, *([meant] if meant else [])]) if r in between]
        return hinted[0] if len(hinted) == 1 and len(between) > 1 else None
