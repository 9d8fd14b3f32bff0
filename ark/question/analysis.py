"""Reading a question with nothing but the graph's schema: wanted node type, entity mentions, relation hints.

No rules for a particular benchmark or graph: node-type and relation names come from the graph itself, and the
linguistic cues (interrogatives, negation, list punctuation) are generic English.
"""

from __future__ import annotations

import functools
import itertools
import re
from dataclasses import dataclass, field

from ..graph import KnowledgeGraph, normalize_name
from ..text import ENGLISH_STOPWORDS, NAME_STOPWORDS, words
from .schema_words import EXCLUDES_NAMED, NamedRelation, SchemaWords, agent_type, split_keeps
from .vocabulary import graph_vocabulary, phrase_pattern, plural_forms, relation_vocabulary, type_vocabulary

# "X with or without Y" is one name (common in disease names), neither two mentions nor a negation.
_SPLIT = re.compile(r"[,;:.?!()\n]+|\s+(?:and|or(?!\s+without\b)|but|while|plus)\s+", re.IGNORECASE)
_KEPT_STOP = "\x00"  # a full stop inside a name while the question is split
_WITH_OR_WITHOUT = re.compile(r"\bwith\s+or\s+without\b", re.IGNORECASE)
# A quoted phrase ends at the mark that opened it; an apostrophe before a letter ("Witch's chin") stays inside it.
_QUOTED = re.compile(r"\"([^\"]{3,80})\"|“([^”]{3,80})”|‘([^’]{3,80}?)’(?!\w)|(?<!\w)'((?:[^']|'(?=\w)){3,80}?)'(?!\w)")
_NEGATION = re.compile(r"\b(?:absent|absence|no|not|without|lacks?|lacking|excluded?|negative for)\b", re.I)
_OF_THE = re.compile(r"\s+(?:of\s+)?(?:the\s+)?", re.IGNORECASE)  # "subclasses *of the* subclasses"


def _stem(phrase: str) -> str:
    """A hierarchy phrase without its plural ending, to tell the same phrase said twice."""
    return re.sub(r"(?:es|s)\b", "", phrase.lower())


_INTERROGATIVE = re.compile(r"\b(?:which|what|list|find|name|identify|give)\b", re.IGNORECASE)
# "what is the best treatment for ...", "which drugs are used ...": the words naming what is asked for.
_ASKED = re.compile(r"\b(?:which|what)\s+(?:(?:is|are|was|were)\s+)?((?:[\w-]+\s+){0,4}?[\w-]+?)"
                    r"(?=\s+(?:is|are|was|were|do|does|did|can|could|for|of|against|in|on|to|with|that|study|"
                    r"treat(?:s|ed|ing)?)\b)", re.IGNORECASE)
_ASKED_FILLERS = {"the", "a", "an", "best", "most", "main", "usual", "common", "recommended", "current", "known",
                  "associated", "related", "linked", "involved", "used", "found", "seen", "all", "other"}
# A question that asks what something is called names the node it wants by a name or synonym of it: "what is the
# clinical *term for* X", "which medical term do clinicians *use for* X", "the phenotype that people *call* X", "what
# is X *called*". Only when the name is what is asked: "also called X" or "the term 'X'" inside a question about
# something else gives a name in passing.
_NAME_NOUN = r"(?:term|name|word|label|synonym|designation)s?"
_NAMES_ASKED = re.compile(rf"\b(?:what|which)\s+(?:(?:is|are)\s+)?(?:the\s+)?(?:[\w-]+\s+){{0,2}}?{_NAME_NOUN}\b", re.I)
_NAME_FOR = re.compile(rf"\b{_NAME_NOUN}\s+(?:(?:do|does|would|could|might|should)\s+(?:[\w-]+\s+){{0,3}}?"
                       r"(?:use|give)\s+)?for\s+(.+)", re.IGNORECASE)
