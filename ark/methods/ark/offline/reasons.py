"""What the offline policy says about its answer: each answer's reason and the answer's confidence, in one line,
from what the tools returned. Pure reads of the evidence."""

from __future__ import annotations

import re

from ....question.schema_words import EXCLUDES_NAMED
from ....text import ENGLISH_STOPWORDS
from .conditions import MAX_CONJUNCTION, conjunctive, positive_conditions, satisfied, says_quoted
from .context import PolicyContext
from .direction import asked_side_empty
from .evidence import Evidence
from .evidence_answers import answers
from .evidence_rank import doubted, top_tie
from .schema_plan import said_beside_names, undecided_relation

_ASKING_WORD = re.compile(r"^\s*(?:which|what)\s+([a-z]+)\b", re.IGNORECASE)  # "What *categories* ...?"


def reason(ctx: PolicyContext, ev: Evidence, index: int) -> str:
    """Why ``index`` answers the question, in one sentence."""
    a = ev.analysis
    if index in ev.named and ev.asks_named:
        return "The node the question names, and asks for."
    if index in ev.named:
        return f"Bears the name the question asks about, '{a.named_phrase or a.question}' (its name or a synonym)."
    if ev.unsupported:
        return f"Named in the question; the graph has no relation for '{ev.unsupported}'."
    if index in ev.described:
        return "Its text says most of what the question describes."
    positive = positive_conditions(ctx, ev)
    if conjunctive(ctx, ev):
        have = satisfied(ctx, ev, index)
        yes = [ev.conditions[k].label for k in positive if k in have]
        no = [ev.conditions[k].label for k in positive if k not in have]
        if not no:
            return f"Satisfies all {len(yes)} conditions: " + "; ".join(yes) + "."
        return (f"Partial match: {'; '.join(yes) or 'none'}; not found: " + "; ".join(no) + ".")
    anchors = {anchor.index: anchor.name for anchor in ev.anchors}
    hits = sorted(ev.scores.hits.get(index, ()))
    for condition in ev.conditions:
        if condition.kind == "family" and not condition.negated:
            reached = [anchors[h] for h in hits if h in condition.members]
            if reached:
                return (f"Linked to {len(reached)} of the {len(condition.members)} nodes named like "
                        f"'{condition.label}' (no node bears that name): " + "; ".join(reached[:3])
                        + (" and more." if len(reached) > 3 else "."))
    via = [anchors[h] for h in hits if h in anchors]
    if via:
        return "Linked to " + ", ".join(via[:5]) + (" and more" if len(via) > 5 else "") + "."
    return "Best match of the question's text."


def confidence(ctx: PolicyContext, ev: Evidence) -> tuple[str, str]:
    """How sure the answer is and why, in one line: the evidence's level, lowered by doubts (see doubted)."""
    level, why = evidence_confidence(ctx, ev)
    ranked = answers(ctx, ev)
    first = ranked[0].index if ranked else None
    quoted = [q for q in ev.analysis.quoted if q not in ev.quoted_used]  # a described anchor's phrase aside
    unsaid = quoted if first is not None and not says_quoted(ctx, ev, [first]).get(first) else []
    level, why = doubted(level, why, tied=top_tie(ranked), unread=ev.unread, unsaid=unsaid,
                         profile=len(positive_conditions(ctx, ev)) > MAX_CONJUNCTION)
    undecided = undecided_relation(ctx, ev) if level == "high" and not ev.named else None
    if level == "high" and ev.shared is not None and ev.shared.guessed:
        undecided = (f"No word of the question names what is shared; {ev.shared.relation} links the most "
                     f"{ev.shared.wanted} nodes.")
    asked = unread_asked(ctx, ev) if level == "high" and not undecided and not ev.named else None
    if asked:
        undecided = f"The question asks for '{asked}', which names no type or relation of the graph."
    return ("medium", f"{why.rstrip('.')}. {undecided}") if undecided else (level, why)


def unread_asked(ctx: PolicyContext, ev: Evidence) -> str | None:
    """The word a question asks for right after its interrogative ("What *categories* do the foods of X fall
    into?") when it is no type, relation, frame or stop word and no word of an anchor's name: what the answers must
    be was not read from it."""
    found = _ASKING_WORD.search(ev.analysis.question)
    if found is None:
        return None
    word = found.group(1).lower()
    a = ev.analysis
    named = set().union(set(), *(ctx.tokens(anchor.name) for anchor in ev.anchors))
    read = ctx.ignorable | named | ctx.tokens(a.hierarchy_phrase or "") | {n.word.lower() for n in a.schema_relations}
    if word in read or word in ENGLISH_STOPWORDS or EXCLUDES_NAMED.fullmatch(word):
        return None
    # A word of a type or relation by its stem ("subclasses" ~ subclass_of, "directors" ~ directed_by) is read.
    stems = ctx.reader.all_type_words.union(*ctx.reader.relation_words.values())
    return None if any(len(w) >= 5 and w[:5] == word[:5] for w in stems) else word


