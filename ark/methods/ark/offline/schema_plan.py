"""What the graph's schema says about a question once its anchors are known: the type a named relation leads to
from them ("Who *directed* Parasite?": the other end of ``directed`` from a film), whether the question asks for
the named node itself ("Look up X."), and whether the relation between the anchors and the answers is decided
(one relation named, or one the schema makes principal), which "high" confidence needs. Pure reads."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ....text import ENGLISH_STOPWORDS
from .conditions import positive_conditions
from .context import PolicyContext
from .evidence import Anchor, Evidence
from .meaning import meant_by_frame, meant_relation
from .spans import name_spans, whole_words, without_names

# Generic English asking for what a node is linked to rather than for the node ("What is X *linked* to?").
_ASKS_NEIGHBOURS = re.compile(r"\b(?:associated|linked|related|connected|connections?|links?|neighbou?rs?|"
                              r"relations?|relationships?)\b", re.IGNORECASE)
DESCRIBED_AMONG = 3  # the first hits of the wanted type a description question may describe
_ASKS = re.compile(r"\?|^\W*(?:which|what|who|whom|whose|where|when|how|list|find|name|give|show|look|tell|i\b)",
                   re.IGNORECASE)  # a question or a request, not a bare statement
DOMINANT = 10  # the principal relation between two types decides alone when it links this many times the next


def relation_target(ctx: PolicyContext, ev: Evidence) -> str | None:
    """With no type named, the type at the other end of the first relation the question names from an anchor's
    type (one end only; a relation linking the type to itself leads back to it)."""
    a = ev.analysis
    if a.target_types and not ev.retarget:
        return None
    relations = dict.fromkeys([n.relation for n in a.schema_relations] + ev.relation_hints)
    said = said_beside_names(ctx, ev)
    for relation in (r for r in relations if r in said):
        for anchor in ev.positive_anchors():
            ends = ({t for s, r, t in ctx.schema if r == relation and s == anchor.type}
                    | {s for s, r, t in ctx.schema if r == relation and t == anchor.type})
            if len(ends) == 1:
                return ends.pop()
    return None


def said_beside_names(ctx: PolicyContext, ev: Evidence) -> list[str]:
    """The relations the question names or means outside the names of its anchors: a word of a node's name asks
    for no relation ("Look up Mozilla Public *License* 2.0": the licence itself, not what is licensed under it)."""
    if not ev.relation_hints:
        return []
    question, names = ev.analysis.question, [anchor.name for anchor in ev.anchors]
    rest = without_names(question, names)
    # Names of whole words none of which the reading reads (no type, relation or frame word): the first reading's
    # relations are those said beside them, and the question is not read again without them.
    if rest == question or (all(whole_words(question, span) for span in name_spans(question, names))
                            and all(ctx.reader.reads_nothing_in(name) for name in names)):
        return ev.relation_hints
    named = set(ctx.analysis(rest).relation_hints)
    return [r for r in ev.relation_hints if r in named or r == ev.meant]


def meant_relation_of(ctx: PolicyContext, ev: Evidence, extra: Sequence[Anchor] = ()) -> str | None:
    """The relation the question means when no word of it names one by stem: among the relations at the anchors'
    types (towards the wanted type when it says one), the one a question word means (an agent noun: "actors" →
    starring) or its frame means (the question without the anchors' names: "Which packages does ... require?" →
    depends_on), by the packaged MiniLM where installed (see meaning). None when the question names a relation,
    a name, a hierarchy, or has not exactly one anchor, or when no sentence naming it asks; or when no relation is
    clearly meant."""
    a = ev.analysis
    anchors = [*ev.positive_anchors(), *extra]
    if a.relation_hints or a.schema_relations or a.named_phrase or a.hierarchy or len(anchors) != 1:
        return None  # a relation is asked about one named node; several (a profile, conditions) mean none
    frame = _asking_sentence(a.question, "" if extra else anchors[0].name)  # a described node: by its quote
    if frame is None:
        return None
    types = {anchor.type for anchor in anchors}
    triples = [(s, r, t) for s, r, t in ctx.schema if s in types or t in types]
    target = ev.target
    towards = [(s, r, t) for s, r, t in triples if target in (s, t) and ({s, t} & types)]
    triples = towards or triples
    for phrase in a.quoted:
        frame = frame.replace(phrase, " ")
    frame = without_names(frame, [anchor.name for anchor in anchors])
    said = [w for w in re.findall(r"[A-Za-z]+", frame) if w.lower() not in ctx.reader.all_type_words]
    relations = sorted({r for _, r, _ in triples})
    if ev.unsupported:  # the words asking for what no type names ("Which *actors* ..."): a relation only by them
        return meant_relation(ev.unsupported.split(), relations)
    return meant_relation(said, relations) or meant_by_frame(" ".join(frame.split()), triples)


def _asking_sentence(question: str, name: str) -> str | None:
    """The sentence of the question that names ``name`` when it asks (the whole question when it is one
    sentence, else a sentence ending in a question mark); None otherwise ("A patient presents with X. Which
    disease ...?": the statement names X and asks nothing)."""
    sentences = [s for s in re.split(r"(?<=[.?!])\s+", question.strip()) if s]
    lower = name.lower()
    for sentence in sentences:
        if lower in sentence.lower() and (len(sentences) == 1 or sentence.rstrip().endswith("?")):
            return sentence
    return None


def asks_for_named(ctx: PolicyContext, ev: Evidence) -> list[int]:
    """The named nodes, when the question asks for them ("I need the record for X.", "Look up X."): no type, no
    relation, no hierarchy and no link asked for, the name asked about aside. Nothing otherwise."""
    a = ev.analysis
    if (ev.target is not None or said_beside_names(ctx, ev) or a.named_phrase or ev.unsupported or a.hierarchy
            or ev.excludes_named or _ASKS_NEIGHBOURS.search(a.question) or _says_more(ctx, ev)
            or _one_said_of_another(ev)):
        return []
    out: list[int] = []
    for k in positive_conditions(ctx, ev):
        condition = ev.conditions[k]
        if condition.kind == "named":
            out += [m for m in condition.members if m not in out]
    return out


_OF = re.compile(r"\s+of(?:\s+(?:the|a|an))?\s+", re.IGNORECASE)  # "X of Y", "X of the Y"


def _one_said_of_another(ev: Evidence) -> bool:
    """Whether two anchors' names are joined by "of" ("What is the *mode of inheritance of Marfan syndrome*?"): the
    first is asked of the second, so the question asks for what links them, not for both named nodes."""
    question = ev.analysis.question
    spans = name_spans(question, [anchor.name for anchor in ev.positive_anchors()])
    return any(_OF.fullmatch(question, end, start) for _, end in spans for start, _ in spans)


def _says_more(ctx: PolicyContext, ev: Evidence) -> bool:
    """Whether the question says a word beyond its anchors' names and its frame ("Where does X *come* from?",
    "What does X *produce*?"): it asks about the named node, not for it."""
    question = ev.analysis.question
    named = set().union(set(), *(ctx.tokens(anchor.name) for anchor in ev.anchors))
    if any(w not in named and w not in ctx.ignorable and w not in ENGLISH_STOPWORDS and not w.isdigit()
           for w in ctx.tokens(question)):
        return True
    # A lookup ends with the name ("Tell me about X."); words after it say what is asked of it ("What is X made of?")
    lower = question.lower()
    ends = [lower.find(anchor.name.lower()) + len(anchor.name) for anchor in ev.anchors
            if anchor.name.lower() in lower]
    return bool(ends) and any(w not in ENGLISH_STOPWORDS and not w.isdigit() and w not in named
                              for w in ctx.tokens(question[max(ends):]))


def undecided_relation(ctx: PolicyContext, ev: Evidence) -> str | None:
    """Why the relation to the answers is not decided, or None when it is: the question names no type of answer,
    or an anchor's type is linked to the wanted type by several relations, none of them named and none principal."""
    target = ev.target
    if target is None:
        return "The question names no type of answer; every neighbour of its entities may answer."
    hinted = set(ev.analysis.relation_hints)
    for anchor_type in sorted({anchor.type for anchor in ev.positive_anchors()}):
        counts = sorted(ctx.relation_counts.get((anchor_type, target), {}).items(), key=lambda rc: -rc[1])
        if len(counts) < 2 or hinted & {r for r, _ in counts} or counts[0][1] >= DOMINANT * counts[1][1]:
            continue
        names = ", ".join(r for r, _ in counts[:4])
        return (f"The graph links {anchor_type} and {target} by several relations ({names}) and the question "
                "names none of them.")
    return None


def described_answer(ctx: PolicyContext, ev: Evidence, share: float = 0.7, least: int = 4) -> list[int]:
    """The first node of the whole question's search when the question describes it (``least`` content words or
    more, ``share`` of them in its text, its name not the most of what is said): a description question keeps the
    search's answer, whatever words of the description name other nodes ("... a *drama* where soldiers ...") or
    the node itself ("*Pexpect* allows easy control of ...")."""
    target = ev.target
    if ev.quoted_used:
        return []  # the quoted description names the node the question goes from, not the answer
    # A bare statement asks for nothing: its type and relation words describe too ("*Data* *format* for a ...
    # alignment.", "a milkshake *made* with malt powder").
    statement = not _ASKS.search(ev.analysis.question)
    ignorable = ctx.frame_only - ctx.reader.all_type_words if statement else ctx.ignorable
    content = {w for w in ctx.tokens(ev.analysis.question) if w not in ignorable and len(w) > 1
               and not w.isdigit()}
    if len(content) < (least - 1 if statement else least) or not ev.broad:  # a statement of three may describe
        return []
    # Of the first hits of the wanted type (of any type when the search found none of it, a "who" inside a plot,
    # or when a bare statement names no type it asks for), the one whose text says the most of the question, the
    # first of those.
    hits = [n for n in ev.broad if ctx.graph.is_valid_index(n.index)]
    # (A question naming a relation or a step may describe the node it goes from, one quoting words may ask them of
    # the answers' text: its first hit alone, then.)
    wide = statement or not (ev.relation_hints or ev.analysis.hierarchy or ev.analysis.quoted)
    typed = [n for n in hits if target is None or n.type == target or statement]
    among = typed[: DESCRIBED_AMONG if wide else 1] or hits[:1]
    if not among:
        return []
    first = max(among, key=lambda n: (len(content & ctx.tokens(ctx.graph.text(n.index))), -among.index(n)))
    said = content & ctx.tokens(ctx.graph.text(first.index))
    if len(said) < share * len(content):
        return []
    if first.index in ev.anchor_indices() and first.type != target and said != content:
        return []  # an entity the question names, not the type it asks for: the question asks about it
    own = ctx.tokens(first.name) & content
    beside_name = ctx.tokens(re.sub(re.escape(first.name), " ", ctx.graph.text(first.index), flags=re.IGNORECASE))
    if (own and ctx.tokens(first.name) <= ctx.tokens(ev.analysis.question) and len(own) >= share * len(content)
            and not (statement and content <= beside_name)):  # a statement its description says: described
        return []  # named, not described: its name is the most of what the question says
    named = set().union(*(ctx.tokens(anchor.name) for anchor in ev.anchors if anchor.index != first.index))
    unnamed = content - named
    # The words naming a relation or a step along the hierarchy ("subclasses of", "broader terms than"): a node's
    # text that says the question's other words but none of these is where the relation starts, not its answer.
    asked = " ".join([ev.analysis.hierarchy_phrase, *(n.word for n in ev.analysis.schema_relations)])
    along = (ctx.tokens(asked) & content) - own
    if along and not along & said:
        return []
    if len(unnamed) < len(content) / 2 and not (said == content and unnamed):
        # The question is mostly names of other nodes (a patient's findings, conditions to intersect): it names,
        # not describes, unless the node's text says every word of it and some that name nothing.
        return []
    return [first.index]
