"""Load on ``ark serve``: N questions POSTed at once on loopback (issue 18: 50 offline questions all 200 within 30 s,
resident memory growing by less than 200 MB).

    python benchmarks/serve_load.py [--graph hpo] [--concurrent 50] [--method ark]

Starts the real ``ark serve GRAPH --offline --port 0`` in a subprocess, asks one question to warm it up (the method
and its index are built on the first question), then POSTs ``--concurrent`` different questions at once and prints
how many got 200, the wall time of the batch, the median and slowest latency, and the server's resident memory
before and after (from /proc). Offline policy: no model is called.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

TOPICS = ["Marfan syndrome", "Dravet syndrome", "cystic fibrosis", "achondroplasia", "Ehlers-Danlos syndrome",
          "Noonan syndrome", "Rett syndrome", "Fragile X syndrome", "Loeys-Dietz syndrome", "Stickler syndrome"]


def post(url: str, body: dict, timeout: float = 120) -> tuple[int, float]:
    started = time.perf_counter()
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
            status = response.status
    except urllib.error.HTTPError as exc:
        status = exc.code
    return status, time.perf_counter() - started


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        return int(next(line for line in status if line.startswith("VmRSS")).split()[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--graph", default="hpo")
    parser.add_argument("--concurrent", type=int, default=50)
    parser.add_argument("--method", default="ark")
    args = parser.parse_args()
    process = subprocess.Popen([sys.executable, "-m", "ark.cli.main", "serve", args.graph, "--port", "0",
                                "--offline"], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        url = None
        while url is None:
            line = process.stderr.readline()
            if not line and process.poll() is not None:
                raise SystemExit("ark serve exited before listening")
            found = re.search(r"listening on (http://127\.0\.0\.1:\d+)/", line)
            url = found.group(1) if found else None
        ask = f"{url}/api/ask"
        status, warm_s = post(ask, {"question": "Which genes are linked to Marfan syndrome?", "method": args.method})
        before = rss_mb(process.pid)
        questions = [f"Which genes and phenotypes are linked to {TOPICS[n % len(TOPICS)]}? (#{n})"
                     for n in range(args.concurrent)]
        started = time.perf_counter()
        with ThreadPoolExecutor(args.concurrent) as pool:
            results = list(pool.map(lambda q: post(ask, {"question": q, "method": args.method}), questions))
        wall = time.perf_counter() - started
        after = rss_mb(process.pid)
        latencies = [seconds for _, seconds in results]
        ok = sum(1 for code, _ in results if code == 200)
        print(f"graph {args.graph}, method {args.method} (offline policy); warm-up question {warm_s:.2f} s "
              f"(status {status})")
        print(f"{args.concurrent} concurrent questions: {ok}/{args.concurrent} answered 200 in {wall:.2f} s "
              f"(latency median {statistics.median(latencies):.2f} s, max {max(latencies):.2f} s)")
        print(f"server resident memory: {before:.1f} MB before, {after:.1f} MB after (+{after - before:.1f} MB)")
        verdict = ok == args.concurrent and wall <= 30 and after - before < 200
        print("target (all 200 within 30 s, < 200 MB growth):", "met" if verdict else "MISSED")
    finally:
        process.terminate()
        process.wait(timeout=30)


if __name__ == "__main__":
    main()
