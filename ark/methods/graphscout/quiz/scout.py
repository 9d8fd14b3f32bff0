"""The LLM scout quizzer (GraphScout §3.3, Appendix B.3): a chat model explores the graph from a seed node under a
sampled objective, with at most 10 tool calls, and reports one question that the graph then checks.

Each episode: an objective (:func:`~ark.methods.graphscout.quiz.objective.sample_objective`) and a seed (a node type
uniformly, then a node) as in the deterministic quizzer; a system prompt with the graph's schema and the answer
rules; the tools of :mod:`.scout_tools` (``node_id_retriever``, ``cypher``, ``report_question``) driven by the
shared tool loop (:func:`ark.runtime.loop.run_tool_loop`) through any :class:`~ark.llm.ChatPolicy`. A question is
kept only when ``report_question`` accepted it (its verification query reproduces the answer); the record then
holds the graph's answer, the clue ids, the objective fields (``hops`` is the objective's target: a free-form
question's hops are not measured) and the verification query. Splits and the leakage guard are those of the
deterministic quizzer.

    from ark.llm import OpenAIChatClient, resolve_settings
    result = asyncio.run(scout_quiz(graph, OpenAIChatClient(resolve_settings()), ScoutConfig(n=50)))
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ....graph import KnowledgeGraph
from ....llm.messages import Message, SystemMessage, UserMessage
from ....llm.policy import ChatPolicy
from ....quiz.schema_hops import nameable_mask
from ....quiz.splits import DEFAULT_FRACTIONS
from ....runtime.loop import run_tool_loop
from ....runtime.records import Trajectory
from ....storage.jsonl import append_jsonl
from .generate import GraphScoutQuizResult, QuizAssembler, SeedPool, seed_mask
from .objective import ANSWER_TYPES, HYBRID, MAX_SET, Objective, sample_objective
from .scout_tools import BUDGET, REPORT, Accepted, DirectCypher, SandboxCypher, ScoutToolbox

if TYPE_CHECKING:
    from ....index.graph_index import TextIndex

PATTERN_TEXT = {
    "<h,_,_>": "entity-centric: only the seed is given; ask about its neighbourhood in general (what it links to, "
               "how many, which one) without naming a relation",
    "<h,r,*>": "object finding: from the seed along named relations (one or a chain) to the nodes at the end; the "
               "question names the relations and asks for what they reach",
    "<h,*,t>": "relationship discovery: the seed and a second node t are given; ask how they are connected (the "
               "nodes linking them, or whether they are) without naming the relations",
    "<h,r,t>": "verification: the seed, a relation or relation chain and a second node t are given; ask whether "
               "the relation holds, or through which nodes",
}
DIFFICULTY_TEXT = {
    "simple": "1-2 hops along one relation type; no combined patterns",
    "medium": "2-4 hops through explicit intermediate nodes, with at least two relation types or node types",
    "hard": "3-5 hops through several intermediate nodes and relation types, so that the seed's direct "
            "neighbours cannot answer it",
}
ANSWER_RULES = """Answer rules (report_question checks them by running your verification query):
- entity: exactly one node; the verification query returns one row whose first value is that node (or its name).
  Names only in the question and the answer, never internal ids.
- boolean: the verification query returns one row with one value, a count or true/false; the answer is yes iff
  the count is above 0. For yes, give witness_id: one node that makes it true.
- number: the verification query returns one row with one number from an aggregation (count(DISTINCT x) ...),
  without LIMIT.
- set: the verification query returns one row per member, 2 to {max_set} rows (count them first; if there are
  more, add constraints); the answer lists the names separated by commas.
Clues (clue_ids): the ids of the nodes you used to build the question and its answer: the seed, the nodes on the
way, the answer nodes."""
SYSTEM_PROMPT = """You are a graph scout. You explore a knowledge graph with tools, then write exactly one question
about it whose answer the graph proves, following the objective you are given.

Tools: node_id_retriever finds node ids from names; cypher runs one read-only Cypher query (values as $name
parameters); report_question submits the question with its answer, answer type, clue ids and a verification
query, and ends the episode when the graph confirms it. You have {budget} tool calls in all, report_question
included: explore with purpose, stop when you have enough.

{schema}

