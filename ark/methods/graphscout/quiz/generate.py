"""The deterministic GraphScout quizzer: objective sampling, seed drawing, exact answers, clues, splits and the
leakage guard (GraphScout §3.3, Appendix B.3).

Each episode samples an objective (answer type × pattern × difficulty, :mod:`.objective`), then a seed node (a
node type uniformly, then a node of that type, among nodes with a unique name in the episode's split), and builds
a question from the seed (:mod:`.builder`); a failed attempt draws a new seed for the same objective, so the
objectives of the accepted questions stay close to uniform over the cells the graph can realise (cells that never
succeed are dropped with a note).

Answers follow the paper's rules: an entity is the one node left (checked by counting), a boolean is a count > 0
with a witness, a number a one-row count (2 or more), a set has 2-10 members (its size is computed). Clues are the
nodes a solver should touch: the anchors, the candidate of a membership test, the answer nodes of sets and
entities (the witness of a true boolean) and up to ``max_support`` nodes on paths from the anchors to them.

Splits go by seed node (a stable hash, STaRK-Prime proportions 55/20/25). The test questions are made first; a
training question whose clues include any node of a test question (anchor, candidate, answer or clue) is dropped
by the leakage guard and counted (hubs such as modes of inheritance collide most).
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from ....graph import KnowledgeGraph
from ....graph.keys import column_slices
from ....quiz.phrasebook import PhraseBook, builtin_phrasebook
from ....quiz.schema_hops import nameable_mask
from ....quiz.splits import DEFAULT_FRACTIONS, SPLITS, anchor_split
from .builder import Built, ProgramBuilder
from .evaluate import DEFAULT_FRONTIER_LIMIT, Evaluator
from .objective import HYBRID, MAX_SET, Objective, sample_objective
from .program import Program
from .render import ProgramRenderer

QUIZZERS = ("objective", "random-walk")
SEEDS_PER_OBJECTIVE = 60  # seeds tried for one objective before it counts as a failure
FAILURES_TO_GIVE_UP = 3  # consecutive failures after which a cell is dropped for this graph


@dataclass
class GraphScoutQuizConfig:
    """How many questions, from which quizzer, and the limits on answers and clues."""

    n: int = 1000
    seed: int = 0
    quizzer: str = "objective"
    max_set: int = MAX_SET
    max_support: int = 8
    frontier_limit: int = DEFAULT_FRONTIER_LIMIT
    fractions: tuple[float, float, float] = DEFAULT_FRACTIONS
    guard: bool = True
    attempts_per_question: int = 400
    patience: int = 3000  # stop filling a split after this many attempts without a new question
    exclude: frozenset[str] = frozenset()  # node ids never seeds, answers or clues (a benchmark's test questions)

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"n must be at least 1, got {self.n}")
        if self.seed < 0:
            raise ValueError(f"seed must be an integer >= 0, got {self.seed}")
        if self.quizzer not in QUIZZERS:
            raise ValueError(f"unknown quizzer {self.quizzer!r}; valid: {', '.join(QUIZZERS)}")
        if self.max_set < 2:
            raise ValueError(f"max_set must be at least 2, got {self.max_set}")
        if len(self.fractions) != 3 or any(not math.isfinite(f) or f < 0 for f in self.fractions) \
                or not math.isclose(sum(self.fractions), 1.0):
            raise ValueError(f"fractions must be three numbers >= 0 adding up to 1 (train, val, test), "
                             f"got {self.fractions}")


@dataclass
class GuardReport:
    """What the leakage guard did: training questions dropped, and the test nodes they collided on most."""

    dropped: int = 0
    test_nodes: int = 0
    excluded: int = 0  # questions dropped (any split) for touching a node of ``exclude``
    collisions: Counter = field(default_factory=Counter)

    def top(self, graph: KnowledgeGraph, k: int = 5) -> list[tuple[str, str, int]]:
        """``(node id, name, drops)`` of the ``k`` test nodes that caused most drops."""
        return [(node_id, graph.name(graph.index_of(node_id)), count)
                for node_id, count in self.collisions.most_common(k)]


@dataclass
class GraphScoutQuizResult:
    """The questions (JSON-ready, in file order), the guard's report, notes, and the effort spent."""

    questions: list[dict[str, Any]]
    guard: GuardReport
    notes: list[str]
    attempts: int
    seconds: float


