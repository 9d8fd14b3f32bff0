"""The offline policy's answers as the graph's evidence ranks them (a mixin of :class:`OfflinePolicy`): evidence
keys per candidate, tie groups, the keys a replayed conversation states for the vote fusion, and the parts of the
question no anchor used. The ordering and grouping themselves are the pure functions of ``evidence_rank``."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from .evidence_rank import RankedAnswer, evidence_key, order_by_evidence, tie_groups
from .wording import unread_mentions

if TYPE_CHECKING:
    from .policy import Evidence


class EvidenceAnswers:
    """Methods of :class:`~ark.methods.ark.offline.policy.OfflinePolicy` that rank its answers by evidence."""

    graph: Any
    max_answers: int
    main_relations: dict[tuple[str, str], str]
    _tokens: Callable[[str], frozenset[str]]
    _ignorable: frozenset[str]

    if TYPE_CHECKING:  # provided by OfflinePolicy, the class this mixes into
        def _replay(self, messages: list[dict], agent_index: int, tool_names: set[str]
                    ) -> tuple[Evidence, int]: ...
        def _ranking(self, ev: Evidence) -> list[int]: ...
        def _positive_conditions(self, ev: Evidence) -> list[int]: ...
        def _conjunctive(self, ev: Evidence) -> bool: ...
        def _satisfied(self, ev: Evidence, index: int) -> set[int]: ...

    def evidence_keys(self, messages: list[dict], tools: list[dict], *, agent_index: int = 0
                      ) -> dict[int, tuple[int, ...]]:
        """The evidence key of each node this conversation's answer holds (see evidence_rank), from a replay."""
        evidence, _ = self._replay(messages, agent_index, {t["function"]["name"] for t in tools})
        return {a.index: a.key for a in self._answers(evidence) if a.key}

    def graph_evidence_keys(self, messages: list[dict], tools: list[dict], nodes: Iterable[int]
                            ) -> dict[int, tuple[int, ...]]:
        """The evidence key of any ``nodes`` (e.g. a model's answers), read from the graph itself: the question's
        anchors and conditions come from replaying this (offline) conversation, each node's support from its own
        edges to those anchors and, when the question goes through nodes of another type (a second hop), the
        nodes of that type it shares with them. Empty when nothing was anchored."""
        ev, _ = self._replay(messages, 0, {t["function"]["name"] for t in tools})
        anchors = {a[0] for a in ev.anchors if not a[3]}
        if ev.analysis.unsupported or not anchors and not ev.named:
            return {}
        g = self.graph
        between = set(ev.intermediate_types.values())
        middle = {j for a in anchors for j, _ in _edges(g, a) if g.node_type(j) in between} - anchors
        nodes = [i for i in dict.fromkeys(nodes) if g.is_valid_index(i)]
        for i in nodes:
            ev.support[i] = {}
            ev.candidate_hits[i] = set()
            for j, relation in _edges(g, i):
                if j in anchors:
                    ev.support[i].setdefault(j, set()).add(relation)
                    if j in ev.condition_of:
                        ev.satisfied[i].add(ev.condition_of[j])
                elif j in middle:
                    ev.candidate_hits[i].add(j)
        ev.intermediates = dict.fromkeys(middle, 1.0)
        return self._evidence_keys(ev, nodes)

    def _answers(self, ev: Evidence) -> list[RankedAnswer]:
        """The answers ordered by the graph's evidence (weaker signals within equal evidence), in tie groups."""
        ranked = self._ranking(ev)
        if ev.named:
            # The question asks what a name stands for: the nodes bearing it answer, before anything reached.
            ranked = ev.named + [i for i in ranked if i not in ev.named]
        if ev.analysis.unsupported or not ev.candidate_score and not ev.named:
            return tie_groups(ranked[: self.max_answers], {})  # nothing weighed: no evidence to compare
        keys = self._evidence_keys(ev, ranked)
        ranked = order_by_evidence(ranked, keys.__getitem__)[: self.max_answers]
        return tie_groups(ranked, keys)

    def _evidence_keys(self, ev: Evidence, ranked: list[int]) -> dict[int, tuple[int, ...]]:
        """Each candidate's evidence key (see evidence_rank.evidence_key)."""
        positive = set(self._positive_conditions(ev))
        conjunctive = self._conjunctive(ev)
        says = self._says_quoted(ev, ranked)
        g = self.graph
        # Nodes between the anchors and the answers (a second hop); a way back to an anchor is no evidence for it.
        middle = set(ev.intermediates)
        anchors = {a[0] for a in ev.anchors}
        principal = {a[0]: {t: self.main_relations.get((a[2], t)) for t in g.node_types} for a in ev.anchors}
        return {i: evidence_key(named=i in ev.named, says_quoted=says.get(i, False), support=ev.support.get(i, {}),
                                conditions_met=len(self._satisfied(ev, i) & positive) if conjunctive else 0,
                                principal={a: principal.get(a, {}).get(g.node_type(i)) for a in ev.support.get(i, {})},
                                paths=0 if i in anchors else len(ev.candidate_hits.get(i, set()) & middle))
                for i in ranked}

    def _says_quoted(self, ev: Evidence, ranked: list[int]) -> dict[int, bool]:
        """Which nodes' text says every quoted phrase of the question (a textual condition)."""
        if not ev.analysis.quoted:
            return {}
        phrases = [re.compile(rf"\b{re.escape(q.lower())}", re.IGNORECASE) for q in ev.analysis.quoted]
        text = self.graph.text
        return {i: all(p.search(text(i)) for p in phrases) for i in ranked if self.graph.is_valid_index(i)}

    def _note_unread(self, ev: Evidence, read: set[str]) -> None:
        """Parts of the question that anchored nothing although they state something: reported as not understood
        rather than dropped. A question asking what a name stands for is framed around that name alone."""
        a = ev.analysis
        if a.named_phrase or a.unsupported:
            return  # a name asked about frames the rest; an unsupported request is reported as such
        names = [name for _, name, _, _ in ev.anchors] + list(ev.candidate_names.values()) + list(a.quoted)
        # A word the anchors' own text says (a finding given by its definition: "... such as pronating") is used.
        names += [self.graph.text(i) for i, _, _, _ in ev.anchors if self.graph.is_valid_index(i)]
        used = {w for name in names for w in self._tokens(name)}
        pending = [(m.text, m.tokens) for m, _ in ev.pending if m.text not in read]
        ev.unread = unread_mentions(pending, used, self._ignorable)


def _edges(graph: Any, node: int) -> Iterator[tuple[int, str]]:
    """``node``'s neighbours, each with the relation of the edge."""
    found = graph.neighbors(node)
    names = graph.relation_types
    for j, code in zip(found.nodes.tolist(), found.relations.tolist(), strict=True):
        yield j, names[code]
