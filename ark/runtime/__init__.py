"""Run-time plumbing every part shares: atomic writes (``atomic``), crash-safe JSONL files (``jsonl``) and the
records of tool-using runs (``records``)."""
