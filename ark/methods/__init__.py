"""Retrieval methods behind one registry: each family in its own folder (``text/`` baselines, ``ark/``, ...), each
described by a ``spec.py`` so the registry can list and validate methods without importing them.

    from ark.methods import build_method, method_specs
    retriever = build_method("ark", graph, {"n_agents": 5})
    output = retriever.retrieve("Which genes are implicated in Marfan syndrome?", k=20)
"""

from .base import ANSWER_TYPES, Answer, MethodContext, MethodOptions, MethodOutput, NoOptions, Retriever
from .records import DetailsRecord, MethodRecord
from .registry import MethodError, MethodSpec, build_method, get_method_spec, method_specs, register_method

__all__ = [
    "ANSWER_TYPES",
    "Answer",
    "DetailsRecord",
    "MethodContext",
    "MethodError",
    "MethodOptions",
    "MethodRecord",
    "MethodOutput",
    "MethodSpec",
    "NoOptions",
    "Retriever",
    "build_method",
    "get_method_spec",
    "method_specs",
    "register_method",
]
