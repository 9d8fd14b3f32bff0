"""Entity linking for the offline policy: which search results the question's mentions name (anchors), which
mentions name a family of nodes or describe one, and which parts of the question anchored nothing. The anchor
phase's ``absorb`` runs :func:`absorb_searches`; everything here writes the evidence it is given."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from ....graph import normalize_name
from ....llm.messages import ToolCall
from ....question import Mention, identifiers, name_tokens
from ....runtime.tools import arguments_of
from ....text import ENGLISH_STOPWORDS
from .context import PolicyContext
from .direction import relation_direction
from .evidence import Anchor, Condition, Evidence, SeenNode
from .quoted import asks_beyond, described_by, described_phrases, labels_only
from .schema_plan import asks_for_named, described_answer, meant_relation_of, relation_target
from .sharing import sharing_route
from .spans import find_run, find_runs, listed_names, longest_common_run, name_spans, surface
from .wording import named_by_stems, said_with_content, unread_mentions

MAX_MENTIONS = 24  # mentions searched (the anchor phase's first calls, in the question's order)
MAX_CLAUSES = 8  # parts of long mentions searched after them
FAMILY_SIZE = 10  # nodes kept when a mention names a family of nodes rather than one


def absorb_searches(ctx: PolicyContext, ev: Evidence, results: list[tuple[ToolCall, object]]) -> None:
    """Read the anchor phase's searches (the mentions', the clauses', the named phrase's, the whole question's)
    into anchors, conditions, candidates of the wanted type, the broad results and the name asked about."""
    a = ev.analysis
    mentions = a.mentions[:MAX_MENTIONS]
    clauses = {c.text: c for c in a.clauses[:MAX_CLAUSES]}
    target = ev.target
    listings = [ctx.nodes(data) for _call, data in results]
    inside_a_name = inside_names_stated_in_full(ev, listings)
    long_quoted = set(described_phrases(a))
    quoted_hits: dict[str, list[SeenNode]] = {}
    # The words naming the relation asked for frame the question ("Who composed the *music* for X?": music_by)
    # for a node bearing them as its whole name whose type the relation never links (a genre "Music"); a node
    # the relation may lead to stays named by them (an "Onset" phenotype for has_onset).
    ends = {r: {s for s, rr, t in ctx.schema if rr == r} | {t for s, rr, t in ctx.schema if rr == r}
            for r in {n.relation for n in a.schema_relations}}

    def relation_said(node_type: str) -> frozenset[str]:
        return ctx.frame_only | {n.word.lower() for n in a.schema_relations if node_type not in ends[n.relation]}
    for position, ((call, _data), nodes) in enumerate(zip(results, listings, strict=True)):
        query = arguments_of(call).get("query")
        clause = (clauses.get(query) if isinstance(query, str) and position >= len(mentions) and query != a.question
                  else None)
        if position < len(mentions) or clause is not None:
            mention = mentions[position] if clause is None else clause
            if inside_a_name(tuple(mention.tokens)) or inside_a_name(_unframed(ctx, mention.tokens)):
                # A piece of a name the question states in full, cut off at a comma or a connective
                # ("Deafness, aminoglycoside-induced"; "... neuropathy with spastic paraplegia"): the whole
                # name anchors it, the piece names nothing of its own.
                continue
            convincing_nodes = [n for n in convincing(ctx, mention, nodes, target, family_first=clause is not None,
                                                      frame=relation_said)
                                if not inside_a_name(name_tokens(n.name))]
            for node in convincing_nodes:
                if node.type == target and not mention.negated and not ctx.related_to_named(ev, target):
                    # The question names a node of the very type it asks for: a candidate, not a hop.
                    ev.scores.score[node.index] += 1.0
                    ev.scores.names[node.index] = node.name
                else:
                    add_anchor(ev, node, mention.negated)
            if not convincing_nodes:
                ev.pending.append((mention, nodes))
        elif query == a.question:
            ev.broad = nodes
        elif query in long_quoted:
            quoted_hits.setdefault(query, nodes)
    anchor_whole_question(ctx, ev, listings, target)
    if a.named_phrase:
        ev.named = named_by(ctx, a.named_phrase, listings, target)
    read: set[str] = set()
    for mention, nodes in ev.pending:
        before = len(ev.conditions)
        anchor_family_or_description(ctx, ev, mention, nodes, target)
        if len(ev.conditions) > before:
            read.add(mention.text)
    ev.asks_about_anchor = asks_about(ctx, ev)
    described = described_by(ctx, ev, quoted_hits)
    ev.meant = meant_relation_of(ctx, ev, [described[1]] if described else [])
    if described:
        anchor_described(ctx, ev, *described)
    # The type is said only inside an anchor's name ("Which species belong to *genus* Chrysanthemum?", "How is
    # Huntington *disease* inherited?"): it names the anchor, not the answers, whose type the relation then gives.
    in_names = typed_in_names(ev)
    ev.retarget = labels_only(ev) or predicates_an_anchor(ev) or in_names
    ev.inferred_target = relation_target(ctx, ev)
    ev.retarget = (ev.retarget and ev.inferred_target is not None) or in_names
    ev.shared = sharing_route(ctx.graph.schema, a, ev.positive_anchors(), ev.excludes_named)
    ev.direction = relation_direction(ctx, ev)
    ev.described = described_answer(ctx, ev)
    note_unread(ctx, ev, read)
    if not ev.named and not ev.described:  # a description names words of other nodes, and asks for none
        ev.named = asks_for_named(ctx, ev)
        ev.asks_named = bool(ev.named) and name_tokens(a.question) != tuple(name_tokens(ctx.graph.name(ev.named[0])))
    if not a.target_types and not ev.named:
        # A question that is only a name: the node bearing it answers first, then its neighbourhood.
        asked = name_tokens(a.question)
        ev.named = [anchor.index for anchor in ev.positive_anchors() if name_tokens(anchor.name) == asked]


def anchor_described(ctx: PolicyContext, ev: Evidence, phrase: str, node: Anchor) -> None:
    """Anchor the node a quoted description names when the question asks beyond it (a relation, another type):
    a ``described`` condition, the phrase no condition on the answers' text."""
    if not asks_beyond(ev, node):
        return  # "Which package is described as "..."": the node itself is asked for (the broad search has it)
    add_anchor(ev, SeenNode(node.index, node.name, node.type), False, None)
    ev.conditions[ev.condition_of[node.index]].kind = "described"
    ev.quoted_used.append(phrase)


