"""Running the expansion policy on many query subgraphs at once (Algorithm 1, lines 4–19), in PyTorch.

A :class:`Batch` is G trajectories laid out as one disjoint graph: each question's subgraph is repeated once per
trajectory (M = 8 in training, 1 at inference), with node and edge tensors concatenated. :func:`run_policy`
then plays the T expansion steps for every trajectory together: at step t the candidates are the subgraph
neighbours of the selected set (at most cap_t per trajectory, by the filter's prior), the network runs on the
induced graph of selected + candidate nodes, and c_t candidates are picked, by Gumbel-top-k sampling (training;
the log-probability of the ordered draw without replacement is kept) or by top-c_t (inference). A final pass over
the selected nodes gives their ranking scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from .model import SeederNetwork
from .subgraph import QuerySubgraph

PAD_LOGIT = -1e9  # finite stand-in for -inf in padded candidate rows (keeps gradients free of NaN)


@dataclass
class Batch:
    """G trajectories as one disjoint graph (all tensors on one device)."""

    x: torch.Tensor  # (N, F) node features
    sims: torch.Tensor  # (N,) sim(q, v)
    prior: torch.Tensor  # (N,) filter prior, ranks candidates for the caps
    node_types: torch.Tensor  # (N,) long
    graph: torch.Tensor  # (N,) long, the trajectory each node belongs to
    seeds: torch.Tensor  # (N,) bool
    gold: torch.Tensor  # (N,) bool
    src: torch.Tensor  # (E,) long
    dst: torch.Tensor  # (E,) long
    codes: torch.Tensor  # (E,) long
    edge_sims: torch.Tensor  # (E,) float
    queries: torch.Tensor  # (G, Fq)
    offsets: np.ndarray  # (G + 1,) node offset of each trajectory
    source: np.ndarray  # (G,) which subgraph (position in the collated list) each trajectory came from

    @property
    def num_graphs(self) -> int:
        return len(self.source)

    @property
    def num_nodes(self) -> int:
        return int(self.x.shape[0])


def collate(subgraphs: Sequence[QuerySubgraph], node_features: np.ndarray, node_type_codes: np.ndarray | None,
            repeats: int = 1, device: str | torch.device = "cpu") -> Batch:
    """Lay out ``repeats`` copies of each subgraph (consecutively) as one disjoint graph."""
    xs, sims, priors, types, graphs, seeds, golds = [], [], [], [], [], [], []
    srcs, dsts, codes, edge_sims, queries, offsets = [], [], [], [], [], [0]
    source: list[int] = []  # which subgraph each trajectory copies
    offset = 0
    for position, sub in enumerate(subgraphs):
        feats = np.asarray(node_features[sub.nodes], dtype=np.float32)
        node_types = np.zeros(sub.size, np.int64) if node_type_codes is None else \
            np.asarray(node_type_codes[sub.nodes], dtype=np.int64)
        is_seed = np.zeros(sub.size, bool)
        is_seed[: sub.num_seeds] = True
        is_gold = np.zeros(sub.size, bool)
        is_gold[sub.answers] = True
        for _ in range(repeats):
            g = len(source)
            xs.append(feats)
            sims.append(sub.node_sims)
            priors.append(sub.prior)
            types.append(node_types)
            graphs.append(np.full(sub.size, g, np.int64))
            seeds.append(is_seed)
            golds.append(is_gold)
            srcs.append(sub.edge_src + offset)
            dsts.append(sub.edge_dst + offset)
            codes.append(sub.edge_code)
            edge_sims.append(sub.edge_sims)
            queries.append(sub.query_features)
            offset += sub.size
            offsets.append(offset)
            source.append(position)

    def cat(parts: list[np.ndarray], dtype: torch.dtype) -> torch.Tensor:
        return torch.as_tensor(np.concatenate(parts) if parts else np.zeros(0), dtype=dtype, device=device)

    width = node_features.shape[1]
    return Batch(
        x=torch.as_tensor(np.concatenate(xs) if xs else np.zeros((0, width)), dtype=torch.float32, device=device),
        sims=cat(sims, torch.float32), prior=cat(priors, torch.float32), node_types=cat(types, torch.long),
        graph=cat(graphs, torch.long), seeds=cat(seeds, torch.bool), gold=cat(golds, torch.bool),
        src=cat(srcs, torch.long), dst=cat(dsts, torch.long), codes=cat(codes, torch.long),
        edge_sims=cat(edge_sims, torch.float32),
        queries=torch.as_tensor(np.stack(queries) if queries else np.zeros((0, 1)), dtype=torch.float32,
                                device=device),
        offsets=np.asarray(offsets, np.int64), source=np.asarray(source, np.int64))


def top_per_graph(mask: torch.Tensor, key: torch.Tensor, graph: torch.Tensor, num_graphs: int, cap: int
                  ) -> torch.Tensor:
    """Of the nodes in ``mask``, keep at most ``cap`` per graph: those with the highest ``key`` (ties: lower index)."""
    index = mask.nonzero().squeeze(1)
    if len(index) == 0:
        return mask.clone()
    order = torch.argsort(-key[index], stable=True)
    order = order[torch.argsort(graph[index][order], stable=True)]
    sorted_graph = graph[index][order]
    counts = torch.bincount(sorted_graph, minlength=num_graphs)
    starts = torch.cumsum(counts, 0) - counts
    rank = torch.arange(len(order), device=mask.device) - starts[sorted_graph]
    keep = torch.zeros_like(mask)
    keep[index[order[rank < cap]]] = True
    return keep


def pick_per_graph(logits: torch.Tensor, graph: torch.Tensor, num_graphs: int, count: int, sample: bool,
                   generator: torch.Generator | None = None, temperature: float = 1.0
                   ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Choose ``count`` candidates per graph (fewer if it has fewer).

    ``logits`` and ``graph`` list the candidates grouped by graph in ascending order. With ``sample`` the choice is
    Gumbel-top-k on logits/temperature, an exact draw without replacement from the softmax policy; the returned
    log-probability (per graph) is that of the ordered draw, Σ_i [ℓ_(i) − log Σ_{j ≥ i} exp ℓ_(j)]. Without
    ``sample`` the top ``count`` are taken and the same quantity is returned for them. Returns (chosen mask over the
    candidates, log-probabilities (num_graphs,), entropy of each graph's softmax over its candidates (num_graphs,)).
    """
    device = logits.device
    chosen = torch.zeros(len(logits), dtype=torch.bool, device=device)
    if len(logits) == 0 or count <= 0:
        zeros = torch.zeros(num_graphs, device=device)
        return chosen, zeros, zeros
    counts = torch.bincount(graph, minlength=num_graphs)
    starts = torch.cumsum(counts, 0) - counts
    position = torch.arange(len(logits), device=device) - starts[graph]
    width = int(counts.max())
    scaled = logits / temperature
    padded = torch.full((num_graphs, width), PAD_LOGIT, dtype=scaled.dtype, device=device)
    padded[graph, position] = scaled
    keys = padded.detach()
    if sample:
        uniform = torch.rand(keys.shape, generator=generator, device=device).clamp_(1e-10, 1.0 - 1e-7)
        keys = keys - torch.log(-torch.log(uniform))
    order = torch.argsort(keys, dim=1, descending=True, stable=True)
    ordered = padded.gather(1, order)
    remaining = torch.logcumsumexp(ordered.flip(1), dim=1).flip(1)
    take = torch.clamp(counts, max=count)
    taken = torch.arange(width, device=device).unsqueeze(0) < take.unsqueeze(1)
    log_prob = ((ordered - remaining) * taken).sum(1)
    rows = torch.arange(num_graphs, device=device).unsqueeze(1).expand_as(order)
    chosen[(starts[rows] + order)[taken]] = True
    log_policy = torch.log_softmax(padded, dim=1)
    entropy = -(log_policy.exp() * log_policy).sum(1)
    return chosen, log_prob, entropy