def split_quotas(n: int, fractions: tuple[float, float, float]) -> dict[str, int]:
    """Questions per split (largest remainders get the leftovers)."""
    exact = {s: n * f for s, f in zip(SPLITS, fractions, strict=True)}
    counts = {s: int(x) for s, x in exact.items()}
    for s in sorted(exact, key=lambda s: counts[s] - exact[s])[: n - sum(counts.values())]:
        counts[s] += 1
    return counts


class SeedPool:
    """Seed nodes per split and node type: nodes with a unique name within their type and at least one edge."""

    def __init__(self, graph: KnowledgeGraph, nameable: np.ndarray, seed: int,
                 fractions: tuple[float, float, float]) -> None:
        degree = np.diff(np.asarray(graph.indptr))
        usable = nameable & (degree > 0)
        splits = split_codes(graph, usable, seed, fractions)
        self.by_split: dict[str, dict[str, np.ndarray]] = {}
        for code, split in enumerate(SPLITS):
            self.by_split[split] = {}
            for k, node_type in enumerate(graph.node_types):
                nodes = np.flatnonzero(usable & (splits == code) & (graph.node_type_codes == k)).astype(np.int32)
                if len(nodes):
                    self.by_split[split][node_type] = nodes

    def draw(self, split: str, rng: np.random.Generator) -> int | None:
        """A node type uniformly (among those with seeds in ``split``), then a node of that type uniformly."""
        types = list(self.by_split[split])
        if not types:
            return None
        nodes = self.by_split[split][types[int(rng.integers(len(types)))]]
        return int(nodes[int(rng.integers(len(nodes)))])


def split_codes(graph: KnowledgeGraph, usable: np.ndarray, seed: int,
                fractions: tuple[float, float, float]) -> np.ndarray:
    """Per node, the position in :data:`SPLITS` of its split (-1 where not ``usable``): the ids read a record batch
    at a time from the node table, one byte a node kept."""
    codes = np.full(graph.num_nodes, -1, dtype=np.int8)
    position = {split: k for k, split in enumerate(SPLITS)}
    for start, values in column_slices(graph.nodes.column("id")):
        rows = np.flatnonzero(usable[start:start + len(values)])
        ids = values.take(pa.array(rows)).to_pylist()
        codes[rows + start] = [position[anchor_split(node_id, seed, fractions)] for node_id in ids]
    return codes