def convincing(ctx: PolicyContext, mention: Mention, nodes: list[SeenNode], target: str | None,
               family_first: bool = False, frame: Callable[[str], frozenset[str]] | None = None
               ) -> list[SeenNode]:
    """Results that the mention names: those whose whole name lies within the mention, longest names first
    (several when equally named, e.g. one entity from two sources; on a tie of length, not of the wanted type,
    as mentions usually name other entities). Failing that, for a short mention, the first result whose text
    holds every word of the mention and whose name shares one of them."""
    tokens = ctx.tokens
    words = set(mention.tokens)
    # A node named only by words of the question's frame ("person", "paper" where a type or a tag is called so;
    # ``frame`` gives those and the words naming the relation asked, per node type) is named by the mention only
    # when the mention says nothing else.
    framing = frame or (lambda _type: ctx.frame_only)
    named = [n for n in nodes if tokens(n.name) and tokens(n.name) <= words
             and (not tokens(n.name) <= framing(n.type) or tokens(n.name) == words)]
    if named:
        best = max(len(tokens(n.name)) for n in named)
        longest = [n for n in named if len(tokens(n.name)) == best]
        others = [n for n in longest if n.type != target]
        chosen = others or longest
        direct = [n for n in longest if n.type == target] if others else []
        return chosen[:3] + direct[:3] + other_names(ctx, named, chosen + direct, target)
    stemmed = [n for n in nodes[:10] if named_by_stems(tokens(n.name), words)
               and said_with_content(tokens(n.name), words, ctx.ignorable)]
    if stemmed:  # "passed on in an autosomal dominant inherited pattern": a name with one word inflected
        best = max(len(tokens(n.name)) for n in stemmed)
        return [n for n in stemmed if len(tokens(n.name)) == best][:3]
    if family_first and len(words) >= 2 and sum(words <= tokens(n.name) for n in nodes) >= 2:
        return []  # several nodes bear the mention within their names: a family, not one of them
    if len(words) <= 5:
        for node in nodes[:3]:
            if not ctx.graph.is_valid_index(node.index) or not (tokens(node.name) & words):
                continue
            if words <= tokens(ctx.graph.text(node.index)):
                return [node]
    return []


