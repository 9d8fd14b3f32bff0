"""The training home, shared by every learned method (needs the ``train`` extra for torch-based parts).

- ``rewards``: set-level rewards built on :mod:`ark.metrics` (Recall@Any, set F1).
- ``rollouts``: groups of sampled trajectories per question and their group-relative advantages.
- ``datasets``: chat-format training files (``{"messages", "tools"}`` per line) with validation and statistics.
- ``checkpoints``: atomic, resumable training checkpoints (model, optimiser, scheduler, RNG states, step).

Method-specific trainers live in their method's folder (``ark/methods/<family>/``) and import from here.
"""
