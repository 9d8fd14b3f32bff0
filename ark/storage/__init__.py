"""Files every part writes and reads, the bottom layer: atomic writes (``atomic``: a write replaces its target whole),
crash-safe JSON-lines files (``jsonl``) and one-writer locks on outputs (``locks``). Imports nothing from ARK."""
