"""A sandboxed, stateful Python interpreter for model-written code, with ``cypher()`` over a read-only graph
database.

    from ark.graphdb import open_cypher
    from ark.sandbox import CodeSandbox

    with CodeSandbox(open_cypher(graph)) as sandbox:          # one per trajectory
        sandbox.run("rows = cypher('MATCH (g:gene) RETURN count(g) AS n')")
        print(sandbox.run("print(rows[0]['n'])").observation())

Isolation, limits and the choice of where queries run are described in :mod:`ark.sandbox.launcher` and
:mod:`ark.sandbox.session`.
"""

from .launcher import ISOLATION_MODES, SandboxUnavailable, bwrap_problem, isolation_mode
from .limits import RunResult, SandboxLimits
from .session import CodeSandbox

__all__ = [
    "ISOLATION_MODES",
    "CodeSandbox",
    "RunResult",
    "SandboxLimits",
    "SandboxUnavailable",
    "bwrap_problem",
    "isolation_mode",
]