_CALLED_BY = re.compile(r"\b(?:what|which|that|whom?)\s+(?:[\w-]+\s+){0,3}?call(?:s)?\s+(.+)", re.IGNORECASE)
_CALLED = re.compile(r"\b(?:what|which)\s+(?:is|are)\s+(.+?)\s+(?:called|named)\s*[?.!]*$", re.IGNORECASE)
_NAME_WORDS = frozenset({"term", "terms", "name", "names", "word", "words", "label", "labels", "synonym", "synonyms",
                         "designation", "clinical", "medical", "technical", "proper", "correct"})
_CALL_WORDS = frozenset({"call", "calls", "called", "named"})  # the words of the patterns above asking a name
_ASIDE_LIST = re.compile(r"\(([^()]*,[^()]*)\)")
_CONNECTIVE = re.compile(r"\s+(?:with(?!\s+or\s+without\b)|that|which|who|whose|where|shows?|showing|has|have|"
                         r"having|presents? with|(?:is |are )?(?:linked|associated|related) (?:to|with)|caused by|"
                         r"due to)\s+", re.I)
_GENERIC_RELATION_WORDS = {"has", "have", "is", "a", "of", "with", "to", "in", "associated", "related", "linked"}
# Hierarchy relation names of the shipped vocabulary (ark/question/vocabulary.json); a reader adds its graph's own.
TAXONOMY_RELATIONS = frozenset(graph_vocabulary(None).hierarchy_relations)
# Words that frame a question rather than name an entity: interrogatives, auxiliaries, requests, generic links.
QUESTION_WORDS = frozenset({"what", "which", "who", "whom", "whose", "are", "is", "was", "were", "be", "been", "do",
                            "does", "did", "can", "could", "you", "associated", "linked", "related", "have", "has",
                            "show", "shows", "present", "presents", "list", "name", "find", "give", "identify", "all",
                            "that", "those", "these", "there", "their", "its"})


@functools.lru_cache(maxsize=200_000)
def name_tokens(text: str) -> tuple[str, ...]:
    """Words of a name or mention for matching: lowercase, single letters and digits kept ("type 3", "X-linked")."""
    return tuple(words(text, NAME_STOPWORDS))


@dataclass
class Mention:
    """A stretch of the question that may name an entity; ``negated`` when the question says it is absent."""

    text: str
    tokens: list[str]
    negated: bool = False
    cued: bool = False  # negated by its own first word ("*absent* speech"), not by its sentence ("Absent: X, Y")


@dataclass
class QuestionAnalysis:
    question: str
    target_types: list[str] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    quoted: list[str] = field(default_factory=list)
    relation_hints: list[str] = field(default_factory=list)
    question_without_negations: str = ""
    type_mentions: list[tuple[int, str]] = field(default_factory=list)  # (character position, node type)
    hierarchy: str | None = None  # "broader" | "narrower" when the question looks along an is-a relation
    hierarchy_phrase: str = ""  # the words that said so ("kinds of")
    hierarchy_steps: int = 1  # 2: "the grandparent of X", "two levels below X", "the subclasses of the subclasses"
    unsupported: str | None = None  # what the question asks for when the schema has no type or relation for it
    clauses: list[Mention] = field(default_factory=list)  # parts of long mentions cut at connectives ("with", ...)
    named_phrase: str | None = None  # the name or synonym of the wanted node when the question asks what it is called
    # Relations of the schema a question word names by its stem ("director", "directed" -> directed), in order.
    schema_relations: list[NamedRelation] = field(default_factory=list)
    target_from_relation: bool = False  # the wanted type was read from an agent noun of a relation ("actors")
    # "which *other* films ...": a word saying the node the question names is not an answer (the offline policy's
    # Evidence.excludes_named drops one inside an anchor's name)
    excludes_named: bool = False


