"""Scoring a results file against its queries: per-query metrics, means overall and per template, Markdown."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..metrics import (
    HEADLINE_METRICS,
    METRIC_NAMES,
    answer_metrics,
    dedupe,
    filter_answers,
    infer_answer_type,
    mean_answer_metrics,
    mean_metrics,
    query_metrics,
)
from ..metrics.judge import JUDGE_LABEL

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from ..loaders.queries import Query

METRIC_LABELS = {"hit@1": "Hit@1", "hit@5": "Hit@5", "hit@10": "Hit@10", "hit@20": "Hit@20",
                 "recall@5": "R@5", "recall@10": "R@10", "recall@20": "R@20", "mrr": "MRR",
                 "exact_match": "EM", "f1": "F1", "item_f1": "item F1", "judge_accuracy": "Judge"}
ANSWER_COLUMNS = ("exact_match", "f1", "judge_accuracy")


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
        row = {
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
        }
        if query.answer is not None:
            row.update(answer_row(query, record))
        rows.append(row)
    return rows


def retrieval_scored(row: Mapping[str, Any]) -> bool:
    """Whether a row's retrieval metrics count: every query with answer ids (even all dropped), none that gives only
    an answer text."""
    return row.get("answer_text") is None or bool(row.get("answer_ids")) or bool(row.get("dropped_answers"))


def answer_row(query: Query, record: Mapping[str, Any] | None) -> dict[str, Any]:
    """The answer columns of a question-answering query: gold and predicted text, type, and the answer metrics
    (exact match, token F1, item F1 for sets) after normalisation by the gold answer's type; a missing prediction
    scores 0."""
    answer_type = query.answer_type or infer_answer_type(query.answer)
    predicted = (record or {}).get("answer")
    text = predicted.get("text") if isinstance(predicted, Mapping) else None
    return {"answer_text": query.answer, "answer_type": answer_type, "predicted_answer": text,
            "answer_metrics": answer_metrics(text, query.answer, answer_type)}


def summarize(rows: Sequence[Mapping[str, Any]], truncate: int | None = None,
              candidate_types: Sequence[str] | None = None) -> dict[str, Any]:
    """Means overall and per template (when the queries have templates), with counts of what was left out."""
    templates = sorted({r["template"] for r in rows if r.get("template") is not None})
    scored = [r for r in rows if retrieval_scored(r)]
    by_template: dict[str, dict[str, Any]] = {}  # metric means, with the answer metrics nested under "answers"
    for t in templates:
        of_t = [r for r in scored if r.get("template") == t]
        by_template[t] = {"n": len(of_t), **mean_metrics(of_t)}
        answered = [r["answer_metrics"] for r in rows if r.get("template") == t and "answer_metrics" in r]
        if answered:
            by_template[t]["answers"] = {"n": len(answered), **mean_answer_metrics(answered)}
    summary = {
        "n_queries": len(rows),
        "n_missing_results": sum(1 for r in rows if r.get("missing")),
        "n_without_valid_answer": sum(1 for r in scored if not r["answer_ids"]),
        "dropped_answers": sum(r["dropped_answers"] for r in rows),
        "truncate": truncate,
        "candidate_types": list(candidate_types) if candidate_types else None,
        "overall": {"n": len(scored), **mean_metrics(scored)},
        "by_template": by_template,
    }
    answered = [r["answer_metrics"] for r in rows if "answer_metrics" in r]
    if answered:
        summary["answers"] = {"n": len(answered), **mean_answer_metrics(answered)}
        summary["n_answer_only"] = len(rows) - len(scored)
    return summary


def summary_rows(summary: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(scope, metrics) pairs: ``overall`` first, then each template when there is more than one row to show.
    Where the queries carry answer texts, each scope's metrics hold its answer metrics under ``answers``."""
    overall = dict(summary["overall"])
    if "answers" in summary:
        overall["answers"] = summary["answers"]
    rows: list[tuple[str, Mapping[str, Any]]] = [("overall", overall)]
    by_template = summary.get("by_template") or {}
    if len(by_template) > 1 or (by_template and next(iter(by_template.values()))["n"] != summary["overall"]["n"]):
        rows.extend((f"template: {t}", m) for t, m in by_template.items())
    return rows


def answer_columns(summary: Mapping[str, Any]) -> list[str]:
    """The answer metrics to show beside the retrieval metrics (none when no query has an answer text)."""
    answers = summary.get("answers")
    if not answers:
        return []
    return [name for name in ANSWER_COLUMNS if name in answers]


def answer_cells(values: Mapping[str, Any], columns: Sequence[str]) -> list[str]:
    """Answer-metric cells (×100) of one scope; ``-`` where the scope has no answered query."""
    answers = values.get("answers") or {}
    return [percent(answers[name]) if name in answers else "-" for name in columns]


def retrieval_cells(values: Mapping[str, Any], metrics: Sequence[str]) -> list[str]:
    """Retrieval-metric cells (×100) of one scope; ``-`` where no query of the scope has answer ids."""
    return [percent(values[m]) if values.get("n") else "-" for m in metrics]


def percent(value: float) -> str:
    return f"{100 * value:.2f}"


def markdown_table(summary: Mapping[str, Any], title: str | None = None,
                   metrics: Sequence[str] = HEADLINE_METRICS) -> str:
    """The summary as a Markdown table (metrics ×100), with a line on how it was scored."""
    answer_names = answer_columns(summary)
    head = ["scope", "n", *(METRIC_LABELS[m] for m in metrics)]
    if answer_names:
        head += ["n answered", *(METRIC_LABELS[m] for m in answer_names)]
    lines = [f"## {title}", ""] if title else []
    lines += ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for scope, values in summary_rows(summary):
        cells = [scope, str(values["n"]), *retrieval_cells(values, metrics)]
        if answer_names:
            cells += [str((values.get("answers") or {}).get("n", 0)), *answer_cells(values, answer_names)]
        lines.append("| " + " | ".join(cells) + " |")
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
    if summary.get("answers"):
        parts.append("answer metrics: exact match and token F1 after normalising both answers by the gold answer's "
                     "type (GraphScout §4.1), a missing answer scores 0")
        if summary.get("n_answer_only"):
            parts.append(f"{summary['n_answer_only']} query(ies) with an answer text only: answer metrics only")
        if "judge_accuracy" in summary["answers"]:
            parts.append(f"{JUDGE_LABEL}: {summary['answers'].get('judge_model', 'configured model')}")
    return "; ".join(parts) + "."


__all__ = ["METRIC_LABELS", "METRIC_NAMES", "markdown_table", "score_results", "summarize", "summary_rows"]
