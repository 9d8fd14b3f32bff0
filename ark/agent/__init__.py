"""The ARK agent: the exploration loop, parallel agents, fusion, trajectory records and the ``ARK`` API."""

from .api import ARK
from .config import AgentConfig
from .fusion import FUSIONS, FusedNode, fuse
from .loop import NO_TOOL_CALL_MESSAGE, run_agent
from .prompt import first_user_message, render_system_prompt
from .trajectory import RankedNode, Retrieval, StepRecord, ToolCallRecord, Trajectory

__all__ = [
    "ARK",
    "FUSIONS",
    "NO_TOOL_CALL_MESSAGE",
    "AgentConfig",
    "FusedNode",
    "RankedNode",
    "Retrieval",
    "StepRecord",
    "ToolCallRecord",
    "Trajectory",
    "first_user_message",
    "fuse",
    "render_system_prompt",
    "run_agent",
]
