"""What a generated question asks, as data: the answer type, one path per named anchor, an optional phrase.

A question's answers are every node of ``answer_type`` (other than its anchors) that, for every constraint, is
reached from the constraint's anchor by walking its path (each step: a relation, a direction seen from the node
being left, and the type of the node reached) and, when ``text_phrase`` is set, whose text contains that phrase
as whole words (see :mod:`ark.quiz.textmatch`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

StepDirection = Literal["out", "in"]


@dataclass(frozen=True)
class Step:
    """One hop of a path: follow ``relation`` ("out": along the edge, "in": against it) to a ``node_type`` node."""

    relation: str
    direction: StepDirection
    node_type: str

    def to_dict(self) -> dict[str, str]:
        return {"relation": self.relation, "direction": self.direction, "node_type": self.node_type}


@dataclass(frozen=True)
class Constraint:
    """The answer is reachable from the anchor node ``anchor_id`` by walking ``path``."""

    anchor_id: str
    path: tuple[Step, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"anchor_id": self.anchor_id, "path": [step.to_dict() for step in self.path]}


@dataclass(frozen=True)
class QuestionSpec:
    """The constraints of one question; its answer set is fully determined by these and the graph."""

    answer_type: str
    constraints: tuple[Constraint, ...]
    text_phrase: str | None = None

    @property
    def anchor_ids(self) -> list[str]:
        return [c.anchor_id for c in self.constraints]

    def to_params(self) -> dict[str, Any]:
        """The JSON form stored in each question's ``params``."""
        return {
            "answer_type": self.answer_type,
            "constraints": [c.to_dict() for c in self.constraints],
            "text_phrase": self.text_phrase,
        }

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> QuestionSpec:
        """Inverse of :meth:`to_params`."""
        constraints = tuple(
            Constraint(
                str(c["anchor_id"]),
                tuple(Step(s["relation"], s["direction"], s["node_type"]) for s in c["path"]),
            )
            for c in params["constraints"]
        )
        return cls(str(params["answer_type"]), constraints, params.get("text_phrase"))