def other_names(ctx: PolicyContext, named: list[SeenNode], chosen: list[SeenNode], target: str | None
                ) -> list[SeenNode]:
    """Further names the same mention states beside the longest, each a condition of its own ("Which *comedy*
    films star *Margot Robbie*?"): of a type neither the wanted one nor one already chosen, sharing no word with
    the chosen names, and holding a word that is not the question's frame."""
    used = set().union(*(ctx.tokens(n.name) for n in chosen))
    types = {n.type for n in chosen} | {target}
    out: list[SeenNode] = []
    for node in sorted(named, key=lambda n: -len(ctx.tokens(n.name))):
        words = ctx.tokens(node.name)
        if node.type in types or words & used or words <= ctx.frame_only:
            continue
        out.append(node)
        used |= words
        types.add(node.type)
    return out


def named_by(ctx: PolicyContext, phrase: str, listings: list[list[SeenNode]], target: str | None) -> list[int]:
    """Nodes the searches returned that bear ``phrase`` as their name or as one of the names their text lists
    (a synonym, "Synonyms: a; b"), of the wanted type when the question says one."""
    wanted = name_tokens(phrase)
    out: list[int] = []
    for node in (n for listing in listings for n in listing):
        if node.index in out or (target is not None and node.type != target):
            continue
        if name_tokens(node.name) == wanted or any(name_tokens(name) == wanted
                                                   for name in listed_names(ctx.graph.text(node.index))):
            out.append(node.index)
    return out


def _unframed(ctx: PolicyContext, tokens: list[str]) -> tuple[str, ...]:
    """A mention's words after the words framing the question that lead it ("which genes are associated with
    *cataract*"): the piece that may lie inside a longer name the question states; () when nothing is left."""
    start = 0
    while start < len(tokens) and (tokens[start] in ctx.ignorable or tokens[start] in ENGLISH_STOPWORDS):
        start += 1
    return tuple(tokens[start:]) if 0 < start < len(tokens) else ()


def inside_names_stated_in_full(ev: Evidence, listings: list[list[SeenNode]]) -> Callable[[tuple[str, ...]], bool]:
    """A test of a run of words: does the question say it only inside longer names that it states word for word
    and that the searches found ("Nystagmus" in "Nystagmus 2, congenital")?"""
    question = name_tokens(stated_in_names(ev, listings))
    spans = []
    for words in {name_tokens(n.name) for listing in listings for n in listing}:
        if len(words) >= 2:
            spans += [(start, start + len(words)) for start in find_runs(question, words)]

    def inside(run: tuple[str, ...]) -> bool:
        starts = find_runs(question, run)
        return bool(starts) and all(any(s <= start and start + len(run) <= e and e - s > len(run)
                                        for s, e in spans) for start in starts)

    return inside


def stated_in_names(ev: Evidence, listings: list[list[SeenNode]]) -> str:
    """The question as read for the names it states whole: without the findings it says are absent, save those
    whose negation word and all lie inside a name the searches found and the question states word for word ("...
    hypotonia, seizures, and *absent* language": a word of a name stated whole is part of the name, no negation)."""
    a = ev.analysis
    cued = [m for m in a.mentions if m.cued]  # the negation word in it, none outside ("Absent: ..., absent X")
    question = name_tokens(a.question)
    stated = [words for words in {name_tokens(n.name) for listing in listings for n in listing}
              if len(words) >= 2 and find_run(question, words) >= 0] if cued else []
    kept = a.question
    for mention in (m for m in a.mentions if m.negated):
        if not (mention in cued and any(find_run(words, name_tokens(mention.text)) >= 0 for words in stated)):
            kept = kept.replace(mention.text, " ")
    return " ".join(kept.split()) or a.question


