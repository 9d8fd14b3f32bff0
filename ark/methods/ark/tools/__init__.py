"""ARK's tools, one module each: ``search_in_graph``, ``search_in_neighborhood``, ``add_to_answer``, ``finish``.

Each module holds its name, argument model and :class:`~ark.runtime.tools.ToolSpec` (the one source of its
schemas) and its handler; :class:`Toolbox` binds them to a graph and an index for one trajectory. Observation
formats are documented in :mod:`.observations`; structured results in each handler's docstring.
"""

from ..options import ABLATIONS, ToolConfig
from . import add_to_answer, finish, search_in_graph, search_in_neighborhood
from .toolbox import Telemetry, Toolbox

SEARCH_IN_GRAPH = search_in_graph.NAME
SEARCH_IN_NEIGHBORHOOD = search_in_neighborhood.NAME
ADD_TO_ANSWER = add_to_answer.NAME
FINISH = finish.NAME
TOOL_SPECS = {module.NAME: module.SPEC for module in (search_in_graph, search_in_neighborhood, add_to_answer, finish)}
TOOL_NAMES = tuple(TOOL_SPECS)

__all__ = [
    "ABLATIONS",
    "ADD_TO_ANSWER",
    "FINISH",
    "SEARCH_IN_GRAPH",
    "SEARCH_IN_NEIGHBORHOOD",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "Telemetry",
    "ToolConfig",
    "Toolbox",
]
