"""text_rag (a prompting baseline of GraphScout's Table 1)."""
