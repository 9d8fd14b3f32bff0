"""Reading a question against a graph's schema: wanted node types, entity mentions, negations, quoted text
constraints, relation hints and taxonomy direction. Shared by the offline ARK policy, GraphScout's scripted solver
and the quizzer; generic English cues only, names come from the graph."""

from .analysis import (
    QUESTION_WORDS,
    TAXONOMY_RELATIONS,
    Mention,
    QuestionAnalysis,
    QuestionReader,
    identifiers,
    name_tokens,
)
from .schema_words import excludes_outside

__all__ = ["QUESTION_WORDS", "TAXONOMY_RELATIONS", "Mention", "QuestionAnalysis", "QuestionReader", "excludes_outside",
           "identifiers", "name_tokens"]