class QuestionWriter:
    """Turns a built program into a quiz record: text, answer, ids, clues, objective fields, verification query."""

    def __init__(self, graph: KnowledgeGraph, evaluator: Evaluator, phrases: PhraseBook, max_support: int) -> None:
        from ....graphdb.schema import build_schema

        self.graph = graph
        self.evaluator = evaluator
        self.renderer = ProgramRenderer(graph, phrases)
        self.schema = build_schema(graph)
        self.max_support = max_support

    def evidence(self, built: Built, rng: np.random.Generator) -> tuple[tuple[str, list[str], list[str] | None,
                                                                             int | None], list[str]]:
        """((answer text, answer ids, set member names, witness node), clue ids) of a built program."""
        answer = self._answer(built.program, built.answers, rng)
        return answer, self._clues(built.program, built, built.answers, answer[3], rng)

    def record(self, built: Built, objective: Objective, rng: np.random.Generator, quizzer: str,
               evidence: Any = None) -> dict[str, Any]:
        from .cypher import compile_program

        g = self.graph
        program, answers = built.program, built.answers
        (answer, answer_ids, names, witness), clues = evidence or self.evidence(built, rng)
        cypher, params = compile_program(program, self.schema)
        seed = program.anchors()[0]
        record = {
            "query": self.renderer.render(program, rng),
            "answer": answer,
            "answer_type": program.answer_type,
            "answer_ids": answer_ids,
            "clue_ids": clues,
            "pattern": objective.pattern,
            "pattern_parts": list(objective.parts),
            "difficulty": objective.difficulty,
            "hops": program.hops,
            "template": f"{program.answer_type}/{objective.difficulty}",
            "quizzer": quizzer,
            "seed_id": seed.node_id,
            "seed_type": seed.node_type,
            "anchor_ids": program.anchor_ids,
            "relations": program.relations,
            "node_types": program.node_types,
            "params": program.to_dict(),
            "cypher": cypher,
            "cypher_params": params,
        }
        if names is not None:
            record["answer_names"] = names
        if program.ask == "count":
            record["answer_count"] = len(answers)
        if witness is not None:
            record["witness_id"] = g.node_id(witness)
        if program.candidate is not None:
            record["candidate_id"] = program.candidate
        return record

    def _answer(self, program: Program, answers: np.ndarray,
                rng: np.random.Generator) -> tuple[str, list[str], list[str] | None, int | None]:
        """(answer text, answer node ids, set member names, witness node)."""
        g = self.graph
        if program.ask == "count":
            return str(len(answers)), [], None, None
        if program.ask == "exists":
            witness = int(answers[int(rng.integers(len(answers)))]) if len(answers) else None
            return ("yes" if len(answers) else "no"), [], None, witness
        if program.ask == "contains":
            assert program.candidate is not None  # Program's own check: a 'contains' question names its candidate
            index = g.index_of(program.candidate)
            truth = bool(np.isin(index, answers))
            return ("yes" if truth else "no"), [], None, index if truth else None
        ids = sorted(g.node_id(int(i)) for i in answers)
        names = sorted((g.name(int(i)) for i in answers), key=lambda s: (s.lower(), s))
        if program.ask == "the_one":
            return names[0], ids, None, None
        return ", ".join(names), ids, names, None

    def _clues(self, program: Program, built: Built, answers: np.ndarray, witness: int | None,
               rng: np.random.Generator) -> list[str]:
        g = self.graph
        ordered: dict[int, None] = {g.index_of(a): None for a in program.anchor_ids}
        if program.candidate is not None:
            ordered.setdefault(g.index_of(program.candidate), None)
        if program.ask in ("list", "the_one"):
            kept = answers
            ordered.update(dict.fromkeys(answers.tolist()))
        elif witness is not None:
            kept = np.asarray([witness], np.int32)
            ordered.setdefault(witness, None)
        elif program.ask == "count":
            kept = answers
        else:
            kept = np.zeros(0, np.int32)
        support = self.evaluator.support(program, kept, built.values) if len(kept) else np.zeros(0, np.int32)
        if program.ask == "exists" and not len(answers):
            # No answer: the evidence is the nodes whose neighbourhoods were checked (the last frontier).
            source = getattr(program.target, "source", None)
            support = built.values.get(id(source), support) if source is not None else support
        support = np.setdiff1d(support, np.asarray(list(ordered), np.int32))
        if len(support) > self.max_support:
            support = np.sort(rng.choice(support, size=self.max_support, replace=False))
        ordered.update(dict.fromkeys(int(i) for i in support))
        return [g.node_id(i) for i in ordered]


