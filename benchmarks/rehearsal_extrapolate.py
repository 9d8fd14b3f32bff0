"""The rehearsal's extrapolation to a benchmark's real size by measured per-unit rates.

Each stage's CPU time, peak RSS and disk is driven by one size of the graph (:data:`DRIVERS`): the source file's
bytes (generating and importing ``graph.json``), the node texts' bytes (the BM25 builds), the rows a database loads
(nodes + edges, the Cypher export) or the node count (the tool calls and questions, whose tables are per node). A
run's sizes come from its stage figures (``generate.json``: nodes, edges, bytes; ``import`` / ``bm25``: the node
table's bytes). The rate of each figure is taken from the largest measured run of the same shape (format): CPU time
and disk in proportion to the driver (fixed costs are small there), peak RSS by the straight line through the two
largest runs when there are two (a process's fixed memory is not small), else in proportion (an upper bound). Sizes at
the real size: the papers' node and edge counts, bytes by the run's bytes a node. These are projections from
synthetic graphs in the released formats, labelled so wherever they print.
"""

from __future__ import annotations

from typing import Any

# stage -> figure -> the size that drives it
DRIVERS: dict[str, dict[str, str]] = {
    "generate": {"cpu_s": "source_bytes", "disk_gb": "source_bytes", "peak_added_disk_gb": "source_bytes",
                 "peak_rss_gb": "nodes"},
    "import": {"cpu_s": "source_bytes", "disk_gb": "source_bytes", "peak_added_disk_gb": "source_bytes",
               "peak_rss_gb": "nodes"},
    "bm25": {"cpu_s": "text_bytes", "disk_gb": "text_bytes", "peak_added_disk_gb": "text_bytes",
             "peak_rss_gb": "text_bytes"},
    "cypher": {"cpu_s": "rows", "disk_gb": "rows", "peak_added_disk_gb": "rows", "peak_rss_gb": "rows"},
    "search": {"cpu_s": "nodes", "peak_rss_gb": "nodes"},
    "ark": {"cpu_s": "nodes", "peak_rss_gb": "nodes"},
    "questions": {"cpu_s": "nodes", "peak_rss_gb": "nodes"},
}
for _figures in DRIVERS.values():  # private memory (RSS without mapped files' pages) by the same size as RSS
    _figures["peak_anon_gb"] = _figures["peak_rss_gb"]
UNIT_NAMES = {"source_bytes": "GB of source file", "text_bytes": "GB of node text", "rows": "M rows (nodes + edges)",
              "nodes": "M nodes"}
UNIT_SIZE = {"source_bytes": 1e9, "text_bytes": 1e9, "rows": 1e6, "nodes": 1e6}
MACHINE = {"cores": 2, "memory_gb": 24.0, "goal_gb": 16.0, "disk_gb": 64.0}


def run_sizes(records: list[dict[str, Any]]) -> dict[str, float]:
    """One run's sizes from its stage records (each stage's own figures merged into its record)."""
    sizes: dict[str, float] = {}
    for record in records:
        if record["stage"] == "generate":
            sizes["nodes"] = record["nodes"]
            sizes["edges"] = record.get("neighbor_entries", record.get("edge_rows", 0))
            sizes["source_bytes"] = record.get("bytes", record.get("disk_gb", 0) * 1e9)
        if record.get("text_bytes"):
            sizes["text_bytes"] = record["text_bytes"]
        if record.get("nodes") and record.get("edges") and record["stage"] != "generate":
            sizes["nodes"], sizes["edges"] = record["nodes"], record["edges"]
    if "nodes" in sizes:
        sizes["rows"] = sizes["nodes"] + sizes.get("edges", 0)
    return sizes


def target_sizes(measured: dict[str, float], nodes: int, edges: int) -> dict[str, float]:
    """Sizes at the real size: the papers' counts, bytes by the measured run's bytes a node."""
    scaled = {key: measured[key] / measured["nodes"] * nodes for key in ("source_bytes", "text_bytes")
              if key in measured}
    return {"nodes": nodes, "edges": edges, "rows": nodes + edges, **scaled}


def _rate(points: list[tuple[float, float]], figure: str) -> tuple[float, float, str]:
    """(per unit, fixed, how) from (size, value) points, largest size last."""
    (x1, y1) = points[-1]
    memory = figure in ("peak_rss_gb", "peak_anon_gb")
    if memory and len(points) >= 2 and points[-2][0] < x1:
        (x0, y0) = points[-2]
        slope = (y1 - y0) / (x1 - x0)
        if slope >= 0:
            return slope, y1 - slope * x1, "line"
        return 0.0, y1, "flat"  # falling between the two: held at the largest run's value
    how = "in proportion, an upper bound" if memory else "in proportion"
    return (y1 / x1 if x1 else 0.0), 0.0, how


