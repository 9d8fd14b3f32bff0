"""Turning outside formats into a :class:`ark.graph.KnowledgeGraph`, and the built-in named graphs."""

from .documents import relational_document
from .grbench import AnswerMatcher, GRBenchQuestion, import_grbench, load_grbench, load_grbench_questions
from .hpo import build_hpo_graph, hpo_data_dir
from .queries import Query, read_query_jsonl
from .registry import BUILDERS, build_named_graph, graph_dir, open_graph
from .stark import STARK_DATASETS, download_stark_skb, import_stark, load_stark_skb, stark_document
from .stark_qa import available_splits, load_stark_qa
from .tabular import import_tabular, load_tabular

__all__ = [
    "BUILDERS",
    "AnswerMatcher",
    "GRBenchQuestion",
    "STARK_DATASETS",
    "Query",
    "available_splits",
    "build_hpo_graph",
    "build_named_graph",
    "download_stark_skb",
    "graph_dir",
    "hpo_data_dir",
    "import_grbench",
    "import_stark",
    "import_tabular",
    "load_grbench",
    "load_grbench_questions",
    "load_stark_qa",
    "load_stark_skb",
    "load_tabular",
    "open_graph",
    "read_query_jsonl",
    "relational_document",
    "stark_document",
]
