"""graph_cot (a prompting baseline of GraphScout's Table 1)."""
