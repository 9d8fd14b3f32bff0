"""SeedER's network: a sparse graph transformer with query injection and edge-type modulation (Appendix D),
an expansion head g and a scoring head φ. Plain PyTorch; runs on CPU or CUDA.

Per layer, for a message j → i with edge feature e_ij (a learned embedding of the relation and its direction),
an edge MLP gives (E^K_ij, E^V_ij) and

    a_ij = Q_iᵀ (K_j ⊙ E^K_ij) / √d + w·sim(q, r_ij),   α_ij = softmax over i's incoming messages,
    h̄_i = Σ_j α_ij (V_j + E^V_ij),   h'_i = FFN(Norm(h_i + h̄_i)),   FFN(x) = x + W₂·GELU(W₁·x).

With ``query_edges`` (default) the edge MLP also reads the query, e_ij = [relation/direction embedding ‖ W_e z_q],
so the modulations say how the relation bears on *this* query (query injection carried onto the edges; without it
our relation-tracing policy could not tell which relation the query asks for at which step). The MLP runs once per
(graph, relation code) pair, a few hundred rows, and is gathered per edge. The query-relation text similarity
sim(q, r) enters as a learned per-head bias on the attention logit.

Input: query injection ``concat`` ([z_v ‖ W_q z_q ‖ cos(q, v)] then a projection) or ``add`` (z_v + W_q z_q then a
projection), plus two small embeddings of our own: the node's *role* (seed, selected at step t, or candidate at
step t: the state the policy acts on) and its node type.

Each addition of ours is a switch (all on by default; ``architecture=paper`` in the training settings turns them all
off, giving Appendix D.2's network exactly): ``role_embeddings``, ``type_embeddings``, ``query_edges``,
``similarity_bias`` (the w·sim(q, r) term), ``self_loops`` (each node also attends to itself through a learned
self-loop code) and ``extra_residual`` (the x + FFN(x) form; off: h' = FFN(Norm(h + h̄)) as the paper writes it).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field
from torch import nn


class Architecture(BaseModel):
    """The network's shape (saved in the model directory)."""

    model_config = ConfigDict(extra="forbid")

    node_dim: int = Field(256, gt=0, description="Node feature size (Table 7: PCA dimension 256).")
    query_dim: int = Field(256, gt=0, description="Query feature size.")
    hidden: int = Field(16, gt=0, description="Hidden dimension (Table 7: 16 PRIME, 32 MAG, 64 Amazon).")
    layers: int = Field(3, ge=1, description="Number of GNN layers (Table 7: 3 PRIME, 4 MAG, 3 Amazon).")
    heads: int = Field(1, ge=1, description="Attention heads (hidden must be divisible by it).")
    dropout: float = Field(0.1, ge=0.0, lt=1.0, description="Dropout (Table 7: 0.1).")
    injection: Literal["concat", "add"] = Field("concat", description="Query injection (Appendix D.1).")
    num_relation_codes: int = Field(2, ge=1, description="2 × the graph's relation types (both directions).")
    num_node_types: int = Field(1, ge=1, description="The graph's node types.")
    horizon: int = Field(2, ge=0, description="Expansion steps T (roles: seed, selected at / candidate at step t).")
    edge_dim: int = Field(16, gt=0, description="Size of the learned relation/direction embedding.")
    query_edges: bool = Field(True, description="Condition the edge MLP on the query as well (ours).")
    role_embeddings: bool = Field(True, description="Add a learned embedding of the node's role (ours).")
    type_embeddings: bool = Field(True, description="Add a learned embedding of the node's type (ours).")
    similarity_bias: bool = Field(True, description="Per-head bias w·sim(q, r) on the attention logit (ours).")
    self_loops: bool = Field(True, description="Self-loop messages with their own edge code (ours).")
    extra_residual: bool = Field(True, description="FFN(x) = x + W2·GELU(W1·x) (ours); off: the paper's "
                                 "h' = FFN(Norm(h + h̄)) without the residual around the FFN.")