def evidence_confidence(ctx: PolicyContext, ev: Evidence) -> tuple[str, str]:
    """How sure the answer is and why, in one line, from what the tools returned."""
    a = ev.analysis
    g = ctx.graph
    if ev.named and ev.asks_named:
        names = "; ".join(g.name(i) for i in ev.named[:3])
        return "high", f"The question asks for the node it names: {names}."
    if ev.named:
        names = "; ".join(g.name(i) for i in ev.named[:3])
        return "high", f"'{a.named_phrase or a.question}' is a name or synonym of {names}."
    if ev.described:
        return "medium", (f"The question describes {g.name(ev.described[0])}: its text says most of the "
                          "question's words.")
    if ev.unsupported:
        relations = ", ".join(g.relation_types)
        return "low", (f"The graph has no node type or relation for '{ev.unsupported}' (it holds "
                       f"{', '.join(g.node_types)}, linked by {relations}).")
    positive = positive_conditions(ctx, ev)
    target = ev.target
    ranked = [answer.index for answer in answers(ctx, ev)]
    if not ranked:
        wanted = f" of type {target}" if target else ""
        return "low", f"No node{wanted} was found for the question's entities."
    if not positive:
        return "low", "No entity of the question was found by name; the answers are the closest text matches."
    labels = [ev.conditions[k].label for k in positive]
    # The relation asked links the anchors to nothing: on the side asked ("What does X depend on?" of a package
    # depending on nothing; its dependents answer another question), or at all (then read unfiltered).
    one_sided = asked_side_empty(ev)
    emptied = one_sided or _emptied_relation(ctx, ev)
    if emptied:
        side, answers_are = ((" on the side asked", "the closest text matches") if one_sided else
                             ("", "linked to it by other relations"))
        return "low", (f"The graph links {' and '.join(labels)[:120]} to no {target or 'node'} by {emptied}{side}; "
                       f"the answers are {answers_are}.")
    if len(positive) > MAX_CONJUNCTION:
        return "medium", (f"Ranked by how strongly the {len(positive)} stated findings point at each answer; "
                          "no answer is expected to have them all.")
    if conjunctive(ctx, ev):
        best = satisfied(ctx, ev, ranked[0])
        if len(best & set(positive)) < len(positive):
            return "medium", ("No answer was found to satisfy every condition ("
                              + "; ".join(labels) + "); the best partial matches are shown.")
    inexact = [ev.conditions[k] for k in positive if ev.conditions[k].kind != "named"]
    if inexact:
        notes = []
        for c in inexact:
            if c.kind == "family":
                notes.append(f"no node is named '{c.label}'; used the {len(c.members)} nodes whose names "
                             f"contain it")
            else:
                notes.append(f"'{c.label}' was found by its description")
        line = "; ".join(notes)
        return "medium", line[:1].upper() + line[1:] + "."
    listed = any(centre >= 0 for centre in ev.scores.hits.get(ranked[0], ()))  # by a neighbourhood, not a search
    # The named node itself, when the question excludes it, is linked to nothing asked ("What else ... as X?").
    itself = ev.excludes_named and ranked[0] in ev.anchor_indices()
    if itself or not listed and not satisfied(ctx, ev, ranked[0]) & set(positive):
        return "low", ("No answer linked to " + " and ".join(labels)[:200] + " was found; the answers are the "
                       "closest text matches.")
    return "high", "Answers are linked to " + " and ".join(labels)[:200] + "."


def _emptied_relation(ctx: PolicyContext, ev: Evidence) -> str | None:
    """The relation the question says outside its names ("Who *maintains* pydantic?") when filtering the anchors'
    neighbourhoods by it left none and the policy read them unfiltered: the answers are not what was asked."""
    direct = [call for call in ev.expansions.filtered_out if call.get("node_index") not in ev.expansions.via_middle]
    if not direct or len(direct) < len(ev.positive_anchors()) or ev.scores.intermediates:
        return None  # a stop on the way (its relation may be the next hop's), or some anchor had what was asked
    said = said_beside_names(ctx, ev)
    emptied = [r for call in direct for r in call.get("edge_types") or [] if r in said]
    return str(emptied[0]) if emptied else None
