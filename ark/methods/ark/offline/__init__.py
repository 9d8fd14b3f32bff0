"""The offline policy: a scripted ARK agent that drives ARK's tools deterministically without a model.

A replay shell (:mod:`.policy`) over small phases, anchor → expand → page → second hop → verify → answer → finish,
each a pure ``plan`` and an ``absorb`` over typed ``Evidence``; the answer is ranked by graph evidence, with reasons
and a confidence.
"""

from .policy import OfflinePolicy

__all__ = ["OfflinePolicy"]