{rules}"""
USER_PROMPT = """Objective:
- answer type: {answer_type}{aim}
- pattern {pattern}: {pattern_text}
- difficulty {difficulty}: {difficulty_text}
Seed node: {seed_name} (id {seed_id}, type {seed_type}).
Explore from the seed, then call report_question."""
NO_CALL = f"Call a tool: explore further, or submit the question with {REPORT.name}."


@dataclass
class ScoutConfig:
    """How many questions, the episode budget, and where queries run (``sandbox``: a sandboxed interpreter per
    episode; ``direct``: the database's worker process, :mod:`ark.graphdb.isolated`, never this one)."""

    n: int = 100
    seed: int = 0
    budget: int = BUDGET
    max_set: int = MAX_SET
    answer_types: tuple[str, ...] = ANSWER_TYPES
    runner: str = "sandbox"
    fractions: tuple[float, float, float] = DEFAULT_FRACTIONS
    guard: bool = True
    exclude: frozenset[str] = frozenset()  # node ids never seeds, answers or clues (a benchmark's test questions)
    max_episodes: int | None = None  # default: 3 per question
    trajectory_path: str | Path | None = None  # append every episode's trajectory here (JSONL)

    def __post_init__(self) -> None:
        if self.n < 1 or self.budget < 1:
            raise ValueError(f"n and budget must be at least 1, got n={self.n}, budget={self.budget}")
        unknown = sorted(set(self.answer_types) - set(ANSWER_TYPES))
        if unknown or not self.answer_types:
            raise ValueError(f"answer_types must be some of {', '.join(ANSWER_TYPES)}, got {self.answer_types}")
        if self.runner not in ("sandbox", "direct"):
            raise ValueError(f"runner must be 'sandbox' or 'direct', got {self.runner!r}")


@dataclass
class ScoutEpisode:
    """One episode: its objective and seed, the accepted question (None if none) and the trajectory."""

    objective: Objective
    seed_id: str
    accepted: Accepted | None
    trajectory: Trajectory
    tool_calls: int = 0
    notes: list[str] = field(default_factory=list)


class ScoutQuizzer:
    """Runs scout episodes on one graph with one chat policy (see the module docstring)."""

    def __init__(self, graph: KnowledgeGraph, policy: ChatPolicy, config: ScoutConfig | None = None, *,
                 engine: Any = None, index: TextIndex | None = None,
                 runner_factory: Callable[[], Any] | None = None) -> None:
        self.graph = graph
        self.policy = policy
        self.config = config or ScoutConfig()
        self._owned: list[Any] = []  # engines this quizzer opened, closed by close()
        if engine is None:
            from ....graphdb import open_cypher

            engine = open_cypher(graph)
            self._owned.append(engine)
        self.engine = engine
        if index is None:
            from ....index import open_index

            index = open_index(graph, kind="bm25", progress=False)
        self.index = index
        if runner_factory is None and self.config.runner == "sandbox":
            runner_factory = lambda: SandboxCypher(engine)  # noqa: E731 - one sandbox per episode
        elif runner_factory is None:  # the model's queries in a worker process, never in this one
            from ....graphdb.isolated import isolate

            direct = isolate(engine)
            if direct is not engine:
                self._owned.append(direct)
            runner_factory = lambda: DirectCypher(direct)  # noqa: E731
        self.runner_factory = runner_factory
        self.system_prompt = SYSTEM_PROMPT.format(budget=self.config.budget, schema=engine.schema.describe(),
                                                  rules=ANSWER_RULES.format(max_set=self.config.max_set))

    def close(self) -> None:
        """Close the engines this quizzer opened (a given engine stays the caller's)."""
        owned, self._owned = self._owned, []
        for engine in owned:
            engine.close()

    def user_prompt(self, objective: Objective, seed: int, truth: bool) -> str:
        g = self.graph
        if objective.pattern == HYBRID:
            first, second = objective.parts
            pattern_text = (f"two patterns in sequence, the second starting from the result of the first, both "
                            f"needed: first {first} ({PATTERN_TEXT[first]}); then {second} ({PATTERN_TEXT[second]})")
        else:
            pattern_text = PATTERN_TEXT[objective.pattern]
        aim = f" (aim for the answer '{'yes' if truth else 'no'}')" if objective.answer_type == "boolean" else ""
        return USER_PROMPT.format(answer_type=objective.answer_type, aim=aim, pattern=objective.pattern,
                                  pattern_text=pattern_text, difficulty=objective.difficulty,
                                  difficulty_text=DIFFICULTY_TEXT[objective.difficulty],
                                  seed_name=g.name(seed), seed_id=g.node_id(seed), seed_type=g.node_type(seed))

    async def episode(self, objective: Objective, seed: int, truth: bool = True,
                      agent_index: int = 0) -> ScoutEpisode:
        """One exploration from node ``seed`` under ``objective``; never raises for model misbehaviour."""
        g = self.graph
        runner = self.runner_factory()
        toolbox = ScoutToolbox(g, runner, self.index, g.node_id(seed), objective.answer_type,
                               budget=self.config.budget, max_set=self.config.max_set, labels=self.engine.schema)
        user = self.user_prompt(objective, seed, truth)
        messages: list[Message] = [SystemMessage(self.system_prompt),
                                   UserMessage(user, context={"objective": vars(objective),
                                                              "seed_id": g.node_id(seed)})]
        trajectory = Trajectory(question=user, agent_index=agent_index, policy=getattr(self.policy, "name", ""),
                                messages=messages, tools=toolbox.openai_tools())
        try:
            await run_tool_loop(trajectory, self.policy, toolbox, max_steps=self.config.budget + 2,
                                on_no_tool_call=lambda message: NO_CALL)
        finally:
            runner.close()
        trajectory.telemetry = toolbox.telemetry.to_dict()
        return ScoutEpisode(objective, g.node_id(seed), toolbox.accepted, trajectory, toolbox.calls)

    def record(self, episode: ScoutEpisode) -> dict[str, Any]:
        """The quiz record of an accepted episode."""
        accepted, objective, g = episode.accepted, episode.objective, self.graph
        assert accepted is not None
        seed = g.index_of(episode.seed_id)
        record: dict[str, Any] = {
            "query": accepted.question, "answer": accepted.answer, "answer_type": accepted.answer_type,
            "answer_ids": accepted.answer_ids, "clue_ids": accepted.clue_ids, "pattern": objective.pattern,
            "pattern_parts": list(objective.parts), "difficulty": objective.difficulty, "hops": objective.hops,
            "template": f"{accepted.answer_type}/{objective.difficulty}", "quizzer": "scout",
            "seed_id": episode.seed_id, "seed_type": g.node_type(seed), "anchor_ids": [episode.seed_id],
            "verification_cypher": accepted.verification_cypher,
            "verification_params": accepted.verification_params, "scout_tool_calls": episode.tool_calls,
            "scout_model": episode.trajectory.policy,
        }
        if accepted.witness_id is not None:
            record["witness_id"] = accepted.witness_id
        return record


async def scout_quiz(graph: KnowledgeGraph, policy: ChatPolicy, config: ScoutConfig | None = None, *,
                     engine: Any = None, index: TextIndex | None = None,
                     runner_factory: Callable[[], Any] | None = None,
                     progress: Callable[[int, int], None] | None = None) -> GraphScoutQuizResult:
    """Up to ``config.n`` scout questions over the graph's splits (test first, for the leakage guard)."""
    started = time.perf_counter()
    config = config or ScoutConfig()
    quizzer = ScoutQuizzer(graph, policy, config, engine=engine, index=index, runner_factory=runner_factory)
    try:
        return await _quiz(quizzer, graph, config, progress, started)
    finally:
        quizzer.close()


async def _quiz(quizzer: ScoutQuizzer, graph: KnowledgeGraph, config: ScoutConfig,
                progress: Callable[[int, int], None] | None, started: float) -> GraphScoutQuizResult:
    pool = SeedPool(graph, seed_mask(graph, nameable_mask(graph), config.exclude), config.seed, config.fractions)
    rng = np.random.default_rng(config.seed)
    assembler = QuizAssembler(config.n, config.fractions, config.guard, config.exclude)
    episodes_left = config.max_episodes if config.max_episodes is not None else 3 * config.n
    skip = frozenset((a, p, d) for a in ANSWER_TYPES if a not in config.answer_types
                     for p in (*PATTERN_TEXT, HYBRID) for d in DIFFICULTY_TEXT)
    notes: list[str] = []
    episodes = 0
    for split in QuizAssembler.FILL_ORDER:
        while assembler.missing(split) > 0 and episodes_left > 0:
            seed = pool.draw(split, rng)
            if seed is None:
                break
            objective = sample_objective(rng, skip)
            truth = bool(rng.random() < 0.5)
            episode = await quizzer.episode(objective, seed, truth, agent_index=episodes)
            episodes += 1
            episodes_left -= 1
            if config.trajectory_path is not None:
                append_jsonl(config.trajectory_path, [{"objective": vars(objective), "seed_id": episode.seed_id,
                                                       "accepted": episode.accepted is not None,
                                                       "trajectory": episode.trajectory.to_dict()}])
            if episode.accepted is None:
                continue
            record = quizzer.record(episode)
            key = " ".join(record["query"].lower().split())
            if assembler.offer(record, key, split) and progress is not None:
                progress(len(assembler.accepted), config.n)
    name = graph.info.label()
    questions = assembler.finish(rng, f"{name}-scoutquiz-s{config.seed}", notes)
    notes.append(f"{episodes} scout episodes, {len(questions)} questions accepted")
    return GraphScoutQuizResult(questions, assembler.guard, notes, episodes, time.perf_counter() - started)
