"""kar: knowledge-aware query expansion (ARK Table 1's KAR)."""
