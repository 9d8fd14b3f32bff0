"""The training home, shared by every learned method (needs the ``train`` extra for torch-based parts).

- ``rewards``: set-level rewards built on :mod:`ark.metrics` (Recall@Any, set F1).
- ``rollouts``: groups of sampled trajectories per question and their group-relative advantages.
- ``datasets``: chat-format training files (``{"messages", "tools"}`` per line) with validation and statistics.
- ``losses``: pairwise ranking losses (BPR, margin) over trajectories packed as one disjoint graph.
- ``checkpoints``: atomic, resumable training checkpoints (model, optimiser, scheduler, RNG states, step).
- ``tiny_model``: tiny Qwen3 models built from a config with a BPE tokenizer trained offline (pipeline checks).
- ``sft``: LoRA (or full) supervised fine-tuning with TRL, assistant-only loss, merged export.

The local chat back-end (``--model hf:PATH``) and the model helpers it shares with training (``hf_models``,
``tool_calls``) live in :mod:`ark.llm`; ARK's distillation data in :mod:`ark.methods.ark.distill`.

Every module imports without the ``train`` extra; torch and the Hugging Face libraries load inside the functions
that need them.

Method-specific trainers live in their method's folder (``ark/methods/<family>/``) and import from here.
"""
