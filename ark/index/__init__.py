"""Text relevance over node documents: BM25 (global top-k, subset scoring) and a dense MiniLM option.

``DenseIndex`` lives in :mod:`ark.index.dense` (an optional extra, imported lazily).
"""

from ark.index.bm25 import BM25Index
from ark.index.graph_index import GraphTextIndex, TextIndex, node_documents, open_index
from ark.index.tokenizer import Tokenizer
from ark.text import ENGLISH_STOPWORDS

__all__ = [
    "ENGLISH_STOPWORDS",
    "BM25Index",
    "GraphTextIndex",
    "TextIndex",
    "Tokenizer",
    "node_documents",
    "open_index",
]