def anchor_whole_question(ctx: PolicyContext, ev: Evidence, listings: list[list[SeenNode]],
                          target: str | None) -> None:
    """Names that occur word for word in the question (even across the commas a mention split cut) anchor too,
    unless a longer anchored name already covers them."""
    pieces = [stated_in_names(ev, listings)]
    for phrase in described_phrases(ev.analysis):  # a name inside a quoted description names no anchor
        pieces = [part for piece in pieces for part in piece.split(phrase)]
    question = tuple(w for n, piece in enumerate(pieces) for w in ((*name_tokens(piece), "") if n < len(pieces) - 1
                                                                   else name_tokens(piece)))
    spans: list[tuple[int, int, SeenNode]] = []
    seen: set[int] = set()
    symbols = {w.lower() for w in identifiers(ev.analysis.question)}
    for node in (n for listing in listings for n in listing):
        words = name_tokens(node.name)
        if node.index in seen or not words or (len(words) < 2 and words[0] not in symbols):
            continue
        seen.add(node.index)
        start = find_run(question, words)
        if start >= 0:
            spans.append((start, start + len(words), node))
    known = ev.anchor_indices()
    for start, end, node in sorted(spans, key=lambda x: x[0] - x[1]):
        covered = any(s <= start and end <= e and (e - s) > (end - start) for s, e, _ in spans)
        if covered or node.index in known:
            continue
        if node.type == target and not ctx.related_to_named(ev, target):
            ev.scores.score[node.index] += 1.0
            ev.scores.names[node.index] = node.name
        else:
            add_anchor(ev, node, False)
            known.add(node.index)


def add_anchor(ev: Evidence, node: SeenNode, negated: bool, condition: Condition | None = None) -> None:
    """Record an anchor and the condition it stands for (equally named anchors share one condition)."""
    if node.index in ev.condition_of:
        return
    ev.anchors.append(Anchor(node.index, node.name, node.type, negated))
    if condition is None:
        key = normalize_name(node.name)
        position = next((k for k, c in enumerate(ev.conditions) if c.kind == "named" and c.negated == negated
                         and normalize_name(c.label) == key), None)
        if position is None:
            ev.conditions.append(Condition(node.name, [], "named", negated))
            position = len(ev.conditions) - 1
    else:
        position = ev.conditions.index(condition)
    ev.conditions[position].members.append(node.index)
    ev.condition_of[node.index] = position


def anchor_family_or_description(ctx: PolicyContext, ev: Evidence, mention: Mention, nodes: list[SeenNode],
                                 target: str | None) -> None:
    """A mention no node is named after may still name a *family* (several results whose names all hold the
    same run of the mention's words, e.g. the subtypes of a syndrome) or *describe* one node (most of the
    mention's words are in the first result's text, e.g. a finding given by its definition)."""
    anchored = [ctx.tokens(anchor.name) for anchor in ev.anchors]
    mention_words = tuple(w for w in mention.tokens)
    others = [n for n in nodes if n.type != target or ctx.self_linked(target)]
    runs: dict[tuple[str, ...], list[SeenNode]] = defaultdict(list)
    for node in others:
        run = longest_common_run(name_tokens(node.name), mention_words)
        if len(run) >= 2 and not any(set(run) <= names for names in anchored):
            runs[run].append(node)
    shared = [(run, found) for run, found in runs.items() if len(found) >= 2]
    content = [w for w in mention.tokens if w not in ctx.question_words]
    family = max(shared, key=lambda item: (len(item[1]) >= 3, len(item[0]), len(item[1])), default=None)
    # A family must be most of what the mention says; otherwise the mention may describe one node.
    if family and 2 * len(family[0]) >= len(content):
        add_family(ev, mention, others, family[0])
        return
    if add_description(ctx, ev, mention, nodes, others, anchored):
        return
    if family:
        add_family(ev, mention, others, family[0])


def add_family(ev: Evidence, mention: Mention, others: list[SeenNode], run: tuple[str, ...]) -> None:
    """Anchor every result whose name holds ``run`` (up to ``FAMILY_SIZE``) as one condition."""
    members = [n for n in others if find_run(name_tokens(n.name), run) >= 0
               and n.index not in ev.condition_of][:FAMILY_SIZE]
    if len(members) < 2:
        return
    condition = Condition(surface(mention.text, run), [], "family", mention.negated)
    ev.conditions.append(condition)
    for node in members:
        add_anchor(ev, node, mention.negated, condition)


