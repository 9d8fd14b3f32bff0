"""The offline policy: drives ARK's tools deterministically when no language model is configured."""

from .policy import OfflinePolicy
from .question import QuestionAnalysis, QuestionReader

__all__ = ["OfflinePolicy", "QuestionAnalysis", "QuestionReader"]
