"""bench_bm25.py times the same queries at every corpus size, so a latency growth compares like with like."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_bm25", REPO / "benchmarks" / "bench_bm25.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_smaller_corpus_is_the_start_of_a_larger_one_so_its_queries_are_the_same(tmp_path):
    bench = _bench()
    small, large = tmp_path / "small.txt", tmp_path / "large.txt"
    bench.make_corpus(small, 2_000, 500, 12)  # a part of the first generation block of 100,000
    bench.make_corpus(large, 150_000, 500, 12)
    with open(small, encoding="utf-8") as a, open(large, encoding="utf-8") as b:
        assert [next(b) for _ in range(2_000)] == a.readlines()
    same = bench.make_queries(small, 40, 2_000), bench.make_queries(large, 40, 2_000)
    assert same[0] == same[1] and len(set(same[0])) > 30
    assert bench.make_queries(large, 40, 150_000) != same[1]  # drawn from the whole corpus: another sample


def test_queries_come_from_the_smallest_size_unless_asked_for_each_whole_corpus():
    bench = _bench()
    run = Namespace(mag_scale=None, query_docs=1_000_000, docs=[3_000_000, 1_000_000, 10_000_000])
    assert [bench.query_docs(run, n) for n in run.docs] == [1_000_000] * 3
    run.docs = [100_000, 300_000]
    assert [bench.query_docs(run, n) for n in run.docs] == [100_000] * 2
    run.query_docs = 0
    assert [bench.query_docs(run, n) for n in run.docs] == [100_000, 300_000]
    mag = Namespace(mag_scale=1.0, query_docs=1_000_000, docs=[1_870_000])
    assert bench.query_docs(mag, 1_870_000) == 1_870_000


def test_a_negative_query_docs_is_refused_with_the_value():
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_bm25.py"), "--query-docs", "-5"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "--query-docs must be >= 0" in done.stderr and "-5" in done.stderr
