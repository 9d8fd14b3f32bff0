"""Text-index baselines: BM25 over node text (``bm25``), BM25 over node text plus relations (``bm25-rel``, STaRK's
``add_rel``) and dense MiniLM embeddings (``dense``)."""
