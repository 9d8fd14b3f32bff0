"""SeedER's policy on the paper's relation-tracing graphs (Appendix B.1): it composes local steps on queries it
never saw, where a dense scorer of the same dimension, trained to convergence, cannot."""

from __future__ import annotations

import time

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ark.methods.seeder.config import train_settings  # noqa: E402
from ark.methods.seeder.trainer import PolicyTrainer, predict  # noqa: E402
from tests.support.relation_tracing import make_task, sample_queries, tracing_subgraph  # noqa: E402

DIM = 32  # node feature size, the policy's hidden size and the dense scorer's embedding size
# Held-out Hit@1 the policy must reach (training seed 0; 200 test queries). Seeded runs repeat exactly only within
# one torch build on one CPU: another build's kernels round differently, the policy's Gumbel-top-k samples then
# differ from the first step on, and training takes another path. Measured with seed 0: 0.945 here (torch 2.13 CPU,
# 2-core x86), 0.895 on another machine (torch 2.11); seeds 1-3 here: 1.000, 0.930, 0.950. So the bar sits below the
# spread of seeds and builds, and far above the dense scorer's (<= 0.3, measured 0.005): the contrast is the claim.
POLICY_MIN_HIT = 0.8
DENSE_MAX_HIT = 0.3


@pytest.fixture(scope="module")
def task_and_queries():
    task = make_task(n=1000, k=3, dim=DIM, max_length=2, seed=0)
    rng = np.random.default_rng(1)
    test = sample_queries(task, 200, rng)
    val = sample_queries(task, 100, rng, exclude=set(test))
    train = sample_queries(task, 1000, rng, exclude=set(test) | set(val))
    return task, train, val, test


def _dense_hit_at_1(task, train, test) -> float:
    """Two MLP towers (query → R^DIM, node features → R^DIM), softmax over all nodes, trained full-batch until they
    fit every training query (Hit@1 = 1 and loss < 0.05, i.e. converged); Hit@1 on the held-out queries."""
    torch.manual_seed(0)
    queries = lambda qs: torch.tensor(np.stack([task.query_features(s, r) for s, r in qs]))  # noqa: E731
    answers = lambda qs: torch.tensor([task.answer(s, r) for s, r in qs])  # noqa: E731
    q_train, a_train, q_test, a_test = queries(train), answers(train), queries(test), answers(test)
    nodes = torch.tensor(task.features)
    query_tower = torch.nn.Sequential(torch.nn.Linear(q_train.shape[1], 128), torch.nn.GELU(),
                                      torch.nn.Linear(128, DIM))
    node_tower = torch.nn.Sequential(torch.nn.Linear(DIM, 128), torch.nn.GELU(), torch.nn.Linear(128, DIM))
    optimiser = torch.optim.Adam([*query_tower.parameters(), *node_tower.parameters()], lr=3e-3)
    converged = False
    for step in range(2000):
        logits = query_tower(q_train) @ node_tower(nodes).T
        loss = torch.nn.functional.cross_entropy(logits, a_train)
        if step % 25 == 0 and loss.item() < 0.05 and bool((logits.argmax(1) == a_train).all()):
            converged = True
            break
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    assert converged, f"the dense scorer did not fit its training queries (loss {loss.item():.3f})"
    with torch.no_grad():
        return float(((query_tower(q_test) @ node_tower(nodes).T).argmax(1) == a_test).float().mean())


def test_policy_traces_relations_where_dense_retrieval_cannot(task_and_queries):
    task, train, val, test = task_and_queries
    torch.set_num_threads(1)
    started = time.perf_counter()
    train_graphs = [tracing_subgraph(task, s, r) for s, r in train]
    val_graphs = [tracing_subgraph(task, s, r) for s, r in val]
    test_graphs = [tracing_subgraph(task, s, r) for s, r in test]
    # One expansion per step (c_t = 1, T = 2 = the longest path); Table 7's batch size 16; a small entropy bonus
    # keeps the policy exploring until it has tied each query position to its step.
    settings = train_settings("prime", overrides={
        "search": {"seeds": 1, "sizes": [1, 1], "caps": [20, 20]}, "hidden": DIM, "layers": 2, "dropout": 0.0,
        "epochs": 6, "warmup_epochs": 0.2, "lr": 6e-3, "entropy_weight": 0.05, "select_metric": "hit@1",
        "seed": 0})
    trainer = PolicyTrainer(settings, task.features, train_graphs, val_graphs,
                            num_relation_codes=2 * len(task.graph.relation_types), progress=False, log=lambda _: None)
    network = trainer.fit().network
    ranked = predict(network, test_graphs, task.features, None, settings)
    policy_hit = np.mean([nodes[0] == sub.gold[0] for (nodes, _), sub in zip(ranked, test_graphs, strict=True)])
    dense_hit = _dense_hit_at_1(task, train, test)
    print(f"relation tracing: policy Hit@1 {policy_hit:.3f}, dense Hit@1 {dense_hit:.3f}, "
          f"{time.perf_counter() - started:.1f} s")  # the time is reported (pytest -s), not asserted: shared CPUs
    assert policy_hit >= POLICY_MIN_HIT, f"policy Hit@1 {policy_hit:.3f} on held-out relation-tracing queries"
    assert dense_hit <= DENSE_MAX_HIT, f"dense Hit@1 {dense_hit:.3f}: the task should be beyond a dense scorer"
