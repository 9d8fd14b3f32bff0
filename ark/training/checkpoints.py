"""Resumable training checkpoints: ``<dir>/checkpoint-<step>.pt`` written atomically, newest ones kept.

A checkpoint holds whatever state dicts the trainer passes (model, optimiser, scheduler, ...), the step, the
trainer's own metadata (config, best validation score) and the Python, NumPy and torch RNG states, so a resumed
run continues the same random stream. Writes go through a temporary file and a rename: a run killed mid-save
leaves the previous checkpoint intact. Needs torch (the ``train`` extra).
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import numpy as np

from ..storage.atomic import atomic_file

_NAME = re.compile(r"^checkpoint-(\d+)\.pt$")


def rng_state() -> dict[str, Any]:
    """The Python, NumPy and torch (CPU and, when present, CUDA) random states."""
    import torch

    state: dict[str, Any] = {"python": random.getstate(), "numpy": np.random.get_state(),
                             "torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Put back the states captured by :func:`rng_state`."""
    import torch

    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


def checkpoint_path(directory: str | Path, step: int) -> Path:
    return Path(directory) / f"checkpoint-{step:07d}.pt"


def list_checkpoints(directory: str | Path) -> list[tuple[int, Path]]:
    """``(step, path)`` of every checkpoint in ``directory``, oldest first."""
    directory = Path(directory)
    if not directory.is_dir():
        return []
    found = [(int(m.group(1)), p) for p in directory.iterdir() if (m := _NAME.match(p.name))]
    return sorted(found)


def latest_checkpoint(directory: str | Path) -> Path | None:
    """The newest checkpoint in ``directory``, or None."""
    found = list_checkpoints(directory)
    return found[-1][1] if found else None


def save_checkpoint(directory: str | Path, step: int, states: dict[str, Any], meta: dict[str, Any] | None = None,
                    keep: int = 2) -> Path:
    """Write ``states`` (name → state dict) at ``step`` with the RNG states; keep the ``keep`` newest."""
    import torch

    if keep < 1:
        raise ValueError(f"keep must be at least 1, got {keep}")
    path = checkpoint_path(directory, step)
    payload = {"step": int(step), "states": states, "meta": dict(meta or {}), "rng": rng_state()}
    with atomic_file(path, "wb") as handle:
        torch.save(payload, handle)
    for _, old in list_checkpoints(directory)[:-keep]:
        old.unlink(missing_ok=True)
    return path


def load_checkpoint(path: str | Path, restore_rng: bool = True) -> dict[str, Any]:
    """Read a checkpoint (``{"step", "states", "meta", "rng"}``), restoring the RNG states by default."""
    import torch

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    payload = torch.load(path, map_location="cpu", weights_only=False)
    if not isinstance(payload, dict) or "states" not in payload or "step" not in payload:
        raise ValueError(f"{path} is not an ARK training checkpoint (no 'step'/'states')")
    if restore_rng and "rng" in payload:
        restore_rng_state(payload["rng"])
    return payload
