"""mFAR as a retrieval method: ``MfarRetriever(graph, options, context).retrieve(query, k)``.

Per query: embed it once (the frozen embedder), pool each field scorer's top candidates, compute the 2F field
scores of the pool and rank it by the trained query-conditioned mixture (:mod:`.model`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..base import MethodContext, MethodOutput, Retriever, type_mask
from ..model_folder import default_model_dir
from .fields import open_field_scorers
from .model import MfarModelError, load_model, mix
from .options import MfarOptions

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph


def resolve_model_dir(model: str | None, graph: KnowledgeGraph) -> Path:
    """``model`` when given, else the default folder of the graph's name; :class:`MfarModelError` says how to make
    one when there is none."""
    if model:
        return Path(model).expanduser()
    name = graph.info.name
    if not name or not default_model_dir("mfar", str(name)).is_dir():
        raise MfarModelError(f"no mFAR model for graph {name!r}: make one with `ark train mfar GRAPH --queries "
                             "TRAIN` or pass --set model=DIR")
    return default_model_dir("mfar", str(name))


class MfarRetriever(Retriever):
    """Field scores mixed by the trained weights (no LLM)."""

    def __init__(self, graph: KnowledgeGraph, options: MfarOptions | None = None,
                 context: MethodContext | None = None) -> None:
        options = options or MfarOptions()
        context = context or MethodContext()
        folder = resolve_model_dir(options.model, graph)
        self.scorers = open_field_scorers(graph, progress=context.progress)
        self.weights, self.bias, self.meta = load_model(folder, graph, self.scorers.names)
        self.options = options
        self.mask = type_mask(graph, context.candidate_types)

    def retrieve(self, query: str, k: int) -> MethodOutput:
        vector = self.scorers.embed([query])[0]
        pool = self.scorers.candidates(query, vector, self.options.candidates)
        if self.mask is not None:
            pool = pool[self.mask[pool]]
        if not len(pool):
            return MethodOutput([], [])
        scores = mix(self.weights, self.bias, vector, self.scorers.features(query, vector, pool))
        order = np.argsort(-scores, kind="stable")[:k]
        return MethodOutput([int(i) for i in pool[order]], [float(v) for v in scores[order]])
