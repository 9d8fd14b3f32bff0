"""ARK distillation (paper §3.3, §4.3): a teacher's trajectories become a chat dataset, a student is fine-tuned on
them, and the student answers through the same agent loop.

- ``export``: run the teacher (any chat model, or the offline policy) over a query file's training questions with
  the evaluation runner (resumable, with progress), or reuse recorded runs, and write the SFT dataset.
- ``dataset``: teacher records → train/validation chat files split by question; ``imitation``: how closely a
  student's trajectories follow its teacher's. The teacher-vs-student report over two run folders is
  :mod:`ark.experiments.distill_report` (it reads evaluation run folders, a layer above the methods).

Training itself is :func:`ark.training.sft.train_sft`; the student is served by ``--model hf:PATH``
(:mod:`ark.llm.local_backend`) or any OpenAI-compatible server. Torch-based parts need the ``train`` extra.
"""
