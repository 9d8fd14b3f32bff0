"""Settings of one ARK run: agents, steps, fusion and the tool configuration."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ark.tools import ToolConfig

from .fusion import FUSIONS


class AgentConfig(BaseModel):
    """How ARK explores: the paper's defaults are 3 agents, 20 steps, vote fusion."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n_agents: int = Field(default=3, ge=1)
    max_steps: int = Field(default=20, ge=1)
    fusion: str = "votes"
    fusion_seed: int = 0
    tool_choice: str = "required"
    system_prompt: str | None = None  # None: rendered from the graph (ark/agent/system_prompt.md)
    tools: ToolConfig = Field(default_factory=ToolConfig)

    @field_validator("fusion")
    @classmethod
    def _known_fusion(cls, value: str) -> str:
        if value not in FUSIONS:
            raise ValueError(f"unknown fusion {value!r}; valid: {', '.join(FUSIONS)}")
        return value
