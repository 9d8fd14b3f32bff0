"""polyg (a prompting baseline of GraphScout's Table 1)."""
