"""From a graph and query files to a trained SeedER model directory (what ``ark train seeder`` will call).

:func:`read_questions` reads a query file (JSONL: ``{"id", "query", "answer_ids"}`` per line) and maps answer ids
to node indices; :class:`SubgraphBuilder` turns questions into query subgraphs (embedding the questions in
batches); :func:`train_seeder` embeds the graph (cached), builds the subgraphs, skips and reports training
questions whose answers all lie outside their subgraph, trains with :class:`~.trainer.PolicyTrainer` (checkpoints
in ``OUT/checkpoints``, so an interrupted run resumes) and writes the model directory.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ark.errors import ArkError
from ark.index.embedders import Embedder, open_embedder

from .config import SearchSettings, TrainSettings
from .embeddings import GraphEmbeddings, NodeFeatures, open_graph_embeddings, open_node_features
from .expansion import Expansion
from .subgraph import QuerySubgraph, query_subgraph

if TYPE_CHECKING:
    from ...graph import KnowledgeGraph


@dataclass(frozen=True)
class Question:
    """A training or validation question: its id, text and gold node indices."""

    id: str
    text: str
    answers: tuple[int, ...]


class QuestionFileError(ValueError, ArkError):
    """A query file that cannot be trained on (missing, empty, or malformed)."""


def read_questions(path: str | Path, graph: KnowledgeGraph, log: Callable[[str], None] | None = None) -> list[Question]:
    """The questions of a JSONL query file with answers as node indices.

    Answer ids the graph does not have are dropped (and counted); a question left without answers is skipped. An
    empty or missing file raises :class:`QuestionFileError` naming it.
    """
    from ark.loaders.queries import read_query_jsonl

    path = Path(path)
    if not path.is_file():
        raise QuestionFileError(f"no query file at {path}")
    try:
        queries = read_query_jsonl(path)
    except ValueError as exc:
        raise QuestionFileError(str(exc)) from None
    if not queries:
        raise QuestionFileError(f"{path} holds no questions (the file is empty); SeedER needs questions with "
                                "answers to train on, one JSON object a line: {\"id\", \"query\", \"answer_ids\"}")
    questions, unknown, empty = [], 0, 0
    for q in queries:
        known = [graph.index_of(a) for a in q.answer_ids if graph.has_node(a)]
        unknown += len(q.answer_ids) - len(known)
        if not known:
            empty += 1
            continue
        questions.append(Question(q.id, q.query, tuple(dict.fromkeys(known))))
    if (unknown or empty) and log is not None:
        log(f"{path}: {unknown} answer id(s) not in the graph were dropped; {empty} question(s) left without any "
            "answer are skipped")
    if not questions:
        raise QuestionFileError(f"{path}: none of its {len(queries)} questions has an answer in graph "
                                f"{graph.info.name!r}")
    return questions


class SubgraphBuilder:
    """Dense seeds + K-HOP-WITH-FILTERING subgraphs for one graph, embedder and search setting."""

    def __init__(self, graph: KnowledgeGraph, embeddings: GraphEmbeddings, features: NodeFeatures,
                 search: SearchSettings
                 ) -> None:
        self.graph, self.embeddings, self.features, self.search = graph, embeddings, features, search

    def build(self, query_vector: np.ndarray) -> tuple[QuerySubgraph, Expansion]:
        s = self.search
        return query_subgraph(self.graph, self.embeddings, self.features, query_vector, s.seeds, s.hop_budgets,
                              s.budget)

    def for_questions(self, questions: Sequence[Question], progress: bool = False, batch: int = 256,
                      label: str = "subgraphs") -> list[QuerySubgraph]:
        """One subgraph per question, with its answers recorded (question texts are embedded in batches)."""
        from ark.index._progress import progress_bar

        out: list[QuerySubgraph] = []
        with progress_bar(f"Building {label}", len(questions), progress) as bar:
            for start in range(0, len(questions), batch):
                chunk = questions[start:start + batch]
                vectors = self.embeddings.queries([q.text for q in chunk])
                for question, vector in zip(chunk, vectors, strict=True):
                    sub, _ = self.build(vector)
                    out.append(sub.with_answers(question.answers, question.id))
                bar.advance(len(chunk))
        return out


def unreachable(subgraphs: Sequence[QuerySubgraph]) -> list[QuerySubgraph]:
    """The subgraphs without any gold node inside (no expansion can earn a reward on them)."""
    return [s for s in subgraphs if len(s.answers) == 0]


def train_seeder(graph: KnowledgeGraph, train: Sequence[Question], out_dir: str | Path, settings: TrainSettings,
                 val: Sequence[Question] | None = None, embedder: Embedder | str | None = None,
                 device: str = "cpu", progress: bool = True, keep_checkpoints: bool = False,
                 log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Train SeedER on ``graph`` and write the model to ``out_dir``; returns a report (counts, seconds, metrics).

    Training questions whose answers all lie outside their query subgraph are skipped and counted; if that leaves
    none, :class:`~.trainer.SeederTrainingError` says so. Validation questions are all kept (unreachable ones
    score zero, as at test time).
    """
    from .model import count_parameters
    from .store import CHECKPOINTS, directory_size, save_model
    from .trainer import PolicyTrainer, SeederTrainingError

    log = log or (lambda message: print(message, file=sys.stderr))
    if not train:
        raise SeederTrainingError("the training set is empty: SeedER needs questions with answers to train on")
    out_dir = Path(out_dir)
    if not isinstance(embedder, Embedder):
        embedder = open_embedder(embedder)
    spec = getattr(embedder, "spec", embedder.name)
    started = time.perf_counter()
    embeddings = open_graph_embeddings(graph, embedder, progress=progress)
    features = open_node_features(graph, embeddings, settings.search.pca_dim)
    embedded = time.perf_counter()
    builder = SubgraphBuilder(graph, embeddings, features, settings.search)
    train_subs = builder.for_questions(train, progress, label="training subgraphs")
    val_subs = builder.for_questions(val or [], progress, label="validation subgraphs")
    built = time.perf_counter()
    missed = unreachable(train_subs)
    budget = settings.search.budget
    if missed:
        examples = ", ".join(s.query_id for s in missed[:3])
        log(f"{len(missed)} of {len(train_subs)} training questions have no answer inside their {budget}-node query "
            f"subgraph (e.g. {examples}); they are skipped, since no expansion can reach their answers")
    usable = [s for s in train_subs if len(s.answers)]
    if not usable:
        raise SeederTrainingError(f"none of the {len(train_subs)} training questions has an answer inside its "
                                  f"{budget}-node query subgraph: raise search.budget or search.hop_budgets, or "
                                  "check that the answers are near what the questions name")
    if val_subs:
        log(f"validation: {len(unreachable(val_subs))} of {len(val_subs)} questions have no answer inside their "
            "subgraph (they count as misses)")
    trainer = PolicyTrainer(settings, np.asarray(features.nodes), usable, val_subs,
                            num_relation_codes=2 * len(graph.relation_types),
                            node_type_codes=np.asarray(graph.node_type_codes),
                            num_node_types=max(1, len(graph.node_types)), checkpoint_dir=out_dir / CHECKPOINTS,
                            device=device, progress=progress, log=log)
    outcome = trainer.fit()
    best_val = next((e.get("val") for e in outcome.history.epochs if e["epoch"] == outcome.best_epoch), None)
    report = {
        "train_questions": len(train_subs), "train_skipped_unreachable": len(missed),
        "val_questions": len(val_subs), "val_unreachable": len(unreachable(val_subs)),
        "seconds_embeddings": round(embedded - started, 2), "seconds_subgraphs": round(built - embedded, 2),
        "seconds_training": round(outcome.seconds, 2), "best_epoch": outcome.best_epoch,
        "select_metric": settings.select_metric, "best_metric": outcome.best_metric, "validation": best_val,
        "epochs": outcome.history.epochs, "seed": settings.seed,
        "architecture": settings.architecture, "parameters": count_parameters(outcome.network),
    }
    save_model(out_dir, outcome.network, settings, graph,
               {"spec": spec, "identity": embedder.identity, "dimension": embeddings.dimension,
                "request_dimensions": getattr(embedder, "dimensions", None)}, features.pca, report)
    if not keep_checkpoints:
        shutil.rmtree(out_dir / CHECKPOINTS, ignore_errors=True)
    report["model_bytes"] = directory_size(out_dir)
    report["step_rewards"] = list(outcome.history.step_rewards)  # not in model.json: one number per step
    return report
