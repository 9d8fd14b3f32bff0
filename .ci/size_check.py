"""The size check of .ci/run: no module in `ark/` over 500 lines and no function over 80 lines, except those listed in
ALLOWED at their size when this check was added; each may only shrink (split it, then remove its entry)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
# Over the limit when the check was added (November 2026); an entry's number is the most it may have.
ALLOWED: dict[str, int] = {}


def oversized() -> dict[str, int]:
    """Every module over MAX_MODULE_LINES and function over MAX_FUNCTION_LINES, with its length."""
    found: dict[str, int] = {}
    for path in sorted((ROOT / "ark").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        source = path.read_text(encoding="utf-8")
        if source.count("\n") > MAX_MODULE_LINES:
            found[name] = source.count("\n")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found[f"{name}:{node.name}"] = max(length, found.get(f"{name}:{node.name}", 0))
    return found


def main() -> int:
    found = oversized()
    bad = {key: n for key, n in found.items() if n > ALLOWED.get(key, 0)}
    for key, n in sorted(bad.items()):
        limit = MAX_MODULE_LINES if ":" not in key else MAX_FUNCTION_LINES
        print(f"too long: {key}: {n} lines (limit {limit}" + (f", allowed {ALLOWED[key]} until split)" if key in ALLOWED
                                                              else ")"))
    gone = sorted(set(ALLOWED) - set(found))
    print(f"sizes: {len(found)} over the limits, all listed and not grown" if not bad else
          f"sizes: {len(bad)} over the limits")
    if gone:
        print(f"  no longer over the limit, remove from ALLOWED: {', '.join(gone)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