@dataclass
class PolicyRun:
    """What a run of the policy produced for each node of the batch."""

    selected: torch.Tensor  # (N,) bool
    step: torch.Tensor  # (N,) long: 0 seeds, t+1 picked at step t, -1 not selected
    log_prob: torch.Tensor  # (G,) summed over steps
    scores: torch.Tensor  # (N,) final scores (meaningful where selected)
    entropy: torch.Tensor  # (G,) summed over steps: entropy of the policy over each step's candidates


def _encode_active(net: SeederNetwork, batch: Batch, active: torch.Tensor, roles: torch.Tensor
                   ) -> tuple[torch.Tensor, torch.Tensor]:
    index = active.nonzero().squeeze(1)
    remap = torch.full((batch.num_nodes,), -1, dtype=torch.long, device=active.device)
    remap[index] = torch.arange(len(index), device=active.device)
    keep = active[batch.src] & active[batch.dst]
    h = net.encode(batch.x[index], batch.sims[index], roles[index], batch.node_types[index], batch.queries,
                   batch.graph[index], remap[batch.src[keep]], remap[batch.dst[keep]], batch.codes[keep],
                   batch.edge_sims[keep])
    return h, index


def run_policy(net: SeederNetwork, batch: Batch, sizes: Sequence[int], caps: Sequence[int], sample: bool,
               generator: torch.Generator | None = None, temperature: float = 1.0) -> PolicyRun:
    """T = len(sizes) expansion steps from the seeds, then the final scoring pass over the selected nodes."""
    if len(sizes) != len(caps):
        raise ValueError(f"expansion sizes {list(sizes)} and candidate caps {list(caps)} differ in length")
    selected = batch.seeds.clone()
    step = torch.where(selected, 0, -1)
    log_prob = torch.zeros(batch.num_graphs, device=batch.x.device)
    entropy = torch.zeros(batch.num_graphs, device=batch.x.device)
    for t, (count, cap) in enumerate(zip(sizes, caps, strict=True)):
        reached = selected[batch.src] & ~selected[batch.dst]
        frontier = torch.zeros_like(selected)
        frontier[batch.dst[reached]] = True
        candidates = top_per_graph(frontier, batch.prior, batch.graph, batch.num_graphs, cap)
        if not bool(candidates.any()):
            break
        roles = torch.where(selected, step, net.candidate_role(t))
        h, index = _encode_active(net, batch, selected | candidates, roles)
        is_candidate = candidates[index]
        nodes = index[is_candidate]
        logits = net.expansion_logits(h[is_candidate], batch.queries, batch.graph[nodes])
        chosen, step_log_prob, step_entropy = pick_per_graph(logits, batch.graph[nodes], batch.num_graphs, count,
                                                             sample, generator, temperature)
        picked = nodes[chosen]
        selected[picked] = True
        step[picked] = t + 1
        log_prob = log_prob + step_log_prob
        entropy = entropy + step_entropy
    return PolicyRun(selected, step, log_prob, final_scores(net, batch, selected, step), entropy)


