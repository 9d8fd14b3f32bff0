"""The read-only guard: a Cypher tokenizer and allow-lists of statements, keywords, procedures and functions.

:func:`check_read_only` reads a statement the way the engines' lexers do (strings with backslash escapes,
backtick-quoted names with doubled backticks, ``//`` and ``/* */`` comments, case-insensitive keywords), refuses a
comment whose end the engines' lexers read differently (a ``*`` inside ``/* */``, a carriage return inside ``//``),
and accepts it only when

- it is one statement that opens with a reading clause (``MATCH``, ``OPTIONAL MATCH``, ``WITH``, ``UNWIND``,
  ``RETURN``, ``CALL``);
- no keyword outside :data:`ALLOWED_KEYWORDS` appears where a keyword can stand (words after ``.``, ``:`` or ``$``
  are properties, labels and parameters; any other word that is a Cypher keyword must be a reading one);
- every name followed by ``(`` is a reading keyword or a function of :data:`ALLOWED_FUNCTIONS` (file-reading table
  functions, sequences and settings are not among them), whether it is written plainly or in backticks;
- every ``CALL`` is a subquery (``CALL {``) or a procedure of :data:`READ_ONLY_PROCEDURES` for the dialect
  (``CALL name=value``, a session setting, never is).

Nothing is blanked before the checks, so quoting a name in backticks changes nothing. Why by hand: no maintained
Python library parses both the ladybug and the Neo4j dialect; the engines stay the oracle (the database is opened
read-only, Neo4j runs read transactions), this guard refuses early with a message a model can act on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import CypherSyntaxError, WriteRefused


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Clause and expression keywords of reading queries (both dialects).
ALLOWED_KEYWORDS = _words("""
MATCH OPTIONAL WHERE WITH RETURN UNWIND AS ORDER BY ASC ASCENDING DESC DESCENDING SKIP LIMIT DISTINCT UNION ALL
AND OR XOR NOT IN IS NULL TRUE FALSE CASE WHEN THEN ELSE END STARTS ENDS CONTAINS CALL YIELD EXISTS COUNT COLLECT
SHORTEST ANY NONE SINGLE REDUCE CAST
""")
# Keywords of anything else: writes, files, extensions, databases, transactions, settings, administration.
REFUSED_KEYWORDS = _words("""
CREATE MERGE SET DELETE DETACH REMOVE DROP ALTER RENAME COPY LOAD INSTALL UNINSTALL EXTENSION ATTACH USE EXPORT
IMPORT CHECKPOINT BEGIN COMMIT ROLLBACK TRANSACTION TRANSACTIONS FOREACH TRUNCATE INSERT UPDATE UPSERT MACRO
SEQUENCE GRANT DENY REVOKE SHOW TERMINATE PERIODIC
""")
STATEMENT_STARTS = frozenset({"MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL"})
# Functions a reading query may call (names compared case-insensitively): aggregates, graph, list, string, maths,
# conversion and date functions of ladybug and Neo4j; no table function, file access, sequence or setting.
ALLOWED_FUNCTIONS = _words("""
count sum avg min max collect stdev stdevp percentilecont percentiledisc count_if histogram
id elementid label labels type properties keys nodes rels relationships startnode endnode start_node end_node
length size cardinality exists isempty is_trail is_acyclic shortestpath allshortestpaths cost internal_id offset
all any none single reduce coalesce ifnull nullif
head last tail range reverse list_contains list_has list_has_all list_has_any list_extract list_element
list_concat list_cat list_append list_prepend list_position list_indexof list_slice list_sort list_reverse_sort
list_reverse list_sum list_product list_distinct list_unique list_any_value list_min list_max list_to_string
list_filter list_transform list_reduce list_creation array_contains array_has array_extract array_slice
array_concat array_cat array_position array_indexof array_distance array_cosine_similarity array_dot_product
array_inner_product array_squared_distance array_cross_product array_value
tostring tointeger tofloat toboolean tolower toupper tostringornull tointegerornull tofloatornull tobooleanornull
to_string to_int64 to_int32 to_int16 to_int8 to_double to_float to_bool to_date to_timestamp string cast
lower upper lcase ucase trim ltrim rtrim btrim replace substring substr split string_split str_split split_part
left right lpad rpad repeat concat concat_ws contains starts_with ends_with prefix suffix initcap levenshtein
regexp_matches regexp_full_match regexp_replace regexp_extract regexp_extract_all regexp_split_to_array
string_to_array list_to_string normalize char_length character_length octet_length
abs ceil ceiling floor round sqrt cbrt sign exp ln log log10 log2 pow power rand random pi e sin cos tan cot asin
acos atan atan2 degrees radians haversin factorial gamma lgamma even greatest least
date datetime localdatetime time localtime duration timestamp current_date current_timestamp date_part datepart
date_trunc datetrunc dayname monthname last_day make_date epoch_ms to_epoch_ms interval to_years to_months
to_days to_hours to_minutes to_seconds to_milliseconds to_microseconds century
struct_extract struct_pack map map_extract map_keys map_values element_at typeof md5 sha256 hash
""")
# Read-only procedures a query may CALL, per dialect (names compared case-insensitively).
READ_ONLY_PROCEDURES: dict[str, frozenset[str]] = {
    "ladybug": frozenset({"show_tables", "table_info", "show_connection", "db_version", "show_functions",
                          "show_indexes"}),
    "neo4j": frozenset({"db.labels", "db.relationshiptypes", "db.propertykeys", "db.schema.visualization",
                        "db.schema.nodetypeproperties", "db.schema.reltypeproperties"}),
}
MAX_QUERY_CHARS = 100_000
# Nesting the engines' recursive parsers take: ladybug crashes (SIGSEGV) on 20,000 NOTs in a row or 1,000 nested
# lists and runs for minutes on 500. Real queries nest a few levels; the worker process is the real boundary.
MAX_NESTING = 32  # (, [, { and CASE open, inside one another
MAX_UNARY_CHAIN = 8  # NOT, - and + in a row
_OPENERS = {"(": ")", "[": "]", "{": "}"}

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<open_comment>/\*)
  | (?P<string>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
  | (?P<open_string>['"])
  | (?P<quoted>`(?:[^`]|``)*`)
  | (?P<open_quoted>`)
  | (?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<word>[^\W\d]\w*)
  | (?P<symbol>.)
""", re.VERBOSE | re.DOTALL)
_UNCLOSED = {"open_comment": "a /* comment", "open_string": "a string", "open_quoted": "a `quoted name`"}


