"""Shared fixtures of the training tests: offline-teacher trajectories on the clinical graph and a tiny base model."""

from __future__ import annotations

import pytest

from ark.training.datasets import record_sft_samples, write_chat_dataset
from tests.support.graphs import build_clinical_graph

# Training questions of the distillation test: one trajectory each, short enough to memorise quickly.
QUESTIONS = [
    "Which genes are implicated in Marfan syndrome?",
    "Which disease causes prolonged bleeding after a minor injury?",
    "Which genes are implicated in Dravet syndrome?",
    "Which genes are associated with Homocystinuria?",
    "Which phenotypes does Hemophilia A have?",
    "Which disease features febrile seizure?",
    "Which diseases present with bifid uvula?",
    "Which genes are linked to diseases featuring febrile seizure?",
]
SYSTEM_PROMPT = "Find the nodes that answer the question with the tools."


def agent_config():
    """One agent, short observations, a short system prompt: small samples for a tiny model."""
    from ark.methods.ark.options import ArkOptions, ToolConfig

    return ArkOptions(n_agents=1, max_steps=8, system_prompt=SYSTEM_PROMPT,
                       tools=ToolConfig(max_observation_chars=200, snippet_chars=20, default_global_size=3))


@pytest.fixture(scope="session")
def clinical_graph():
    return build_clinical_graph()


@pytest.fixture(scope="session")
def teacher_retrievals(clinical_graph):
    """The offline policy (the teacher) on every training question."""
    from ark.methods.ark.api import ARK

    return ARK(clinical_graph, config=agent_config()).retrieve_many(QUESTIONS, concurrency=1)


@pytest.fixture(scope="session")
def teacher_samples(teacher_retrievals):
    return [s for r in teacher_retrievals for s in record_sft_samples(r.to_dict())]


@pytest.fixture(scope="session")
def teacher_dataset(teacher_samples, tmp_path_factory):
    path = tmp_path_factory.mktemp("data") / "train.jsonl"
    write_chat_dataset(path, teacher_samples)
    return path


@pytest.fixture(scope="session")
def tiny_base(teacher_samples, tmp_path_factory):
    """A randomly initialised tiny Qwen3 whose tokenizer was trained on the teacher's chats."""
    pytest.importorskip("transformers")
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    spec = TinyModelSpec(hidden_size=128, head_dim=32, vocab_size=4096, tokenizer_cross_words=True)
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "base", samples=teacher_samples, spec=spec, seed=0)
