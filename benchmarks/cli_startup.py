"""Start-up time of the ``ark`` command (issue 18, "instant command line").

    python benchmarks/cli_startup.py [--runs 10] [--graph hpo]

Runs each command ``--runs`` times in a fresh process and prints the median wall time, and the median above the
median of ``python -c pass`` (the interpreter's own start-up, which no change to ARK can remove). Targets:
``ark --help`` ≤ 0.3 s and an offline ``ark ask`` on a built graph ≤ 0.6 s above ``python -c pass``, both with
``--offline`` and as the README's main job runs it for a new user (no flag, no model configured: the offline
policy). The graph is built (or opened) once before timing. Also lists the heavy modules each command imported
(openai, pandas, torch, ...), which an instant command must not load.

Wall and CPU time swing with the machine's load; where Linux ``perf`` (else valgrind's callgrind) can count this
user's instructions, the instructions retired above ``python -c pass`` are printed too, against the targets of issue
27 (``ark --help`` ≤ 0.44 G, an offline ``ark ask`` ≤ 1.63 G): a figure load does not move, for before/after
comparisons. The untimed first runs may write bytecode caches (``PYTHONDONTWRITEBYTECODE`` is lifted
for them), as a user's installation has them: timing source compilation on every run would measure the
environment, not ARK.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time

HEAVY = ("openai", "pandas", "torch", "transformers", "scipy", "numpy", "pyarrow", "pydantic", "httpx", "mcp",
         "fastapi", "uvicorn")
QUESTION = "Which genes are linked to Marfan syndrome?"


def ark_command(module: bool = False) -> list[str]:
    if module:  # the source tree on PYTHONPATH (e.g. an older checkout, to compare)
        return [sys.executable, "-m", "ark.cli.main"]
    found = shutil.which("ark", path=os.path.dirname(sys.executable)) or shutil.which("ark")
    return [found] if found else [sys.executable, "-m", "ark.cli.main"]


def medians(command: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of ``runs`` fresh runs. On a shared machine the CPU
    time is the steadier figure: waiting for a core counts in wall time only."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def instructions(command: list[str], runs: int = 3, env: dict[str, str] | None = None) -> int | None:
    """Median user-space instructions retired by ``command``: counted by ``perf stat`` where the CPU's counters are
    readable, else by valgrind's callgrind (a virtual machine has no counters; callgrind runs the command ~50 times
    slower, so one run there: its count does not vary); None where neither can count."""
    counts = []
    for _ in range(runs):
        counted = _perf_instructions(command, env)
        if counted is None:
            return _callgrind_instructions(command, env)
        counts.append(counted)
    return int(statistics.median(counts))


def _perf_instructions(command: list[str], env: dict[str, str] | None) -> int | None:
    perf = shutil.which("perf")
    if perf is None:
        return None
    done = subprocess.run([perf, "stat", "-x,", "-e", "instructions:u", "--", *command], capture_output=True,
                          text=True, check=False, env=env)
    lines = [line for line in done.stderr.splitlines() if ",instructions" in line]
    if done.returncode != 0 or not lines or not lines[-1].split(",")[0].isdigit():
        return None
    return int(lines[-1].split(",")[0])


def _callgrind_instructions(command: list[str], env: dict[str, str] | None) -> int | None:
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        return None
    done = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", "--", *command],
                          capture_output=True, text=True, check=False, env=env)
    lines = [line for line in done.stderr.splitlines() if "Collected :" in line]
    if done.returncode != 0 or not lines:
        return None
    return int(lines[-1].split(":")[-1].strip())


def warm_up(command: list[str]) -> None:
    """One untimed run that may write bytecode caches (and builds the graph and its index on first use)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(command, stdout=subprocess.DEVNULL, check=True, env=env)


def heavy_imports(argv: list[str], env: dict[str, str] | None = None) -> list[str]:
    """The top-level packages of :data:`HEAVY` that running ``ark argv`` imports."""
    code = ("import sys; sys.argv = ['ark', *sys.argv[1:]]\nfrom ark.cli.main import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.__stderr__)")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=False, env=env)
    loaded = set(done.stderr.strip().splitlines()[-1].split()) if done.stderr.strip() else set()
    return [name for name in HEAVY if name in loaded]


def no_model_environment() -> dict[str, str] | None:
    """This environment without the variables that configure a chat model, or None where ARK's config file still
    configures one (then ``ark ask`` without ``--offline`` would call that model)."""
    from ark.llm.settings import ENV_VARS, resolve_settings

    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS.values()}
    settings = resolve_settings(environ=env)
    # Stricter than LLMSettings.configured(): a config file giving only a model or only an endpoint makes the
    # command fail (it never falls back to the offline policy), so that is no "no model" run either.
    return None if settings.model or settings.base_url else env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--graph", default="hpo")
    parser.add_argument("--module", action="store_true",
                        help="run `python -m ark.cli.main` (the ark on PYTHONPATH) instead of the installed command")
    args = parser.parse_args()
    ark = ark_command(args.module)
    ask = [*ark, "ask", args.graph, QUESTION, "--offline"]
    warm_up(ask)
    warm_up([*ark, "--help"])
    base, base_cpu = medians([sys.executable, "-c", "pass"], args.runs)
    base_instructions = instructions([sys.executable, "-c", "pass"])
    # name, command, ark's argv, wall target (s above pass), instructions target (M above pass), environment
    rows = [("ark --help", [*ark, "--help"], ["--help"], 0.3, 440, None),
            (f"ark ask {args.graph} '...' --offline", ask, ["ask", args.graph, QUESTION, "--offline"], 0.6, 1630,
             None)]
    unconfigured = no_model_environment()
    if unconfigured is not None:  # the README's main job as a new user runs it: no flag, the offline policy
        rows.append((f"ark ask {args.graph} '...' (no model)", [*ark, "ask", args.graph, QUESTION],
                     ["ask", args.graph, QUESTION], 0.6, 1630, unconfigured))
    else:
        print("(the no-model row is skipped: $ARK_HOME/config.toml configures a model, which the command would call)")
    print(f"python -c pass: median {base:.3f} s wall, {base_cpu:.3f} s CPU over {args.runs} runs; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'command':<34} {'wall s':>7} {'above pass':>11} {'target':>7} {'CPU s':>6} {'above pass':>11} "
          f"{'Minstr':>7} {'target':>7}  heavy modules imported")
    for name, command, argv, target, instruction_target, env in rows:
        wall, cpu = medians(command, args.runs, env)
        verdicts = ["wall ok" if wall - base <= target else "wall MISSED"]
        heavy = ", ".join(heavy_imports(argv, env)) or "-"
        counted = instructions(command, env=env)
        extra = "-"
        if counted is not None and base_instructions is not None:
            extra = f"{(counted - base_instructions) / 1e6:.0f}"
            verdicts.append("instr ok" if counted - base_instructions <= instruction_target * 1e6 else "instr MISSED")
        print(f"{name:<34} {wall:>7.3f} {wall - base:>11.3f} {'≤' + str(target):>7} {cpu:>6.3f} "
              f"{cpu - base_cpu:>11.3f} {extra:>7} {'≤' + str(instruction_target):>7}  {heavy}  "
              f"[{', '.join(verdicts)}]")


if __name__ == "__main__":
    main()
