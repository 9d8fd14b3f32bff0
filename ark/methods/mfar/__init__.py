"""mFAR (Li et al. 2025): multi-field adaptive retrieval with query-conditioned field weights."""
