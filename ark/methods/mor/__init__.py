"""MoR: Mixture of Structural-and-Textual Retrieval: plan, traverse and match, rerank (Lei et al. 2025)."""