def segment_softmax(scores: torch.Tensor, index: torch.Tensor, size: int) -> torch.Tensor:
    """Softmax of ``scores`` (E, H) over the entries sharing the same ``index`` (their target node)."""
    expanded = index.unsqueeze(-1).expand_as(scores)
    peak = torch.full((size, scores.shape[1]), float("-inf"), dtype=scores.dtype, device=scores.device)
    peak = peak.scatter_reduce(0, expanded, scores, reduce="amax", include_self=True)
    weights = torch.exp(scores - peak.gather(0, expanded))
    total = torch.zeros((size, scores.shape[1]), dtype=scores.dtype, device=scores.device).index_add_(0, index,
                                                                                                      weights)
    return weights / total.gather(0, expanded).clamp_min(1e-16)


class EdgeModulatedAttention(nn.Module):
    """One sparse transformer layer with edge-type modulation of keys and values."""

    def __init__(self, hidden: int, heads: int, edge_in: int, dropout: float, *, similarity_bias: bool = True,
                 extra_residual: bool = True) -> None:
        super().__init__()
        self.extra_residual = extra_residual
        if hidden % heads:
            raise ValueError(f"hidden ({hidden}) must be divisible by heads ({heads})")
        self.heads, self.head_dim = heads, hidden // heads
        self.qkv = nn.Linear(hidden, 3 * hidden)
        self.edge = nn.Sequential(nn.Linear(edge_in, hidden), nn.GELU(), nn.Linear(hidden, 2 * hidden))
        self.relation_bias = nn.Parameter(torch.zeros(heads)) if similarity_bias else None
        self.norm = nn.LayerNorm(hidden)
        self.ffn = nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(2 * hidden, hidden))
        self.dropout = nn.Dropout(dropout)

    def forward(self, h: torch.Tensor, src: torch.Tensor, dst: torch.Tensor, rows: torch.Tensor,
                edge_table: torch.Tensor, edge_sims: torch.Tensor) -> torch.Tensor:
        """``edge_table`` holds the edge features of each distinct (graph, code) pair, ``rows`` each edge's row."""
        n, shape = h.shape[0], (-1, self.heads, self.head_dim)
        edge_key, edge_value = self.edge(edge_table).chunk(2, dim=-1)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        q = q[dst].view(shape)
        k = (k[src] * edge_key[rows]).view(shape)
        v = (v[src] + edge_value[rows]).view(shape)
        logits = (q * k).sum(-1) / math.sqrt(self.head_dim)
        if self.relation_bias is not None:
            logits = logits + edge_sims.unsqueeze(-1) * self.relation_bias
        alpha = segment_softmax(logits, dst, n)
        messages = (alpha.unsqueeze(-1) * v).reshape(len(src), -1)
        aggregated = torch.zeros_like(h).index_add_(0, dst, messages)
        x = self.norm(h + self.dropout(aggregated))
        return x + self.dropout(self.ffn(x)) if self.extra_residual else self.dropout(self.ffn(x))


