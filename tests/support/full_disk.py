"""A real full disk for the index build (tests/runtime/test_full_disk.py and benchmarks/fault_cases_44.py): a 3 MB
private tmpfs (``unshare -m``) holding a 4,000-node graph, filled but for 200 kB, then ``ark ask`` builds the BM25
index there; the command prints ``left: <what index/ holds>`` last on stderr."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

MAKE_GRAPH = textwrap.dedent("""
    import random, sys
    from ark.graph import EdgeTable, NodeTable, build_graph, save_graph
    rng = random.Random(1)
    words = [f"w{i}x" for i in range(20000)]
    ids = [f"n{i}" for i in range(4000)]
    texts = [" ".join(rng.choice(words) for _ in range(60)) for _ in ids]
    graph = build_graph(NodeTable(ids, ["t"] * len(ids), ids, texts, [None] * len(ids)),
                        EdgeTable(["n0"], ["n1"], ["r"]))
    save_graph(graph, sys.argv[1])
""")


def full_disk_command(disk: Path) -> list[str]:
    """The command: mount the tmpfs on ``disk``, save the graph at ``disk/g``, fill the disk, ``ark ask`` there."""
    graph = disk / "g"
    script = (f"mount -t tmpfs -o size=3m tmpfs {disk} && {sys.executable} -c \"$0\" {graph} && "
              f"head -c $(( $(df -B1 --output=avail {disk} | tail -1) - 200000 )) /dev/zero > {disk}/filler && "
              f"{sys.executable} -m ark.cli.main ask {graph} 'w1x w2x' --offline --top 3; code=$?; "
              f"echo \"left: $(ls -A {graph}/index)\" >&2; exit $code")
    return ["unshare", "-m", "sh", "-c", script, MAKE_GRAPH]