class QuizAssembler:
    """Split quotas, de-duplication, the leakage guard and final ids, shared by every quizzer.

    Fill the splits in :data:`FILL_ORDER` (test first: the guard needs every test node before it judges a
    training question), offering records with :meth:`offer`.
    """

    FILL_ORDER = ("test", "val", "train")

    def __init__(self, n: int, fractions: tuple[float, float, float], guard: bool = True,
                 exclude: frozenset[str] = frozenset()) -> None:
        self.quotas = split_quotas(n, fractions)
        self.guard_enabled = guard
        self.exclude = exclude
        self.guard = GuardReport()
        self.test_nodes: set[str] = set()
        self.seen: set[str] = set()
        self.accepted: list[dict[str, Any]] = []
        self.made = dict.fromkeys(SPLITS, 0)

    def missing(self, split: str) -> int:
        return self.quotas[split] - self.made[split]

    def is_new(self, key: str) -> bool:
        return key not in self.seen

    def guard_drops(self, clue_ids: list[str], split: str) -> bool:
        """Whether the leakage guard drops a question with these clues from ``split`` (counted when it does)."""
        if split != "train" or not self.guard_enabled:
            return False
        hits = [c for c in clue_ids if c in self.test_nodes]
        if hits:
            self.guard.dropped += 1
            self.guard.collisions.update(hits)
        return bool(hits)

    def offer(self, record: dict[str, Any], key: str, split: str, guarded: bool = False) -> bool:
        """Accept ``record`` into ``split`` unless it repeats a question (``key``) or the guard drops it
        (``guarded``: the caller has asked :meth:`guard_drops` already)."""
        if key in self.seen or self.missing(split) <= 0:
            return False
        if self.exclude and not self.exclude.isdisjoint(question_nodes(record)):
            self.guard.excluded += 1
            return False
        if not guarded and self.guard_drops(record["clue_ids"], split):
            return False
        self.seen.add(key)
        record["split"] = split
        if split == "test":
            self.test_nodes.update(question_nodes(record))
        self.accepted.append(record)
        self.made[split] += 1
        return True

    def finish(self, rng: np.random.Generator, prefix: str, notes: list[str]) -> list[dict[str, Any]]:
        """The accepted records in one seeded random order, with ids ``<prefix>-<k>``; notes on short splits."""
        for split in SPLITS:
            if self.missing(split) > 0:
                notes.append(f"split {split!r}: only {self.made[split]} of {self.quotas[split]} questions "
                             f"could be made")
        self.guard.test_nodes = len(self.test_nodes)
        order = rng.permutation(len(self.accepted)).tolist()
        width = len(str(max(len(order) - 1, 0)))
        return [{"id": f"{prefix}-{k:0{width}d}", **self.accepted[i]} for k, i in enumerate(order)]


def generate_graphscout_quiz(graph: KnowledgeGraph, config: GraphScoutQuizConfig,
                             phrases: PhraseBook | None = None, progress: Any = None) -> GraphScoutQuizResult:
    """Sample ``config.n`` questions (fewer, with a note, if the graph cannot supply them); ``progress`` is called
    as ``progress(done, total)`` after each accepted question."""
    started = time.perf_counter()
    phrases = phrases or builtin_phrasebook(graph.info.name or "")
    nameable = nameable_mask(graph)
    evaluator = Evaluator(graph, config.frontier_limit)
    writer = QuestionWriter(graph, evaluator, phrases, config.max_support)
    pool = SeedPool(graph, seed_mask(graph, nameable, config.exclude), config.seed, config.fractions)
    rng = np.random.default_rng(config.seed)
    notes: list[str] = []
    if config.quizzer == "random-walk":
        from .random_walk import RandomWalkQuizzer

        episode = RandomWalkQuizzer(graph, evaluator, nameable, config.max_set).episode
    else:
        episode = ObjectiveQuizzer(graph, evaluator, nameable, config.max_set, notes).episode

    assembler = QuizAssembler(config.n, config.fractions, config.guard, config.exclude)
    attempts = 0
    for split in QuizAssembler.FILL_ORDER:
        budget = max(200, assembler.quotas[split] * config.attempts_per_question)
        idle = 0  # attempts since the last accepted question
        while assembler.missing(split) > 0 and budget > 0 and idle < config.patience:
            found = episode(pool, split, rng)
            attempts += found.attempts
            budget -= max(1, found.attempts)
            idle += max(1, found.attempts)
            if found.built is None:
                if found.exhausted:
                    break
                continue
            key = json.dumps(found.built.program.to_dict(), sort_keys=True)
            if not assembler.is_new(key):
                continue
            evidence = writer.evidence(found.built, rng)
            if assembler.guard_drops(evidence[1], split):
                continue
            record = writer.record(found.built, found.objective, rng, config.quizzer, evidence)
            if assembler.offer(record, key, split, guarded=True):
                idle = 0
                if progress is not None:
                    progress(len(assembler.accepted), config.n)
    graph_name = graph.info.label()
    tag = "gsquiz" if config.quizzer == "objective" else "rwquiz"
    questions = assembler.finish(rng, f"{graph_name}-{tag}-s{config.seed}", notes)
    return GraphScoutQuizResult(questions, assembler.guard, notes, attempts, time.perf_counter() - started)


