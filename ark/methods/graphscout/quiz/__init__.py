"""GraphScout's graph quizzer (GraphScout §3.3): questions with exact answers, evidence clues and objective fields.

- :mod:`.program`: what a question asks, as data (anchors, walks, meets; list/the_one/count/exists/contains);
- :mod:`.evaluate`: exact answers and supporting nodes by in-memory traversal;
- :mod:`.cypher`: the same answers recomputed in Cypher on the part-1 database (``--verify``);
- :mod:`.objective`, :mod:`.builder`, :mod:`.generate`: the deterministic objective-sampling quizzer;
- :mod:`.random_walk`: the random-walk ablation quizzer (a deterministic template over a random walk);
- :mod:`.scout`: the LLM scout quizzer (a chat model explores with tools and reports a checked question);
- :mod:`.records`: reading quiz files back (:func:`read_graphscout_quiz`), :mod:`.table`: the distribution table.
"""

from .generate import GraphScoutQuizConfig, GraphScoutQuizResult, generate_graphscout_quiz
from .program import Anchor, Meet, Program, Walk
from .records import GraphScoutQuestion, read_graphscout_quiz

__all__ = [
    "Anchor",
    "GraphScoutQuestion",
    "GraphScoutQuizConfig",
    "GraphScoutQuizResult",
    "Meet",
    "Program",
    "Walk",
    "generate_graphscout_quiz",
    "read_graphscout_quiz",
]