@dataclass(frozen=True)
class Token:
    kind: str  # word | quoted | string | number | symbol | line_comment | block_comment | space
    text: str
    start: int

    @property
    def name(self) -> str:
        """The identifier this token spells (backticks removed, doubled backticks undone)."""
        return self.text[1:-1].replace("``", "`") if self.kind == "quoted" else self.text


def tokenize(cypher: str) -> list[Token]:
    """Every token of ``cypher``, comments and spaces included; :class:`CypherSyntaxError` for an unclosed string,
    quoted name or comment."""
    tokens = []
    for match in _TOKEN.finditer(cypher):
        kind = match.lastgroup or "symbol"
        if kind in _UNCLOSED:
            raise CypherSyntaxError(f"Cypher syntax error: {_UNCLOSED[kind]} opened at character {match.start() + 1} "
                                    "is never closed")
        token = Token(kind, match.group(0), match.start())
        _check_unambiguous(token)
        tokens.append(token)
    return tokens


def _check_unambiguous(token: Token) -> None:
    """Refuse a comment the engines' lexers may end elsewhere than this tokenizer, so text it skips as a comment
    could be code to the engine: ladybug reads ``*`` and the next character as one character of a ``/* */``
    comment (``/* **/`` is not closed there), Neo4j ends a ``//`` comment at a carriage return. Only comments whose
    end every lexer agrees on pass: a block comment without ``*`` inside, a line comment without a carriage return
    (one just before its newline, a Windows line end, is read alike everywhere)."""
    if token.kind == "block_comment" and "*" in token.text[2:-2]:
        raise CypherSyntaxError(f"a /* comment */ may not hold '*' (at character {token.start + 1}): engines end such "
                                "a comment in different places; remove the '*' or use a // comment")
    if token.kind == "line_comment" and "\r" in token.text.removesuffix("\r"):
        raise CypherSyntaxError(f"a // comment may not hold a carriage return (at character {token.start + 1}): "
                                "engines end such a comment in different places; end it with a newline")


