"""Files every part writes and reads, the bottom layer: atomic writes (``atomic``: a write replaces its target whole),
crash-safe JSON-lines files (``jsonl``), one-writer locks on outputs (``locks``) and the working-memory budget of a
build (``memory``). Imports nothing from ARK."""
