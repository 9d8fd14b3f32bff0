"""Ranking losses over packed minibatches (torch, imported inside the functions)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch import Tensor


def pairwise_ranking_loss(scores: Tensor, selected: Tensor, gold: Tensor, graph: Tensor,
                          num_graphs: int, kind: str = "bpr", margin: float = 0.5) -> Tensor:
    """Mean over (answer, non-answer) pairs inside each trajectory's selected set of −log σ(Δ) (``bpr``) or
    softplus(γ − Δ) (``margin``), Δ = s_pos − s_neg; zero (with a graph) when no trajectory has such a pair.

    ``graph[i]`` says which of ``num_graphs`` trajectories node row ``i`` belongs to (a minibatch packed as one
    disjoint graph); pairs never cross trajectories.
    """
    import torch
    import torch.nn.functional as F

    index = selected.nonzero().squeeze(1)
    if len(index) == 0:
        return scores.sum() * 0.0
    owner = graph[index]
    counts = torch.bincount(owner, minlength=num_graphs)
    position = torch.arange(len(index), device=scores.device) - (torch.cumsum(counts, 0) - counts)[owner]
    width = int(counts.max())
    table = torch.zeros((num_graphs, width), device=scores.device)
    positive = torch.zeros((num_graphs, width), dtype=torch.bool, device=scores.device)
    negative = torch.zeros_like(positive)
    table[owner, position] = scores[index]
    positive[owner, position] = gold[index]
    negative[owner, position] = ~gold[index]
    pairs = positive.unsqueeze(2) & negative.unsqueeze(1)
    if not bool(pairs.any()):
        return scores.sum() * 0.0
    delta = (table.unsqueeze(2) - table.unsqueeze(1))[pairs]
    return F.softplus(-delta).mean() if kind == "bpr" else F.softplus(margin - delta).mean()