def code_tokens(cypher: str) -> list[Token]:
    """The tokens that carry meaning (no spaces or comments)."""
    return [t for t in tokenize(cypher) if t.kind not in ("space", "line_comment", "block_comment")]


def strip_literals(cypher: str) -> str:
    """``cypher`` with string literals, quoted names and comments blanked (same length)."""
    return "".join(" " * len(t.text) if t.kind in ("string", "quoted", "line_comment", "block_comment") else t.text
                   for t in tokenize(cypher))


def parameter_names(cypher: str) -> list[str]:
    """The ``$parameters`` a statement uses, first-seen order."""
    tokens = code_tokens(cypher)
    names = [b.name for a, b in zip(tokens, tokens[1:], strict=False)
             if a.text == "$" and b.kind in ("word", "quoted", "number")]
    return list(dict.fromkeys(names))


def statement_count(tokens: list[Token]) -> int:
    """How many ``;``-separated statements ``tokens`` hold (a trailing ``;`` ends the last one)."""
    parts = 1
    for index, token in enumerate(tokens):
        if token.text == ";" and index < len(tokens) - 1:
            parts += 1
    return parts


def check_read_only(cypher: str, dialect: str = "ladybug") -> None:
    """Raise :class:`WriteRefused` unless ``cypher`` is one reading statement (see the module docstring);
    :class:`CypherSyntaxError` for an empty or unterminated one."""
    if not isinstance(cypher, str) or not cypher.strip():
        raise CypherSyntaxError("empty query: pass one Cypher statement such as MATCH (n) RETURN count(n)")
    if len(cypher) > MAX_QUERY_CHARS:
        raise CypherSyntaxError(f"the query has {len(cypher):,} characters; the limit is {MAX_QUERY_CHARS:,}")
    tokens = code_tokens(cypher)
    if not tokens:
        raise CypherSyntaxError("the query holds only comments: pass one Cypher statement")
    if statement_count(tokens) > 1:
        raise CypherSyntaxError("one statement per query: remove the ';'-separated extra statements")
    check_nesting(tokens)
    first = tokens[0]
    if first.kind != "word" or first.text.upper() not in STATEMENT_STARTS:
        raise WriteRefused(f"a query must start with {', '.join(sorted(STATEMENT_STARTS))}; {first.text[:40]!r} is "
                           "not allowed: the graph database is read-only (use MATCH ... RETURN)")
    procedures = READ_ONLY_PROCEDURES.get(dialect, frozenset())
    skip: set[int] = set()
    for index, token in enumerate(tokens):
        if index in skip or token.kind not in ("word", "quoted"):
            continue
        before = tokens[index - 1].text if index else ""
        after = tokens[index + 1].text if index + 1 < len(tokens) else ""
        if token.kind == "word" and token.text.upper() == "CALL" and before != ".":
            skip.update(_check_call(tokens, index, procedures))
            continue
        if after == "(":
            _check_function(tokens, index)
        elif before in (".", ":", "$") or (before == "|" and _in_label(tokens, index)):
            continue  # a property, label, relationship type or parameter name
        elif token.kind == "word" and token.text.upper() in REFUSED_KEYWORDS:
            raise WriteRefused(f"{token.text.upper()} is not allowed: the graph database is read-only "
                               "(use MATCH ... RETURN)")


