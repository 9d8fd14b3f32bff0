"""GraphScout's tools, one module each: ``node_id_retriever`` and ``code_interpreter`` (GraphScout §3.2,
Appendix B.4.1).

Each module holds its name, argument model and :class:`~ark.runtime.tools.ToolSpec` and its handler;
:class:`Toolbox` binds them to a graph, a node index and one trajectory's sandbox.
"""

from . import code_interpreter, node_id_retriever
from .toolbox import NodeResolver, Telemetry, Toolbox

CODE_INTERPRETER = code_interpreter.NAME
NODE_ID_RETRIEVER = node_id_retriever.NAME
TOOL_SPECS = {module.NAME: module.SPEC for module in (node_id_retriever, code_interpreter)}
TOOL_NAMES = tuple(TOOL_SPECS)

__all__ = ["CODE_INTERPRETER", "NODE_ID_RETRIEVER", "TOOL_NAMES", "TOOL_SPECS", "NodeResolver", "Telemetry", "Toolbox"]