def final_scores(net: SeederNetwork, batch: Batch, selected: torch.Tensor, roles: torch.Tensor) -> torch.Tensor:
    """φ over the graph induced by the selected nodes; zeros elsewhere."""
    scores = torch.zeros(batch.num_nodes, device=batch.x.device)
    if not bool(selected.any()):
        return scores
    h, index = _encode_active(net, batch, selected, roles.clamp(min=0))
    return scores.index_put((index,), net.final_scores(h, batch.queries, batch.graph[index]))


def run_rerank(net: SeederNetwork, batch: Batch) -> PolicyRun:
    """The "GNN + K-HOP-W-FILTER" ablation: no expansion, every subgraph node is scored (seeds keep their role)."""
    everything = torch.ones_like(batch.seeds)
    roles = torch.where(batch.seeds, 0, net.candidate_role(0))
    step = torch.where(batch.seeds, 0, 1)
    zeros = torch.zeros(batch.num_graphs, device=batch.x.device)
    return PolicyRun(everything, step, zeros, final_scores(net, batch, everything, roles), zeros)


def rankings(batch: Batch, run: PolicyRun, subgraphs: Sequence[QuerySubgraph], fill: bool = True
             ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per trajectory: global node indices of the selected nodes by final score (ties: earlier selection, then
    prior), followed with ``fill`` by the rest of the subgraph in prior order with scores below every selected one.
    """
    selected = run.selected.cpu().numpy()
    scores = run.scores.detach().cpu().numpy()
    steps = run.step.cpu().numpy()
    prior = batch.prior.cpu().numpy()
    out = []
    for g in range(batch.num_graphs):
        lo, hi = int(batch.offsets[g]), int(batch.offsets[g + 1])
        sub = subgraphs[int(batch.source[g])]
        local_sel = np.flatnonzero(selected[lo:hi])
        order = local_sel[np.lexsort((-prior[lo:hi][local_sel], steps[lo:hi][local_sel],
                                      -scores[lo:hi][local_sel]))]
        nodes, values = sub.nodes[order], scores[lo:hi][order].astype(np.float32)
        if fill:
            rest = np.flatnonzero(~selected[lo:hi])
            rest = rest[np.argsort(-prior[lo:hi][rest], kind="stable")]
            floor = (values.min() if len(values) else 0.0) - 1.0
            nodes = np.concatenate([nodes, sub.nodes[rest]])
            values = np.concatenate([values, floor - np.arange(1, len(rest) + 1, dtype=np.float32) * 1e-3])
        out.append((nodes, values))
    return out