def stage_rates(records_by_run: list[list[dict[str, Any]]], stage: str) -> dict[str, Any] | None:
    """Rates of one stage from runs of one shape: {figure: (per unit, fixed, driver)}, the run they came from."""
    points: dict[str, list[tuple[float, float]]] = {}
    source = None
    for records in sorted(records_by_run, key=lambda rs: run_sizes(rs).get("nodes", 0)):
        sizes = run_sizes(records)
        record = next((r for r in records if r["stage"] == stage and "cpu_s" in r), None)
        if record is None:
            continue
        source = f"{record['format']}:{record['scale']}"
        for figure, driver in DRIVERS[stage].items():
            if driver in sizes and figure in record:
                points.setdefault(figure, []).append((sizes[driver], record[figure]))
    if not points:
        return None
    return {"from": source, **{f: (*_rate(p, f), DRIVERS[stage][f]) for f, p in points.items()}}


def project(records_by_run: list[list[dict[str, Any]]], nodes: int, edges: int) -> list[dict[str, Any]]:
    """Each stage's CPU hours, peak RSS and disk at ``nodes``/``edges`` for runs of one shape, with the rates used
    and whether it fits :data:`MACHINE`."""
    largest = max(records_by_run, key=lambda rs: run_sizes(rs).get("nodes", 0))
    target = target_sizes(run_sizes(largest), nodes, edges)
    rows, disk_total = [], 0.0
    for stage in DRIVERS:
        rates = stage_rates(records_by_run, stage)
        if rates is None:
            continue
        row: dict[str, Any] = {"stage": stage, "from": rates["from"], "rates": {}}
        for figure in ("cpu_s", "peak_rss_gb", "peak_anon_gb", "disk_gb", "peak_added_disk_gb"):
            if figure not in rates:
                continue
            per_unit, fixed, how, driver = rates[figure]
            if driver not in target:
                continue
            row[figure] = per_unit * target[driver] + fixed
            if figure != "peak_added_disk_gb":
                row["rates"][figure] = (per_unit * UNIT_SIZE[driver], fixed, UNIT_NAMES[driver], how)
        # the disk held while the stage runs: what the stages before it left plus the most this one added
        row["disk_peak_gb"] = disk_total + max(row.get("peak_added_disk_gb", 0.0), row.get("disk_gb", 0.0))
        disk_total += row.get("disk_gb", 0.0)
        rss = row.get("peak_rss_gb", 0.0)
        over = [f"memory {rss:.0f} GB > {MACHINE['memory_gb']:.0f}"] if rss > MACHINE["memory_gb"] else []
        if row["disk_peak_gb"] > MACHINE["disk_gb"]:
            over.append(f"disk {row['disk_peak_gb']:.0f} GB > {MACHINE['disk_gb']:.0f}")
        row["fits"] = ("no: " + ", ".join(over) if over else
                       "yes, over the 16 GB goal" if rss > MACHINE["goal_gb"] else "yes")
        rows.append(row)
    return rows


def print_projection(shape: str, rows: list[dict[str, Any]], nodes: int, edges: int) -> None:
    if not rows:
        return
    print(f"\n== PROJECTED {shape} at {nodes:,} nodes / {edges:,} edges by measured per-unit rates (synthetic graphs; "
          f"not measured at this size); fits = a {MACHINE['cores']}-core, {MACHINE['memory_gb']:.0f} GB machine with "
          f"{MACHINE['disk_gb']:.0f} GB disk (goal <= {MACHINE['goal_gb']:.0f} GB) ==")
    print(f"{'stage':<10} {'from':<14} {'CPU h':>7} {'peak RSS GB':>11} {'private GB':>10} {'disk GB':>8} "
          f"{'disk peak':>9}  fits; rates (per unit + fixed)")
    for r in rows:
        rates = "; ".join(f"{figure} {per:.4g}/{unit}" + (f" + {fixed:.2f}" if fixed else "") + f" ({how})"
                          for figure, (per, fixed, unit, how) in r["rates"].items())
        disk = f"{r['disk_gb']:>8.1f}" if "disk_gb" in r else f"{'-':>8}"
        private = f"{r['peak_anon_gb']:>10.1f}" if "peak_anon_gb" in r else f"{'-':>10}"
        print(f"{r['stage']:<10} {r['from']:<14} {r.get('cpu_s', 0) / 3600:>7.2f} {r.get('peak_rss_gb', 0):>11.1f} "
              f"{private} {disk} {r['disk_peak_gb']:>9.1f}  {r['fits']}; {rates}")
