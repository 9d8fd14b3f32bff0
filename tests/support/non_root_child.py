"""Run by ``tests/sandbox/test_non_root.py`` as an ordinary user: one GraphScout question whose model is the scripted
server at ``argv[1]``; prints the answer and whether it ran unprivileged."""

from __future__ import annotations

import os
import sys

from ark.llm import OpenAIChatClient, resolve_settings
from ark.methods.graphscout.solver import GraphScout
from tests.support.graphs import build_clinical_graph


def main() -> None:
    settings = resolve_settings(base_url=sys.argv[1], model="test-model", api_key=os.environ["OPENAI_API_KEY"],
                                environ={}, use_cache=False)
    solver = GraphScout(build_clinical_graph(), OpenAIChatClient(settings))
    try:
        solution = solver.solve("How many genes are associated with Loeys-Dietz syndrome?")
    finally:
        solver.close()
        solver.engine.close()
    if solution.trajectory.error:
        raise SystemExit(f"the question failed: {solution.trajectory.error}")
    print("answer", solution.answer.text if solution.answer else None)
    print("uid ok" if os.getuid() != 0 else "uid root")


if __name__ == "__main__":
    main()
