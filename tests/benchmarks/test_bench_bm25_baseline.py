"""bench_bm25.py --baseline runs ARK from the baseline checkout as ark@base, not this checkout's code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_baseline_workers_import_the_baseline_checkout(tmp_path):
    base = tmp_path / "base"
    shutil.copytree(REPO / "ark", base / "ark", ignore=shutil.ignore_patterns("__pycache__"))
    marker = tmp_path / "imported-from"
    with open(base / "ark" / "__init__.py", "a", encoding="utf-8") as init:
        init.write("\nimport os as _os\nif _os.environ.get('ARK_TEST_MARKER'):\n"
                   "    open(_os.environ['ARK_TEST_MARKER'], 'a').write(__file__ + '\\n')\n")
    env = {**os.environ, "ARK_TEST_MARKER": str(marker)}
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_bm25.py"), "--docs", "3000",
                           "--queries", "5", "--repeats", "1", "--skip-bm25s", "--skip-tantivy",
                           "--baseline", str(base), "--workdir", str(tmp_path / "work")],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "ark@base build" in done.stdout and "ark@base search" in done.stdout
    imported = marker.read_text().split()
    assert imported and all(Path(p).resolve().parents[1] == base.resolve() for p in imported)
