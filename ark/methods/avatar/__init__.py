"""AvaTaR: an actor with ARK's retrieval tools whose instructions a comparator improves (Wu et al. 2024)."""
