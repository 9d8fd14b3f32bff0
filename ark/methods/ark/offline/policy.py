"""The offline policy: a deterministic stand-in for the model that drives ARK's tools like an agent would.

It follows the seed paper's strategies with real tool calls and reads only what its tool calls return (the tools'
structured results, never their text) plus the graph's schema, names and node text, which every agent may see
through the tools:

1. *anchor* — global search for each entity mention in the question; a hit becomes an anchor only when convincing
   (its name is contained in the mention, or a short mention is contained in the node's text);
2. *expand* — explore each anchor's neighborhood filtered to the wanted node type (from the question and the
   schema), with the question as ranking subquery; when the schema has no direct link from the anchor's type to
   the wanted type, hop through an intermediate type first (*second hop*);
3. *verify* — for the best candidates reached from several anchors, look at their own neighborhood for the other
   anchors (the agent checking its answer);
4. *answer* — add candidates ranked by anchor evidence, each anchor weighted by how specific it is
   (``log(1 + |type| / |neighborhood|)``), then *finish*. With no convincing anchor it falls back to one broad
   search of the whole question and adds about half of the results (the paper's first strategy).

Each agent (``agent_index``) makes different, seeded choices — which anchors to keep, how many candidates to verify —
so that voting across agents helps. The policy is a pure function of the conversation: replaying the same messages
gives the same next call. It is a baseline and a teacher for tests, not a language model.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence, Set

from ....graph import KnowledgeGraph
from ....llm.messages import AssistantMessage, Message, ToolMessage
from ....llm.policy import PolicyReply, Usage
from .context import PolicyContext
from .evidence import Evidence
from .evidence_answers import answers
from .evidence_rank import EvidenceKey
from .messages import assistant_message, question_of
from .phases import PHASES, Phase

# The tool loop runs at most a policy's ``max_tool_calls_per_turn`` calls of one reply: a guard against a model's
# runaway reply (32 by default). This policy is no model: each step's calls are bounded by its own constants
# (MAX_MENTIONS, verify, PAGE_LIMIT, FAMILY_SIZE) and its replay reads every one of them as evidence (the verify
# step checks 40 to 60 candidates per anchor type), so the loop runs them all: the most the [llm] setting allows.
PLANNED_CALLS_PER_STEP = 10_000


class OfflinePolicy:
    """A :class:`~ark.llm.ChatPolicy` that needs no model: ``OfflinePolicy(graph)``.

    It reads the graph's schema and node text; all searching goes through the tool calls it emits. Each step
    replays the conversation: the phases absorb the results of the calls they made, in order, then the next
    phase with something to do plans the reply (see ``phases``).
    """

    name = "offline"
    max_tool_calls_per_turn = PLANNED_CALLS_PER_STEP  # read by the tool loop (see PLANNED_CALLS_PER_STEP)

    def __init__(self, graph: KnowledgeGraph, verify: int = 40, max_answers: int = 20) -> None:
        self.context = PolicyContext(graph, verify=verify, max_answers=max_answers)
        self.phases: tuple[Phase, ...] = tuple(phase(self.context) for phase in PHASES)

    @property
    def graph(self) -> KnowledgeGraph:
        return self.context.graph

    async def aclose(self) -> None:
        return None

    async def next_message(self, messages: Sequence[Message], tools: list[dict], *, agent_index: int = 0,
                           tool_choice: str = "required") -> PolicyReply:
        tool_names = {t["function"]["name"] for t in tools}
        evidence, position = self.replay(messages, agent_index, tool_names)
        while True:
            calls, note = self._phase(position).plan(evidence, tool_names)
            position += 1
            if calls:
                return PolicyReply(message=assistant_message(note, calls, len(messages)), usage=Usage())

    def replay(self, messages: Sequence[Message], agent_index: int, tool_names: Set[str]) -> tuple[Evidence, int]:
        """The evidence the conversation's tool results give, and the position of the phase that comes next.
        Each recorded step is the first phase from the current one that plans calls (planning is pure: it only
        tells which phase a step was), and that phase absorbs the step's results."""
        question = question_of(messages)
        seed = int(hashlib.sha256(f"{question}|{agent_index}".encode()).hexdigest()[:12], 16)
        evidence = Evidence(self.context.analysis(question), seed, agent_index)
        results_by_call = {m.tool_call_id: m.result for m in messages if isinstance(m, ToolMessage)}
        position = 0
        for message in messages:
            if not isinstance(message, AssistantMessage) or not message.tool_calls:
                continue
            while position < len(self.phases) - 1 and not self._phase(position).plan(evidence, tool_names).calls:
                position += 1
            results = [(call, results_by_call.get(call.id) or {}) for call in message.tool_calls]
            self._phase(position).absorb(evidence, results)
            position += 1
        return evidence, position

    def _phase(self, position: int) -> Phase:
        """The phase at ``position``; past the last, the last (finish)."""
        return self.phases[min(position, len(self.phases) - 1)]

    def evidence_keys(self, messages: Sequence[Message], tools: list[dict], *, agent_index: int = 0
                      ) -> dict[int, EvidenceKey]:
        """The evidence key of each node this conversation's answer holds (see evidence_rank), from a replay."""
        evidence, _ = self.replay(messages, agent_index, {t["function"]["name"] for t in tools})
        return {a.index: a.key for a in answers(self.context, evidence) if a.key}
