"""The type check of .ci/run: mypy over `ark`, clean on the folders listed in STRICT and elsewhere no more errors per
file and error code than the committed baseline (.ci/mypy-baseline.json), which may only shrink.

    python .ci/mypy_check.py            # check (exit 1 on a new error, naming it)
    python .ci/mypy_check.py --update   # rewrite the baseline after fixing errors (never to add new ones)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = ROOT / ".ci" / "mypy-baseline.json"
STRICT = ("ark/graph/", "ark/index/", "ark/runtime/", "ark/llm/", "ark/storage/", "ark/methods/base.py",
          "ark/methods/registry.py", "ark/methods/seeder/", "ark/methods/graphscout/", "ark/methods/ark/", "ark/cli/",
          "ark/eval/", "ark/serve/", "ark/sandbox/", "ark/quiz/", "ark/loaders/", "ark/training/", "ark/metrics/")
ERROR = re.compile(r"^(?P<path>[^:]+):\d+: error: (?P<message>.*?)(?:  \[(?P<code>[\w-]+)\])?$")


def mypy_errors() -> list[tuple[str, str, str]]:
    """(path, error code, line) of every error mypy reports over `ark` (settings in pyproject.toml)."""
    done = subprocess.run([sys.executable, "-m", "mypy", "ark", "--no-error-summary", "--no-pretty"], cwd=ROOT,
                          capture_output=True, text=True)
    if done.returncode not in (0, 1) or "error: " in done.stderr:
        sys.exit(f"mypy could not run (exit {done.returncode}): {done.stderr.strip() or done.stdout[-2000:]}")
    found = []
    for line in done.stdout.splitlines():
        match = ERROR.match(line)
        if match:
            found.append((match["path"], match["code"] or "misc", line))
    return found


def main() -> int:
    errors = mypy_errors()
    counts = Counter(f"{path} [{code}]" for path, code, _ in errors)
    if "--update" in sys.argv[1:]:
        BASELINE.write_text(json.dumps(dict(sorted(counts.items())), indent=1) + "\n")
        print(f"mypy baseline written: {sum(counts.values())} errors in {len({p for p, _, _ in errors})} files")
        return 0
    baseline = json.loads(BASELINE.read_text()) if BASELINE.is_file() else {}
    strict = [line for path, _, line in errors if path.startswith(STRICT)]
    grown = {key: (n, baseline.get(key, 0)) for key, n in counts.items() if n > baseline.get(key, 0)}
    for line in strict:
        print(f"strict: {line}")
    for key, (n, allowed) in sorted(grown.items()):
        print(f"new: {key}: {n} errors (baseline {allowed})")
        for path, code, line in errors:
            if f"{path} [{code}]" == key:
                print(f"    {line}")
    shrunk = sum(baseline.values()) - sum(min(n, baseline.get(k, 0)) for k, n in counts.items())
    print(f"mypy: {sum(counts.values())} errors (baseline {sum(baseline.values())}; {shrunk} fixed since) — clean on "
          f"{', '.join(STRICT)}" + ("" if not strict else f" except {len(strict)}"))
    if shrunk:
        print("  the baseline can shrink: python .ci/mypy_check.py --update")
    return 1 if strict or grown else 0


if __name__ == "__main__":
    sys.exit(main())
