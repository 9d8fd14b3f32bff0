"""tog: Think-on-Graph adapted for retrieval (SeedER Table 3's ToG, after Yu et al. 2025)."""