def _type_words(node_type: str) -> set[str]:
    """Surface forms of a node type name: its parts and their plurals (``gene/protein`` → gene, genes, ...)."""
    parts = [p for p in re.split(r"[/_\s-]+", node_type.lower()) if p]
    phrases = [*parts, " ".join(parts)] if len(parts) > 1 else parts
    return {form for word in phrases for form in plural_forms(word)}


class QuestionReader:
    """Analyses questions against one graph's schema."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.graph = graph
        vocabulary = graph_vocabulary(getattr(graph, "path", None))
        type_descriptions = graph.info.type_descriptions
        relation_descriptions = graph.info.relation_descriptions
        said = type_vocabulary(vocabulary, graph.node_types, type_descriptions)
        self.type_words = {t: _type_words(t) | said[t] for t in graph.node_types}
        self.relation_words = {
            r: {w for w in re.split(r"[_\s/-]+", r.lower())
                if w and w not in _GENERIC_RELATION_WORDS and w not in ENGLISH_STOPWORDS}
            for r in graph.relation_types
        }
        # User words naming what a relation links to ("symptoms" -> has_phenotype): hints, matched as phrases.
        self.relation_vocabulary = relation_vocabulary(vocabulary, graph.relation_types, graph.node_types,
                                                       relation_descriptions)
        self.all_type_words: set[str] = set().union(*self.type_words.values())
        self.hierarchy_relations = frozenset(vocabulary.hierarchy_relations)
        self.has_hierarchy = any(normalize_name(r) in self.hierarchy_relations for r in graph.relation_types)
        # Types whose nodes a hierarchy relation links to each other (the kinds of a phenotype are phenotypes).
        self.hierarchy_types = sorted({t.source_type for t in graph.schema if t.source_type == t.target_type
                                       and normalize_name(t.relation) in self.hierarchy_relations})
        # The schema's own words are never mere frame ("person", "name", "responsible" where a type or a
        # relation is called so).
        schema_words = self.all_type_words.union(*self.relation_words.values())
        self.frame_words = frozenset(vocabulary.frame) - schema_words
        self.schema_words = SchemaWords(graph.relation_types, relation_descriptions, ignored=self.all_type_words)
        self._schema = [(t.source_type, t.relation, t.target_type) for t in graph.schema]
        self._narrower = phrase_pattern(vocabulary.narrower)
        self._broader = phrase_pattern(vocabulary.broader)
        self._two_levels = phrase_pattern(vocabulary.two_levels)

    def reads_nothing_in(self, name: str) -> bool:
        """Whether no word of ``name`` plays a part in reading a question but as a mention: none is a type word, a
        relation's by its stem or the vocabulary, or a word framing the question (an interrogative, "called"). A
        question with such a name cut out names the same relations."""
        said = set(words(name)) | set(name_tokens(name))
        if said & (self.all_type_words | QUESTION_WORDS | _NAME_WORDS | _CALL_WORDS):
            return False
        relation = {w for said_words in self.relation_vocabulary.values() for phrase in said_words
                    for w in phrase.split()}
        return not (_shares_stem(relation.union(*self.relation_words.values()), said)
                    or self.schema_words.named(words(name)))

    def read(self, question: str) -> QuestionAnalysis:
        analysis = QuestionAnalysis(question=question)
        analysis.quoted = [next(g for g in m.groups() if g is not None).strip() for m in _QUOTED.finditer(question)]
        analysis.named_phrase = named_phrase(question, analysis.quoted)
        # A type word inside the name asked about ("... call premature coronary artery *disease*") asks for no type.
        typed = question.replace(analysis.named_phrase, " " * len(analysis.named_phrase)) if analysis.named_phrase \
            else question
        analysis.target_types = self._target_types(typed)
        analysis.mentions = self._mentions(question, analysis.quoted)
        analysis.clauses = _clauses(analysis.mentions, self.all_type_words)
        negated = [m.text for m in analysis.mentions if m.negated]
        kept = question
        for text in negated:
            kept = kept.replace(text, " ")
        analysis.question_without_negations = " ".join(kept.split())
        question_words = set(words(question))
        analysis.relation_hints = [
            r for r, rw in self.relation_words.items() if rw and _shares_stem(rw - self.all_type_words, question_words)
        ]
        lower = typed.lower()
        analysis.type_mentions = sorted(
            (m.start(), node_type)
            for node_type, forms in self.type_words.items()
            for form in forms
            for m in re.finditer(rf"\b{re.escape(form)}\b", lower)
        )
        analysis.relation_hints += [r for r in self._asked_relations(lower, analysis) if r not in
                                    analysis.relation_hints]
        analysis.schema_relations = self.schema_words.named(words(typed))
        analysis.relation_hints += [n.relation for n in analysis.schema_relations
                                    if n.relation not in analysis.relation_hints]
        analysis.excludes_named = bool(EXCLUDES_NAMED.search(question))
        agent = self._agent_target(lower, analysis)
        if agent:
            analysis.target_types, analysis.target_from_relation = [agent], True
        for direction, pattern in (("broader", self._broader), ("narrower", self._narrower)):
            found = pattern.search(question) if pattern else None
            if pattern and found:
                analysis.hierarchy, analysis.hierarchy_phrase = direction, found.group(0)
                analysis.hierarchy_steps = self._steps(question, pattern, found)
                break
        if analysis.hierarchy and not analysis.target_types and len(self.hierarchy_types) == 1:
            # "the subtypes of N": the kinds of a node are nodes of its own type, the one the hierarchy orders.
            analysis.target_types = list(self.hierarchy_types)
        analysis.unsupported = None if analysis.named_phrase else self._unsupported(question, analysis)
        return analysis

    def _steps(self, question: str, pattern: re.Pattern[str], found: re.Match[str]) -> int:
        """Two when the hierarchy phrase says two steps ("*grand*parent", "*two levels* below") or is said twice
        in a row ("the subclasses *of the* subclasses of X"; not "kinds of A and kinds of B"), else one."""
        said = list(pattern.finditer(question))
        twice = any(_OF_THE.fullmatch(question, a.end(), b.start()) and _stem(a.group(0)) == _stem(b.group(0))
                    for a, b in itertools.pairwise(said))  # the same phrase ("more specific forms of": two)
        levels = self._two_levels.finditer(question) if self._two_levels else iter(())
        return 2 if twice or any(m.start() < found.end() and found.start() < m.end() for m in levels) else 1

    def _agent_target(self, lower: str, analysis: QuestionAnalysis) -> str | None:
        """The type an agent noun of a relation asks for ("Which *actors* acted in films ...", "the *director* of
        X": the nodes doing what the relation says), when it comes before any type the question names."""
        named = next((n for n in analysis.schema_relations if n.agent), None)
        kind = agent_type(named.relation, self._schema) if named else None
        found = re.search(rf"\b{re.escape(named.word)}\b", lower) if named else None
        if kind is None or found is None:
            return None
        typed = [pos for pos, _ in analysis.type_mentions]
        return kind if not typed or found.start() < min(typed) else None

    def _asked_relations(self, lower: str, analysis: QuestionAnalysis) -> list[str]:
        """Relations named by the word that asks for the wanted type, when it is a word of the vocabulary rather than
        the type's own name ("the *symptoms* of D": has_phenotype, not the other disease-phenotype relations)."""
        if not analysis.target_types:
            return []
        target = analysis.target_types[0]
        at = next((pos for pos, t in analysis.type_mentions if t == target), None)
        if at is None:
            return []
        return [r for r, said in self.relation_vocabulary.items()
                if any(lower.startswith(word, at) and not lower[at + len(word):at + len(word) + 1].isalnum()
                       for word in said)]

    def _target_types(self, question: str) -> list[str]:
        """Node types named after an interrogative ("which genes ...") or, failing that, anywhere."""
        lower = question.lower()
        found: list[tuple[int, str]] = []
        for node_type, forms in self.type_words.items():
            positions = [m.start() for w in forms for m in re.finditer(rf"\b{re.escape(w)}\b", lower)]
            if positions:
                found.append((min(positions), node_type))
        if not found:
            return []
        interrogative = _INTERROGATIVE.search(lower)
        if interrogative:
            after = sorted((pos, t) for pos, t in found if pos >= interrogative.start())
            if after:
                return [_head(lower, after, self.type_words)]
        return [min(found)[1]]

    def _unsupported(self, question: str, analysis: QuestionAnalysis) -> str | None:
        """The thing a question asks for ("what is the best *treatment* for X") when no node type is named anywhere
        in it and the asked words match no node type and no relation of the schema; else None."""
        # A type word inside a proper name ("Sandhoff *disease*") does not ask for that type.
        asking = [pos for pos, _ in analysis.type_mentions if not _after_capitalised(question, pos)]
        if asking or analysis.relation_hints or (analysis.hierarchy and self.has_hierarchy):
            return None
        match = _ASKED.search(question)
        if not match:
            return None
        asked = [w for w in words(match.group(1)) if w not in _ASKED_FILLERS][:3]
        if not asked or EXCLUDES_NAMED.search(" ".join(asked)):  # "the *siblings* of X": asks for its like
            return None
        # Single words by stem; phrases of the vocabulary ("clinical features") only as written.
        known = {w for w in self.all_type_words if " " not in w}.union(*self.relation_words.values())
        if _shares_stem(set(asked), known) or _says_any(" ".join(asked), self.all_type_words - known):
            return None
        return " ".join(asked)

    def _mentions(self, question: str, quoted: list[str]) -> list[Mention]:
        text = question
        for phrase in quoted:
            # The phrase and its quotation marks: no empty quotes ('for " "') are left in a mention.
            text = re.sub(rf"[\"'“‘]?{re.escape(phrase)}[\"'”’]?", " ", text)
        # A parenthesised list elaborates what precedes it ("... blood cell types (red cells, white cells, and
        # platelets)"): it names no entity of its own.
        text = _ASIDE_LIST.sub(" ", text)
        mentions: list[Mention] = []
        negated_zone = False
        # A full stop inside a name ("X-1.0", "Dr. Smith") ends no sentence and splits no mention.
        text = "".join(_KEPT_STOP if c == "." and split_keeps(text, n) else c for n, c in enumerate(text))
        for sentence in re.split(r"(?<=[.?!])\s+", text):
            negated_zone = bool(re.match(r"\s*(?:absent|excluded|negative|not present|no)\b", sentence, re.I))
            for chunk in _SPLIT.split(sentence):
                chunk = chunk.strip().replace(_KEPT_STOP, ".")
                tokens = _content_tokens(chunk)
                if not tokens:
                    continue
                cued = bool(_NEGATION.match(chunk)) and not negated_zone
                mentions.append(Mention(chunk, tokens, negated_zone or cued, cued))
        return mentions


def _head(lower: str, found: list[tuple[int, str]], type_words: dict[str, set[str]]) -> str:
    """The first type named, or the type named right after it when the two words make one noun phrase ("what
    *protein family*": its head, the last word, says the type)."""
    pos, first = found[0]
    follows = re.match(r"[\w-]+ ([\w-]+)\b", lower[pos:])
    word = follows.group(1) if follows else ""
    return next((t for t, forms in type_words.items() if word in forms and t != first), first)


def named_phrase(question: str, quoted: list[str]) -> str | None:
    """The phrase a question gives as the name or synonym of the node it asks for, when what it asks is what
    something is called ("What is the clinical term for 'Abnormal mouth'?", "Find the phenotype that laypeople call
    abnormal blood calcium levels."); None when the question asks for something else."""
    asks_name = _NAMES_ASKED.search(question)
    called_by = _CALLED_BY.search(question)
    match = (asks_name and _NAME_FOR.search(question)) or called_by or _CALLED.search(question)
    if quoted and (asks_name or match):
        return quoted[0]
    if not match:
        return None
    phrase = re.split(r"[?!;]|\.(?:\s|$)", match.group(1))[0].strip(" \t\"'“”‘’.,")
    tokens = name_tokens(phrase)
    if not tokens or all(t in _NAME_WORDS or t in QUESTION_WORDS or t in _ASKED_FILLERS for t in tokens):
        return None
    return phrase


def _content_tokens(text: str) -> list[str]:
    """Name tokens of a stretch of the question without its negation words ("no", "without", ...); the "without" of
    "with or without" stays: it belongs to a name."""
    keep_without = bool(_WITH_OR_WITHOUT.search(text))
    return [t for t in name_tokens(text) if not _NEGATION.fullmatch(t) or (keep_without and t == "without")]


def _after_capitalised(text: str, pos: int) -> bool:
    """Whether the word before ``pos`` starts with a capital and is not the question's first word."""
    before = text[:pos].rstrip()
    match = re.search(r"([\w-]+)$", before)
    return bool(match and match.start() > 0 and match.group(1)[:1].isupper())


def _clauses(mentions: list[Mention], type_words: set[str], min_tokens: int = 6) -> list[Mention]:
    """Long mentions cut at connectives into the parts that may each name an entity ("a disease *with* autosomal
    dominant inheritance *linked to* the X gene"); only parts that differ from the whole mention and may name an
    entity (see :func:`_names_a_type_only`)."""
    out: list[Mention] = []
    seen = {m.text.lower() for m in mentions}
    for mention in mentions:
        if len(mention.tokens) < min_tokens:
            continue
        for part in _CONNECTIVE.split(mention.text):
            part = part.strip()
            tokens = _content_tokens(part)
            if tokens and part.lower() not in seen and not _names_a_type_only(part, tokens, type_words):
                seen.add(part.lower())
                out.append(Mention(part, tokens, mention.negated))
    return out


def _names_a_type_only(part: str, tokens: list[str], type_words: set[str]) -> bool:
    """Whether a clause says what kind of node it is about rather than which node: only question words and node-type
    words ("Which genes", "are", "diseases"), or a phrase headed by a type word ("changes in genes", the antecedent
    of "... genes that are ..."). A type word after a capitalised word belongs to a name ("the FANCA gene",
    "Sandhoff disease") and keeps the clause."""
    if all(t in type_words or t in QUESTION_WORDS for t in tokens):
        return True
    if tokens[-1] not in type_words:
        return False
    written = re.findall(r"[\w-]+", part)
    before = written[-2] if len(written) >= 2 else ""
    return not (before[:1].isupper() and before.lower() not in QUESTION_WORDS)


def _shares_stem(relation_words: set[str], words: set[str], prefix: int = 5) -> bool:
    """True when a relation word occurs in the question, or shares its first ``prefix`` letters with a question word
    (``inheritance`` ~ ``inherited``)."""
    for word in relation_words:
        if word in words:
            return True
        if len(word) >= prefix and any(len(w) >= prefix and w[:prefix] == word[:prefix] for w in words):
            return True
    return False


def _says_any(text: str, phrases) -> bool:
    """Whether ``text`` holds one of ``phrases`` as whole words (case-insensitive)."""
    lower = text.lower()
    return any(re.search(rf"\b{re.escape(p)}\b", lower) for p in phrases)


def identifiers(question: str) -> list[str]:
    """Symbol-like words (``MAPT``, ``XK``, ``HLA-G``, ``COL1A1``): all capitals or digits after the first letter."""
    found = []
    for word in re.findall(r"\b[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9]\b", question):
        letters = [c for c in word if c.isalpha()]
        if letters and sum(c.isupper() for c in letters) >= max(2, len(letters) - 1) and word not in found:
            found.append(word)
    return found
