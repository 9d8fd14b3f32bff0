"""SeedER (seed-and-expand retrieval) and the graph baselines of its Table 1.

Modules, lightest first (only those marked *torch* need the ``seeder`` extra's torch; ``import ark.methods.seeder``
imports nothing heavy):

- ``embeddings``: a graph's node/relation embeddings, query similarities, PCA input features (cached).
- ``expansion``: K-HOP-WITH-FILTERING and 2-hop ego graphs over the CSR arrays.
- ``subgraph``: the per-query search space (:class:`~.subgraph.QuerySubgraph`).
- ``config``: search/training settings, Table 7 presets, Table 2b ablations.
- ``baselines``: PPR, PPR+MMR, beam, A*, PCST (G-Retriever), SubgraphRAG, k-hop-with-filter.
- ``model`` (torch): the sparse graph transformer with its expansion and scoring heads.
- ``rollout`` (torch): batched expansion (Gumbel-top-k sampling / top-c_t) and final scoring.
- ``trainer`` (torch): group REINFORCE + BPR training with validation selection and checkpoints.
- ``store``: the model directory (save, read, compatibility checks; loading weights needs torch).
- ``pipeline``: query files → subgraphs → training → model directory.
- ``method`` (torch): :class:`~.method.SeederMethod`, the trained retriever.
"""
