"""One chosen method with its validated options and run context: what the command line, the evaluation harness
and the servers build, record in a run's config, and compare on resume."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base import MethodContext, MethodOptions
from .options import options_dict
from .presets import preset_of
from .registry import MethodSpec, get_method_spec

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from .base import Retriever


@dataclass
class MethodChoice:
    """A method by name, its options (validated against its options model) and the run context."""

    name: str
    options: MethodOptions
    context: MethodContext = field(default_factory=MethodContext)

    @classmethod
    def make(cls, name: str, options: Mapping[str, Any] | MethodOptions | None = None,
             context: MethodContext | None = None, preset: str | None = None) -> MethodChoice:
        """Look ``name`` up in the registry and validate ``options`` over ``preset``'s (``MethodError`` on
        either)."""
        spec = get_method_spec(name)
        return cls(name, spec.make_options(options, preset=preset), context or MethodContext())

    @property
    def spec(self) -> MethodSpec:
        return get_method_spec(self.name)

    @property
    def llm_name(self) -> str | None:
        """The chat model the method uses (``offline`` when an LLM method runs without one), None for others."""
        if not self.spec.uses_llm:
            return None
        llm = self.context.llm
        return "offline" if llm is None else str(getattr(llm, "name", type(llm).__name__))

    def config(self) -> dict[str, Any]:
        """The run-config entries that determine this method's results (checked when a run is resumed); the
        options preset (``preset``) only when one was applied, so that configs made before presets compare equal."""
        recorded = {
            "method": self.name,
            "method_options": options_dict(self.options),
            "llm": self.llm_name,
            "candidate_types": list(self.context.candidate_types) if self.context.candidate_types else None,
            "seed": self.context.seed,
            "allow_partial": self.context.allow_partial,
        }
        preset = preset_of(self.options)
        return {**recorded, "preset": preset} if preset else recorded

    def build(self, graph: KnowledgeGraph) -> Retriever:
        return self.spec.load_factory()(graph, self.options, self.context)
