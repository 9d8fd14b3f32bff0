"""Registry entry of ``avatar``: an actor driving ARK's retrieval tools with instructions that ``ark train avatar``
optimised by contrasting training queries it answered well with those it answered badly."""

from typing import ClassVar

from pydantic import Field

from ..base import DEFERRED_BUILD, MethodOptions
from ..model_folder import model_folder_field
from ..prompting import prompting_spec


class AvatarOptions(MethodOptions):
    """Where the optimised instructions are and how long the actor may explore."""

    REQUEST_OPTIONS: ClassVar[tuple[str, ...]] = ("max_steps",)  # not the model folder

    model_config = DEFERRED_BUILD

    model: str | None = model_folder_field("avatar")
    max_steps: int | None = Field(default=None, ge=1, description="actor steps per question (default: the number "
                                                                  "the instructions were optimised with)")


METHODS = [
    prompting_spec(
        "avatar",
        "AvaTaR: a tool-using actor (ARK's global search and neighbourhood tools) whose instructions a comparator "
        "model improved on training queries, contrasting those answered well with those answered badly (ARK "
        "Table 1's AvaTaR; needs --model and a folder from `ark train avatar`)",
        AvatarOptions,
        "ark.methods.avatar.method:AvatarRetriever",
        paper="Wu et al., AvaTaR: Optimizing LLM Agents for Tool Usage via Contrastive Reasoning (NeurIPS 2024)",
    ),
]
