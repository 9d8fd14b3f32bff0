"""Peak memory of ``ark graph import`` of a graph folder: the streamed import against the whole-table build.

Generates the synthetic MAG graph (benchmarks/synthetic_mag.py) at each scale, then imports it in a fresh child
process per mode, its resident set sampled every 10 ms (``/proc/PID/statm``), its CPU time and wall time:

- ``floor``: the interpreter with pyarrow, pyarrow.parquet, numpy and the import's modules loaded, and pandas, which
  pyarrow imports on its first conversion of Python values (``pa.array``, a scalar given to ``pyarrow.compute``:
  every import makes one), nothing read;
- ``whole``: ``save_graph(load_tabular(folder), out)``, what ``import_tabular`` did before issue 50;
- ``streamed``: ``import_tabular(folder, out)`` (ark/loaders/tabular_stream.py) at the default budget, and at each
  ``--budgets-mb`` (``ARK_BUILD_MEMORY_MB``).

The input size is ``nodes.parquet`` + ``edges.parquet``. Usage::

    python -m benchmarks.bench_tabular_import_memory [--scales 0.1 0.3] [--budgets-mb 32] [--repeats 1]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.synthetic_mag import generate  # noqa: E402

IMPORTS = ("import sys; import numpy, pyarrow, pyarrow.parquet, pyarrow.compute; "
           "import ark.loaders.tabular, ark.loaders.tabular_stream, ark.graph.build; ")
CODE = {
    "floor": IMPORTS + "pyarrow.array([1])",  # the first conversion of Python values imports pandas (~40 MB)
    "whole": IMPORTS + ("from ark.graph import save_graph; from ark.loaders.tabular import load_tabular; "
                        "save_graph(load_tabular(sys.argv[1]), sys.argv[2])"),
    "streamed": IMPORTS + "from ark.loaders.tabular import import_tabular; import_tabular(sys.argv[1], sys.argv[2])",
}
PAGE = os.sysconf("SC_PAGE_SIZE")


def run(mode: str, folder: Path, out: Path, budget_mb: int | None = None) -> dict[str, float]:
    """Peak RSS (sampled and high-water), CPU and wall seconds of one import in a fresh child process."""
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ARK_BUILD_MEMORY_MB", None)
    if budget_mb is not None:
        env["ARK_BUILD_MEMORY_MB"] = str(budget_mb)
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", CODE[mode], str(folder), str(out)], env=env)
    sampled = 0.0
    statm = Path(f"/proc/{child.pid}/statm")
    while child.poll() is None:
        with contextlib.suppress(OSError, IndexError, ValueError):  # the child may have just ended
            sampled = max(sampled, int(statm.read_text().split()[1]) * PAGE / 1e6)
        time.sleep(0.01)
    wall = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"{mode} import failed with status {child.returncode}")
    return {"sampled_mb": sampled, "wall_s": wall}


def measure(mode: str, folder: Path, out: Path, budget_mb: int | None = None) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run(mode, folder, out, budget_mb)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["cpu_s"] = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=float, nargs="+", default=[0.1])
    parser.add_argument("--budgets-mb", type=int, nargs="*", default=[32])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in os.getloadavg())}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-tabular-") as tmp:
        for scale in args.scales:
            folder = Path(tmp) / f"mag-{scale}"
            counts = generate(folder, scale)
            data_mb = (counts["nodes_bytes"] + counts["edges_bytes"]) / 1e6
            sizes = f"nodes {counts['nodes_bytes'] / 1e6:.1f}, edges {counts['edges_bytes'] / 1e6:.1f}"
            print(f"\nscale {scale}: {counts['nodes']:,} nodes, {counts['edges']:,} edges; input tables "
                  f"{data_mb:.1f} MB ({sizes})")
            print("| mode | peak RSS sampled (MB) | x input | CPU s | wall s | graph MB |")
            print("|---|---:|---:|---:|---:|---:|")
            modes = [("floor", None), ("whole", None), ("streamed", None), *(("streamed", b) for b in args.budgets_mb)]
            for _ in range(args.repeats):
                for mode, budget in modes:
                    out = Path(tmp) / "out"
                    result = measure(mode, folder, out, budget)
                    graph_mb = sum(p.stat().st_size for p in out.iterdir()) / 1e6 if out.exists() else 0.0
                    label = mode if budget is None else f"{mode}, ARK_BUILD_MEMORY_MB={budget}"
                    print(f"| {label} | {result['sampled_mb']:.0f} | {result['sampled_mb'] / data_mb:.2f} | "
                          f"{result['cpu_s']:.2f} | {result['wall_s']:.2f} | {graph_mb:.0f} |", flush=True)
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\nload average at end: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