def check_nesting(tokens: list[Token]) -> None:
    """:class:`CypherSyntaxError` when brackets and ``CASE`` nest deeper than :data:`MAX_NESTING` or more than
    :data:`MAX_UNARY_CHAIN` unary operators (``NOT``, ``-``, ``+``) stand in a row."""
    depth, chain = 0, 0
    for token in tokens:
        word = token.text.upper() if token.kind == "word" else None
        if token.text in _OPENERS or word == "CASE":
            depth += 1
            if depth > MAX_NESTING:
                raise CypherSyntaxError(f"the query nests brackets or CASE more than {MAX_NESTING} deep (at character "
                                        f"{token.start + 1}); the limit is {MAX_NESTING}: flatten it (WITH, UNWIND)")
        elif token.text in _OPENERS.values() or word == "END":
            depth = max(0, depth - 1)
        chain = chain + 1 if word == "NOT" or (token.kind == "symbol" and token.text in "-+") else 0
        if chain > MAX_UNARY_CHAIN:
            raise CypherSyntaxError(f"more than {MAX_UNARY_CHAIN} operators NOT, - or + in a row (at character "
                                    f"{token.start + 1}); the limit is {MAX_UNARY_CHAIN}: simplify the expression")


def _in_label(tokens: list[Token], index: int) -> bool:
    """Whether the word at ``index`` is a label alternative (``:a|b``) rather than a list comprehension's bar."""
    k = index - 1
    while k >= 2 and tokens[k].text == "|" and tokens[k - 1].kind in ("word", "quoted"):
        if tokens[k - 2].text == ":":
            return True
        k -= 2
    return False


def _dotted_name(tokens: list[Token], index: int) -> tuple[str, int]:
    """The dotted name ending at ``index`` (``db.schema.visualization``), lower-cased, and where it starts."""
    parts = [tokens[index].name]
    start = index
    while start >= 2 and tokens[start - 1].text == "." and tokens[start - 2].kind in ("word", "quoted"):
        start -= 2
        parts.insert(0, tokens[start].name)
    return ".".join(parts).lower(), start


def _check_function(tokens: list[Token], index: int) -> None:
    token = tokens[index]
    name, start = _dotted_name(tokens, index)
    plain = start == index and (index == 0 or tokens[index - 1].text not in (".", ":", "$"))
    if token.kind == "word" and plain and token.text.upper() in ALLOWED_KEYWORDS:
        return  # a keyword before a parenthesis: WHERE (...), IN (...), EXISTS (...)
    if plain and name in ALLOWED_FUNCTIONS:
        return
    raise WriteRefused(f"function {name}() is not allowed in a read-only query; use the usual aggregates, list, "
                       "string and maths functions (count, collect, size, toLower, ...)")


def _check_call(tokens: list[Token], index: int, procedures: frozenset[str]) -> set[int]:
    """Check the ``CALL`` at ``index``; the indices of the procedure name (already checked)."""
    following = tokens[index + 1:index + 2]
    if following and following[0].text in ("{", "("):
        return set()  # a subquery: its clauses are checked like the rest
    end = index + 1
    while end < len(tokens) and tokens[end].kind in ("word", "quoted"):
        if end + 1 < len(tokens) and tokens[end + 1].text == ".":
            end += 2
            continue
        break
    if end >= len(tokens) or tokens[end].kind not in ("word", "quoted"):
        raise WriteRefused("CALL must name a read-only procedure: " + _procedure_list(procedures))
    name, _ = _dotted_name(tokens, end)
    opener = tokens[end + 1].text if end + 1 < len(tokens) else ""
    if opener == "=":
        raise WriteRefused(f"CALL {name}=... changes a database setting and is not allowed")
    if opener != "(" or name not in procedures:
        raise WriteRefused(f"CALL {name} is not allowed; {_procedure_list(procedures)}")
    return set(range(index + 1, end + 1))


def _procedure_list(procedures: frozenset[str]) -> str:
    return f"read-only procedures: {', '.join(sorted(procedures)) or 'none'}"
