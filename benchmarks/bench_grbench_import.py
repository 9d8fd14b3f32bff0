"""Peak memory of ``ark graph import grbench`` (streaming) against ``json.load`` (whole file), side by side.

Generates synthetic GRBench graphs (benchmarks/synthetic_grbench.py, released format) of the given sizes in a
temporary folder, runs each import in a fresh subprocess and prints its wall time and peak RSS
(``getrusage(RUSAGE_CHILDREN)`` of that subprocess alone). Usage::

    python benchmarks/bench_grbench_import.py [--sizes-mb 20 200] [--whole]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.synthetic_grbench import write_graph  # noqa: E402

STREAM = ("from ark.loaders.grbench_import import stream_import_grbench as f; import sys; "
          "f(sys.argv[1], sys.argv[2], chunk_size=int(sys.argv[3]))")
WHOLE = "from ark.loaders.grbench import import_grbench as f; import sys; f(sys.argv[1], sys.argv[2])"


def peak_rss_mb(code: str, *args: str) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of ``python -c code args`` run as the only child of a fresh helper."""
    helper = ("import resource, subprocess, sys; subprocess.run([sys.executable, '-c'] + sys.argv[1:], check=True); "
              "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", helper, code, *args], check=True, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    return time.perf_counter() - start, int(result.stdout.split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[20, 200])
    parser.add_argument("--domain", default="amazon")
    parser.add_argument("--chunk-size", type=int, default=20_000)
    parser.add_argument("--whole", action="store_true", help="also run the json.load importer (for comparison)")
    args = parser.parse_args()
    print(f"{'size':>9} {'nodes.arrow':>12} {'stream s':>9} {'stream RSS':>11} {'whole s':>8} {'whole RSS':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes_mb:
            folder = Path(tmp) / f"g{size}"
            file = write_graph(folder, args.domain, int(size * 1e6))
            wall, rss = peak_rss_mb(STREAM, str(folder), str(Path(tmp) / f"s{size}"), str(args.chunk_size))
            whole = ("", "")
            if args.whole:
                w_wall, w_rss = peak_rss_mb(WHOLE, str(folder), str(Path(tmp) / f"w{size}"))
                whole = (f"{w_wall:.1f}", f"{w_rss:.0f} MB")
            arrow = (Path(tmp) / f"s{size}" / "nodes.arrow").stat().st_size
            print(f"{file.stat().st_size / 1e6:7.0f}MB {arrow / 1e6:10.0f}MB {wall:9.1f} {rss:8.0f} MB "
                  f"{whole[0]:>8} {whole[1]:>10}")


if __name__ == "__main__":
    main()