def seed_mask(graph: KnowledgeGraph, nameable: np.ndarray, exclude: frozenset[str]) -> np.ndarray:
    """``nameable`` without the excluded nodes: the nodes a quizzer may start an episode from."""
    if not exclude:
        return nameable
    mask = nameable.copy()
    mask[[graph.index_of(node_id) for node_id in exclude if graph.has_node(node_id)]] = False
    return mask


def question_nodes(record: dict[str, Any]) -> set[str]:
    """Every node of a question: anchors, candidate, answer nodes, witness and clues."""
    nodes = set(record.get("anchor_ids", [])) | set(record.get("answer_ids", [])) | set(record.get("clue_ids", []))
    nodes.update(v for v in (record.get("candidate_id"), record.get("witness_id")) if v)
    return nodes


@dataclass
class Episode:
    """One episode's outcome: the built program (None on failure) and its objective; ``exhausted`` when the
    quizzer can make nothing more in this split."""

    built: Built | None
    objective: Objective
    attempts: int
    exhausted: bool = False


class ObjectiveQuizzer:
    """Objective sampling (the paper's quizzer, made deterministic): see the module docstring."""

    def __init__(self, graph: KnowledgeGraph, evaluator: Evaluator, nameable: np.ndarray, max_set: int,
                 notes: list[str]) -> None:
        self.builder = ProgramBuilder(graph, evaluator, nameable, max_set=max_set)
        self.failures: Counter = Counter()
        self.skip: set[tuple[str, str, str]] = set()
        self.notes = notes

    def episode(self, pool: SeedPool, split: str, rng: np.random.Generator) -> Episode:
        try:
            objective = sample_objective(rng, frozenset(self.skip))
        except ValueError:
            return Episode(None, Objective("", "", "", (), 0), 0, exhausted=True)
        truth = bool(rng.random() < 0.5)
        for attempt in range(1, SEEDS_PER_OBJECTIVE + 1):
            seed = pool.draw(split, rng)
            if seed is None:
                return Episode(None, objective, attempt, exhausted=True)
            built = self.builder.build(objective, seed, rng, truth)
            if built is not None:
                self.failures[objective.cell] = 0
                return Episode(built, objective, attempt)
        self.failures[objective.cell] += 1
        if self.failures[objective.cell] >= FAILURES_TO_GIVE_UP:
            self.skip.add(objective.cell)
            answer_type, pattern, difficulty = objective.cell
            what = "hybrid patterns" if pattern == HYBRID else f"pattern {pattern}"
            self.notes.append(f"objective {answer_type} × {what} × {difficulty}: no question after "
                              f"{FAILURES_TO_GIVE_UP * SEEDS_PER_OBJECTIVE} seeds; dropped for this graph")
        return Episode(None, objective, SEEDS_PER_OBJECTIVE)
