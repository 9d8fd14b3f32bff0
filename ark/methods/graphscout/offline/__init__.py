"""The scripted (no-LLM) GraphScout solver."""

from .policy import ScriptedSolver

__all__ = ["ScriptedSolver"]
