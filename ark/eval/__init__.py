"""Evaluation of any registered method: query files, resumable runs, STaRK metrics, run folders, comparisons."""

from ..metrics import HEADLINE_METRICS, METRIC_NAMES, filter_answers, mean_metrics, query_metrics
from .compare import LoadedRun, comparison_markdown, comparison_rows, disagreements, load_run
from .experiment import EvalOutcome, run_eval, score_folder
from .query_files import QueryCheck, QueryFileError, open_queries, read_queries
from .run_folder import (
    RunFolder,
    RunFolderError,
    check_same_run,
    default_run_dir,
    prepare_results_file,
    prepare_run_folder,
)
from .runner import RunStats, run_retrieval
from .scoring import markdown_table, score_results, summarize

__all__ = [
    "HEADLINE_METRICS",
    "METRIC_NAMES",
    "EvalOutcome",
    "LoadedRun",
    "QueryCheck",
    "QueryFileError",
    "RunFolder",
    "RunFolderError",
    "RunStats",
    "check_same_run",
    "comparison_markdown",
    "comparison_rows",
    "default_run_dir",
    "disagreements",
    "filter_answers",
    "load_run",
    "markdown_table",
    "mean_metrics",
    "open_queries",
    "prepare_results_file",
    "prepare_run_folder",
    "query_metrics",
    "read_queries",
    "run_eval",
    "run_retrieval",
    "score_folder",
    "score_results",
    "summarize",
]