def add_description(ctx: PolicyContext, ev: Evidence, mention: Mention, nodes: list[SeenNode],
                    others: list[SeenNode], anchored: list[frozenset[str]]) -> bool:
    """Anchor the first result as a ``described`` condition when its text holds most of a long mention's words."""
    words = set(mention.tokens)
    if ev.target is None:
        return False  # with no wanted type, a described node is an answer: the broad search has it
    if len(words) < 4 or not others or anchored and any(len(words & names) >= 2 for names in anchored):
        return False
    first = others[0] if others[0] is nodes[0] else None
    if first is None or first.index in ev.condition_of or not ctx.graph.is_valid_index(first.index):
        return False
    covered = len(words & ctx.tokens(ctx.graph.text(first.index))) / len(words)
    if covered < 0.6:
        return False
    condition = Condition(first.name, [], "described", mention.negated)
    ev.conditions.append(condition)
    add_anchor(ev, first, mention.negated, condition)
    return True


def typed_in_names(ev: Evidence) -> bool:
    """Whether every word naming the wanted type lies inside the name of an anchor the question states."""
    a = ev.analysis
    if not a.target_types or not ev.anchors:
        return False
    lower = a.question.lower()
    spans = [(at, at + len(anchor.name)) for anchor in ev.anchors for at in [lower.find(anchor.name.lower())]
             if at >= 0]
    positions = [pos for pos, t in a.type_mentions if t == a.target_types[0]]
    return bool(positions) and all(any(s <= pos < e for s, e in spans) for pos in positions)


PREDICATE_OPENERS = frozenset({"a", "an", "as"})  # "X is *an* official T", "X *as* a T": what X is
PREDICATE_SPAN = 4  # words at most between an anchor's name and the type word saying what it is


def predicates_an_anchor(ev: Evidence) -> bool:
    """Whether every word naming the wanted type says what an anchor of that type is, just after its name
    ("Where is *German an official language*?", "Where is *Romansh spoken as an official language*?"): the type
    is the anchor's, and the answers' type is read from the relation."""
    a = ev.analysis
    if not a.target_types:
        return False
    lower = a.question.lower()
    ends = [end for _, end in name_spans(a.question, [anchor.name for anchor in ev.positive_anchors()
                                                      if anchor.type == a.target_types[0]])]

    def says_what_it_is(pos: int) -> bool:
        for end in ends:
            between = lower[end:pos].split()
            if 0 < len(between) <= PREDICATE_SPAN and PREDICATE_OPENERS.intersection(between):
                return True
        return False

    positions = [pos for pos, t in a.type_mentions if t == a.target_types[0]]
    return bool(positions) and all(says_what_it_is(pos) for pos in positions)


def asks_about(ctx: PolicyContext, ev: Evidence) -> bool:
    """Whether the words read as asking for what the schema has no type or relation for are only words of the
    anchors' names and of the frame ("What is cranberry sauce *made* of?"): the question asks about the anchor."""
    asked = ev.analysis.unsupported
    if not asked or not ev.positive_anchors():
        return False
    named = set().union(*(ctx.tokens(anchor.name) for anchor in ev.positive_anchors()))
    words = name_tokens(asked)
    # "What is *cranberry sauce made* of?": the words asked begin with an anchor's name, its subject.
    return bool(words) and (words[0] in named or all(w in named or w in ctx.frame_only for w in words))


def note_unread(ctx: PolicyContext, ev: Evidence, read: set[str]) -> None:
    """Parts of the question that anchored nothing although they state something: reported as not understood
    rather than dropped. A question asking what a name stands for is framed around that name alone."""
    a = ev.analysis
    if a.named_phrase or ev.unsupported:
        return  # a name asked about frames the rest; an unsupported request is reported as such
    names = [anchor.name for anchor in ev.anchors] + list(ev.scores.names.values()) + list(a.quoted)
    # A word the anchors' own text says (a finding given by its definition: "... such as pronating") is used.
    names += [ctx.graph.text(anchor.index) for anchor in ev.anchors if ctx.graph.is_valid_index(anchor.index)]
    names += [ctx.graph.text(index) for index in ev.described]  # a description question: its answer's text
    used = {w for name in names for w in ctx.tokens(name)}
    pending = [(m.text, m.tokens) for m, _ in ev.pending if m.text not in read]
    ev.unread = unread_mentions(pending, used, ctx.ignorable)
