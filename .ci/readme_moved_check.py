"""Every non-blank line of an old README appears in README.md or a page under docs/ (link targets ignored), and
every line and table cell of the old docs/ARCHITECTURE.md in docs/ARCHITECTURE.md or docs/architecture/.

The README became a front page on 2 December 2026 (issue 47) and its long sections moved to docs/ as they were:
``python .ci/readme_moved_check.py [REV]`` (default 1dfaec5, the last README before the move) checks that nothing was
lost. Exit 1 listing the missing lines."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def norm(line):
    return re.sub(r"\]\([^)]*\)", "]()", line).strip()


rev = sys.argv[1] if len(sys.argv) > 1 else "1dfaec5"


def old_file(path):
    return subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.splitlines()


old = old_file("README.md")
have = set()
for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
    have.update(norm(x) for x in path.read_text().splitlines())
# Lines rewritten on purpose (the old text pointed "below" at a section that moved):
REWRITTEN = {"Cypher on the graph in a sandbox, plus a node id retriever (`--method graphscout`, below)."}
missing = [(n, x) for n, x in enumerate(old, 1) if x.strip() and norm(x) not in have and x.strip() not in REWRITTEN]
for n, x in missing:
    print(f"{n}: {x[:120]}")
print(f"{len(missing)} of {sum(1 for x in old if x.strip())} non-blank lines missing")

# The architecture map: its long table cells became paragraphs of docs/architecture/folders.md ("\\|" unescaped).
pages = [ROOT / "docs" / "ARCHITECTURE.md", *sorted((ROOT / "docs" / "architecture").glob("*.md"))]
text = "\n".join(norm(x) for page in pages for x in page.read_text().splitlines())
ARCH_REWRITTEN = {"`runtime`, `metrics` · `graphdb`, `loaders`, `llm` · `graph` · `storage`, `text`, `arrays`, "
                  "`config`, `plots`."}  # the layer list, `errors` added below its last layer
lost = []
for n, line in enumerate(old_file("docs/ARCHITECTURE.md"), 1):
    if line in ARCH_REWRITTEN:
        continue
    pieces = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] if line.startswith("| `ark") else [line]
    lost += [(n, p) for p in pieces if p.strip() and norm(p).replace("\\|", "|") not in text
             and norm(p) not in text]
for n, x in lost:
    print(f"ARCHITECTURE.md {n}: {x[:120]}")
print(f"{len(lost)} pieces of the old docs/ARCHITECTURE.md missing")
sys.exit(1 if missing or lost else 0)
