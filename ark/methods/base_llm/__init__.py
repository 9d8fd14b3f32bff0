"""base_llm (a prompting baseline of GraphScout's Table 1)."""
