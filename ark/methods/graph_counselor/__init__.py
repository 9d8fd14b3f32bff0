"""graph_counselor (a prompting baseline of GraphScout's Table 1)."""
