"""The ARK agent (Polonuer et al., *Autonomous Knowledge Graph Exploration with Adaptive Breadth-Depth Retrieval*):
LLM agents with global search and typed neighbourhood exploration, vote fusion, and the offline policy.

Importing this package imports nothing: ``spec.py`` (the registry's entry) and ``options.py`` are light; the
implementation (``api``, ``loop``, ``tools/``, ``offline/``, ``retriever``) loads when the method is built.
"""