class SeederNetwork(nn.Module):
    """Backbone + expansion head (one logit per frontier node) + scoring head (two-class logits)."""

    def __init__(self, arch: Architecture) -> None:
        super().__init__()
        self.arch = arch
        d = arch.hidden
        self.query_map = nn.Linear(arch.query_dim, arch.node_dim, bias=False)  # W_q
        width = 2 * arch.node_dim + 1 if arch.injection == "concat" else arch.node_dim
        self.input = nn.Sequential(nn.Linear(width, d), nn.GELU(), nn.Linear(d, d))
        self.roles = nn.Embedding(2 * arch.horizon + 2, d) if arch.role_embeddings else None
        self.types = nn.Embedding(arch.num_node_types, d) if arch.type_embeddings else None
        self.self_loop_code = arch.num_relation_codes
        self.edge_codes = nn.Embedding(arch.num_relation_codes + int(arch.self_loops), arch.edge_dim)
        self.edge_query = nn.Linear(arch.query_dim, arch.edge_dim) if arch.query_edges else None
        edge_in = 2 * arch.edge_dim if arch.query_edges else arch.edge_dim
        self.layers = nn.ModuleList(EdgeModulatedAttention(d, arch.heads, edge_in, arch.dropout,
                                                           similarity_bias=arch.similarity_bias,
                                                           extra_residual=arch.extra_residual)
                                    for _ in range(arch.layers))
        self.head_query = nn.Linear(arch.query_dim, d)
        self.expand_head = nn.Sequential(nn.Linear(2 * d, d), nn.GELU(), nn.Linear(d, 1))
        self.score_head = nn.Sequential(nn.Linear(2 * d, d), nn.GELU(), nn.Linear(d, 2))

    def candidate_role(self, step: int) -> int:
        """Role code of a frontier candidate at expansion step ``step`` (0-based); seeds are 0, nodes selected at
        step t are t + 1."""
        return self.arch.horizon + 1 + step

    def encode(self, x: torch.Tensor, sims: torch.Tensor, roles: torch.Tensor, node_types: torch.Tensor,
               queries: torch.Tensor, graph: torch.Tensor, src: torch.Tensor, dst: torch.Tensor,
               codes: torch.Tensor, edge_sims: torch.Tensor) -> torch.Tensor:
        """Node states (N, hidden). ``queries`` holds one query feature row per graph, ``graph`` each node's."""
        injected = self.query_map(queries)[graph]
        if self.arch.injection == "concat":
            h = self.input(torch.cat([x, injected, sims.unsqueeze(-1)], dim=-1))
        else:
            h = self.input(x + injected)
        if self.roles is not None:
            h = h + self.roles(roles)
        if self.types is not None:
            h = h + self.types(node_types)
        if self.arch.self_loops:
            n = x.shape[0]
            loops = torch.arange(n, device=x.device)
            src = torch.cat([src, loops])
            dst = torch.cat([dst, loops])
            codes = torch.cat([codes, torch.full((n,), self.self_loop_code, dtype=codes.dtype, device=x.device)])
            edge_sims = torch.cat([edge_sims, torch.zeros(n, dtype=edge_sims.dtype, device=x.device)])
        if self.edge_query is None:
            rows, table = codes, self.edge_codes.weight
        else:  # one row per (graph, code) pair that occurs
            num_codes = self.arch.num_relation_codes + int(self.arch.self_loops)
            pairs, rows = torch.unique(graph[dst] * num_codes + codes, return_inverse=True)
            table = torch.cat([self.edge_codes(pairs % num_codes), self.edge_query(queries)[pairs // num_codes]], -1)
        for layer in self.layers:
            h = layer(h, src, dst, rows, table, edge_sims)
        return h

    def expansion_logits(self, h: torch.Tensor, queries: torch.Tensor, graph: torch.Tensor) -> torch.Tensor:
        """g(h_u, z_q): one logit per node (``queries`` one row per graph, ``graph`` each node's)."""
        return self.expand_head(torch.cat([h, self.head_query(queries)[graph]], dim=-1)).squeeze(-1)

    def final_scores(self, h: torch.Tensor, queries: torch.Tensor, graph: torch.Tensor) -> torch.Tensor:
        """φ(h_v, z_q) as a scalar: the two-class logit difference logit(v, 1) − logit(v, 0) (Appendix D.5)."""
        logits = self.score_head(torch.cat([h, self.head_query(queries)[graph]], dim=-1))
        return logits[:, 1] - logits[:, 0]


# Section 5 (Latency and Memory): "SeedER ... using only 1.1M trainable parameters" (STaRK-PRIME, Table 7's shape).
PAPER_PARAMETERS = 1_100_000


def count_parameters(module: nn.Module) -> int:
    """Trainable parameters of ``module``."""
    return sum(p.numel() for p in module.parameters() if p.requires_grad)
