"""The exploration objective of one quizzer episode (GraphScout §3.3.1, Appendix B.3): answer type × query
pattern × difficulty, and the seed node (a node type drawn uniformly, then a node of that type).

Patterns (PolyG's triple forms; ``h`` given head, ``r`` relation, ``t`` tail, ``*`` to discover, ``_`` open):

- ``<h,_,_>`` entity-centric: from ``h`` along any relation (the relation is not named in the question);
- ``<h,r,*>`` object finding: from ``h`` along named relations;
- ``<h,*,t>`` relationship discovery: how ``h`` and ``t`` connect, along any relation (the nodes linking them, or
  whether ``t`` is reached);
- ``<h,r,t>`` verification: the same with named relations;
- ``hybrid``: two different patterns in sequence, the second starting from the first's result (hard only).

Difficulties (hops = edges over all the question's paths):

- simple: 1-2 hops, one relation (a wildcard hop counts as the relation ``*``), no hybrid;
- medium: 2-4 hops, at least two relations or two node types;
- hard: 3-5 hops, at least two relations or two node types, hybrids allowed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .program import Program

ANSWER_TYPES: tuple[str, ...] = ("entity", "boolean", "number", "set")
PATTERNS: tuple[str, ...] = ("<h,_,_>", "<h,r,*>", "<h,*,t>", "<h,r,t>")
HYBRID = "hybrid"
ALL_PATTERNS: tuple[str, ...] = (*PATTERNS, HYBRID)
MEET_PATTERNS = frozenset({"<h,*,t>", "<h,r,t>"})
NAMED_PATTERNS = frozenset({"<h,r,*>", "<h,r,t>"})


@dataclass(frozen=True)
class Difficulty:
    name: str
    min_hops: int
    max_hops: int
    single_relation: bool  # simple: one relation type
    varied: bool  # medium, hard: at least two relations or two node types
    hybrid: bool  # hybrids allowed


DIFFICULTIES: dict[str, Difficulty] = {
    "simple": Difficulty("simple", 1, 2, single_relation=True, varied=False, hybrid=False),
    "medium": Difficulty("medium", 2, 4, single_relation=False, varied=True, hybrid=False),
    "hard": Difficulty("hard", 3, 5, single_relation=False, varied=True, hybrid=True),
}
MAX_SET = 10  # the paper's threshold on set answers


@dataclass(frozen=True)
class Objective:
    """What one episode must produce; ``parts`` is the pattern, or a hybrid's two patterns in order."""

    answer_type: str
    pattern: str
    difficulty: str
    parts: tuple[str, ...]
    hops: int

    @property
    def cell(self) -> tuple[str, str, str]:
        return (self.answer_type, self.pattern, self.difficulty)


def patterns_for(difficulty: str) -> tuple[str, ...]:
    return ALL_PATTERNS if DIFFICULTIES[difficulty].hybrid else PATTERNS


def part_min_hops(part: str, terminal_contains: bool) -> int:
    """A meet needs a hop on each side; a membership test of a meet pattern needs one hop."""
    return 2 if part in MEET_PATTERNS and not terminal_contains else 1


def sample_objective(rng: np.random.Generator, skip: frozenset[tuple[str, str, str]] = frozenset()) -> Objective:
    """Answer type, difficulty and then a pattern the difficulty allows, each uniformly; then the hops (uniform in
    what the difficulty and the pattern's parts allow). ``skip`` lists cells known to be infeasible."""
    for _ in range(1000):
        answer_type = ANSWER_TYPES[int(rng.integers(len(ANSWER_TYPES)))]
        difficulty = DIFFICULTIES[tuple(DIFFICULTIES)[int(rng.integers(len(DIFFICULTIES)))]]
        options = patterns_for(difficulty.name)
        pattern = options[int(rng.integers(len(options)))]
        if (answer_type, pattern, difficulty.name) in skip:
            continue
        if pattern == HYBRID:
            first, second = (PATTERNS[int(i)] for i in rng.choice(len(PATTERNS), size=2, replace=False))
            parts: tuple[str, ...] = (first, second)
        else:
            parts = (pattern,)
        contains = answer_type == "boolean" and parts[-1] in MEET_PATTERNS
        lowest = sum(part_min_hops(p, contains and k == len(parts) - 1) for k, p in enumerate(parts))
        low = max(difficulty.min_hops, lowest)
        if low > difficulty.max_hops:
            continue
        hops = int(rng.integers(low, difficulty.max_hops + 1))
        return Objective(answer_type, pattern, difficulty.name, parts, hops)
    raise ValueError("every objective cell is marked infeasible for this graph")


def fits(program: Program, difficulty: str) -> bool:
    """Whether ``program``'s structure meets the difficulty's constraints."""
    rule = DIFFICULTIES[difficulty]
    if not rule.min_hops <= program.hops <= rule.max_hops:
        return False
    if rule.single_relation and len(program.relations) != 1:
        return False
    return not (rule.varied and len(program.relations) < 2 and len(program.node_types) < 2)


def difficulty_of(program: Program, hybrid: bool = False) -> str:
    """The easiest difficulty whose constraints ``program`` meets (used to label random-walk questions)."""
    for name, rule in DIFFICULTIES.items():
        if (rule.hybrid or not hybrid) and fits(program, name):
            return name
    return "hard" if program.hops > DIFFICULTIES["medium"].max_hops else "medium"
