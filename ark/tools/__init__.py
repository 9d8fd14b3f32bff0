"""The agent's tools: ``search_in_graph``, ``search_in_neighborhood``, ``add_to_answer`` and ``finish``.

One pydantic argument model per tool (:mod:`ark.tools.specs`) is the single schema source; observation formats
are documented in :mod:`ark.tools.observations`.
"""

from .config import ABLATIONS, ToolConfig
from .observations import ParsedNode, parse_node_lines
from .specs import (
    ADD_TO_ANSWER,
    FINISH,
    SEARCH_IN_GRAPH,
    SEARCH_IN_NEIGHBORHOOD,
    TOOL_SPECS,
    ToolSpec,
    to_mcp_tools,
    to_openai_tools,
)
from .toolbox import Telemetry, Toolbox, ToolOutcome

__all__ = [
    "ABLATIONS",
    "ADD_TO_ANSWER",
    "FINISH",
    "SEARCH_IN_GRAPH",
    "SEARCH_IN_NEIGHBORHOOD",
    "TOOL_SPECS",
    "ParsedNode",
    "Telemetry",
    "ToolConfig",
    "ToolOutcome",
    "ToolSpec",
    "Toolbox",
    "parse_node_lines",
    "to_mcp_tools",
    "to_openai_tools",
]
