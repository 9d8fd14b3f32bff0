"""STaRK-style question generation with exact ground truth (``ark quiz``)."""

from .generate import DEFAULT_MIX, QuizConfig, QuizResult, generate_quiz, parse_mix
from .phrasebook import PhraseBook, builtin_phrasebook, load_phrasebook
from .spec import Constraint, QuestionSpec, Step
from .templates import TEMPLATES
from .traverse import resolve

__all__ = [
    "DEFAULT_MIX",
    "TEMPLATES",
    "Constraint",
    "PhraseBook",
    "QuestionSpec",
    "QuizConfig",
    "QuizResult",
    "Step",
    "builtin_phrasebook",
    "generate_quiz",
    "load_phrasebook",
    "parse_mix",
    "resolve",
]
