"""The tools ``ark mcp`` and ``ark serve`` offer beside ARK's exploration tools, one module each, as ARK's are:
``get_node``, ``graph_schema``, ``search_in_surroundings``, ``find_paths`` and ``retrieve`` (offered with a question
service; its handler is asynchronous); :mod:`.answer` holds the stateless ``add_to_answer`` and ``finish`` the MCP
prompt ``ark`` names.

Each module holds its name, argument model, result model (the MCP ``outputSchema``), spec and handler
``run(box, args)``; :class:`ark.serve.graph_tools.GraphTools` binds them to the served graph.
"""

from . import answer, find_paths, get_node, graph_schema, retrieve, search_in_surroundings

TOOL_NAMES = tuple(module.NAME for module in (get_node, graph_schema, search_in_surroundings, find_paths, retrieve))

__all__ = ["TOOL_NAMES", "answer", "find_paths", "get_node", "graph_schema", "retrieve",
           "search_in_surroundings"]
