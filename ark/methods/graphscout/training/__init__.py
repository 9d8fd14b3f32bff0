"""GRPO training of the GraphScout solver (GraphScout §3.4.3, Appendix A.5, Table 3) with TRL's ``GRPOTrainer``.

- :mod:`.settings`: :class:`GRPOSettings` (the paper's Table 3 defaults; ours where it is silent);
- :mod:`.environment`: the per-rollout TRL environment around the solver's two tools (one sandbox per rollout);
- :mod:`.data`: quiz questions → GRPO prompts, and scripted-solver trajectories → SFT warm-start samples;
- :mod:`.reward_function`: the answer-and-clue reward as a TRL reward function;
- :mod:`.trainer`: :func:`train_graphscout`, what ``ark train graphscout`` runs.

Needs the ``train`` and ``graphdb`` extras; nothing here is imported by ``import ark``.
"""
