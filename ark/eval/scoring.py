"""Scoring a results file against its queries: per-query metrics, means overall and per template, Markdown."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..metrics import HEADLINE_METRICS, METRIC_NAMES, dedupe, filter_answers, mean_metrics, query_metrics

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query

METRIC_LABELS = {"hit@1": "Hit@1", "hit@5": "Hit@5", "hit@10": "Hit@10", "hit@20": "Hit@20",
                 "recall@5": "R@5", "recall@10": "R@10", "recall@20": "R@20", "mrr": "MRR"}


def candidate_test(graph: KnowledgeGraph, candidate_types: Sequence[str] | None):
    """A function telling whether a node id is a candidate: in the graph and, if given, of a candidate type."""
    types = {graph.resolve_node_type(t) for t in candidate_types} if candidate_types else None

    def is_candidate(node_id: str) -> bool:
        if not graph.has_node(node_id):
            return False
        return types is None or graph.node_type(graph.index_of(node_id)) in types

    return is_candidate


def first_answer_rank(ranked: Sequence[str], answers: Iterable[str], truncate: int | None = None) -> int | None:
    """1-based rank of the first answer in the de-duplicated ranking cut to ``truncate`` (as MRR sees it), or None."""
    gold = set(answers)
    ranking = dedupe(ranked)[:truncate] if truncate is not None else dedupe(ranked)
    return next((pos for pos, node in enumerate(ranking, start=1) if node in gold), None)


def score_results(
    queries: Sequence[Query],
    results: Iterable[Mapping[str, Any]],
    graph: KnowledgeGraph,
    candidate_types: Sequence[str] | None = None,
    truncate: int | None = None,
) -> list[dict[str, Any]]:
    """One row per query (in query order) with its metrics; queries without a result line score 0 (``missing``).

    Ranked nodes that are not candidates are removed before scoring (STaRK filters predictions to candidates);
    answers that are not candidates are dropped and counted in ``dropped_answers``.
    """
    by_id = {str(r["id"]): r for r in results}
    is_candidate = candidate_test(graph, candidate_types)
    rows = []
    for query in queries:
        record = by_id.get(query.id)
        ranked = [n for n in (record or {}).get("ranked", []) if is_candidate(n)]
        answers, dropped = filter_answers(query.answer_ids, is_candidate)
        metrics = query_metrics(ranked, answers, truncate=truncate)
        first = first_answer_rank(ranked, answers, truncate=truncate)
        rows.append({
            "id": query.id,
            "template": query.template,
            "query": query.query,
            "answer_ids": answers,
            "dropped_answers": dropped,
            "n_ranked": len(ranked),
            "first_answer_rank": first,
            "missing": record is None,
            "wall_s": (record or {}).get("wall_s"),
            **metrics,
        })
    return rows


def summarize(rows: Sequence[Mapping[str, Any]], truncate: int | None = None,
              candidate_types: Sequence[str] | None = None) -> dict[str, Any]:
    """Means overall and per template (when the queries have templates), with counts of what was left out."""
    templates = sorted({r["template"] for r in rows if r.get("template") is not None})
    by_template = {
        t: {"n": sum(1 for r in rows if r.get("template") == t),
            **mean_metrics(r for r in rows if r.get("template") == t)}
        for t in templates
    }
    return {
        "n_queries": len(rows),
        "n_missing_results": sum(1 for r in rows if r.get("missing")),
        "n_without_valid_answer": sum(1 for r in rows if not r["answer_ids"]),
        "dropped_answers": sum(r["dropped_answers"] for r in rows),
        "truncate": truncate,
        "candidate_types": list(candidate_types) if candidate_types else None,
        "overall": {"n": len(rows), **mean_metrics(rows)},
        "by_template": by_template,
    }


def summary_rows(summary: Mapping[str, Any]) -> list[tuple[str, Mapping[str, float]]]:
    """(scope, metrics) pairs: ``overall`` first, then each template when there is more than one row to show."""
    rows: list[tuple[str, Mapping[str, float]]] = [("overall", summary["overall"])]
    by_template = summary.get("by_template") or {}
    if len(by_template) > 1 or (by_template and next(iter(by_template.values()))["n"] != summary["overall"]["n"]):
        rows.extend((f"template: {t}", m) for t, m in by_template.items())
    return rows


def percent(value: float) -> str:
    return f"{100 * value:.2f}"


def markdown_table(summary: Mapping[str, Any], title: str | None = None,
                   metrics: Sequence[str] = HEADLINE_METRICS) -> str:
    """The summary as a Markdown table (metrics ×100), with a line on how it was scored."""
    head = ["scope", "n", *(METRIC_LABELS[m] for m in metrics)]
    lines = [f"## {title}", ""] if title else []
    lines += ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for scope, values in summary_rows(summary):
        lines.append("| " + " | ".join([scope, str(values["n"]), *(percent(values[m]) for m in metrics)]) + " |")
    lines += ["", scoring_note(summary)]
    return "\n".join(lines) + "\n"


def scoring_note(summary: Mapping[str, Any]) -> str:
    """One line saying how the numbers were computed and what was left out."""
    parts = ["Metrics ×100, STaRK semantics (recall over all answers; MRR over the whole returned ranking)"]
    if summary.get("truncate"):
        parts.append(f"ranking truncated to the top {summary['truncate']} before all metrics (ARK paper)")
    if summary.get("candidate_types"):
        parts.append(f"candidates: {', '.join(summary['candidate_types'])} nodes")
    if summary.get("dropped_answers"):
        parts.append(f"{summary['dropped_answers']} non-candidate answer id(s) dropped")
    if summary.get("n_without_valid_answer"):
        parts.append(f"{summary['n_without_valid_answer']} query(ies) without a valid answer score 0")
    if summary.get("n_missing_results"):
        parts.append(f"{summary['n_missing_results']} query(ies) without results score 0")
    return "; ".join(parts) + "."


__all__ = ["METRIC_LABELS", "METRIC_NAMES", "markdown_table", "score_results", "summarize", "summary_rows"]
