"""The options of the ``mfar`` method (light: imported by ``ark methods`` and option validation)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ..base import MethodOptions
from ..model_folder import model_folder_field


class MfarOptions(MethodOptions):
    """Which trained model to use and how many candidates each field contributes."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = ("candidates",)  # not the model folder

    model: str | None = model_folder_field("mfar")
    candidates: int = Field(default=100, ge=1, le=2000, description="top nodes each field's scorer contributes to "
                                                                    "the candidate pool that the weights rank")
