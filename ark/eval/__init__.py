"""Evaluation: query files, retrieval methods, resumable runs, STaRK metrics, run folders, comparisons, tool use."""

from ..metrics import HEADLINE_METRICS, METRIC_NAMES, filter_answers, mean_metrics, query_metrics
from .compare import LoadedRun, comparison_markdown, comparison_rows, disagreements, load_run
from .experiment import EvalOutcome, run_eval, score_folder
from .methods import AGENT_METHODS, METHODS, MethodOptions, MethodOutput, make_method
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
from .tooluse import analyze_tool_use

__all__ = [
    "AGENT_METHODS",
    "HEADLINE_METRICS",
    "METHODS",
    "METRIC_NAMES",
    "EvalOutcome",
    "LoadedRun",
    "MethodOptions",
    "MethodOutput",
    "QueryCheck",
    "QueryFileError",
    "RunFolder",
    "RunFolderError",
    "RunStats",
    "analyze_tool_use",
    "check_same_run",
    "comparison_markdown",
    "comparison_rows",
    "default_run_dir",
    "disagreements",
    "filter_answers",
    "load_run",
    "make_method",
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
