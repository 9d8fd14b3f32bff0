"""Where users meet ARK outside the command line: the graph tools for outside agents (``graph_tools``), the
question service shared by both servers (``questions``), the MCP server (``mcp_server``, extra ``mcp``), the local
web app (``webapp`` + ``static/`` + ``runs``, extra ``serve``) and the binding rule they share (``binding``).

Nothing here is imported by ``import ark`` or by the other commands; each server imports its extra when started.
"""
