"""The offline policy: a scripted ARK agent that drives ARK's tools deterministically without a model."""

from .policy import OfflinePolicy

__all__ = ["OfflinePolicy"]
