"""Registry entry of ``base-llm``: the chat model answers from the question alone."""

from ..base import DEFERRED_BUILD, NoOptions
from ..registry import MethodSpec


class BaseLLMOptions(NoOptions):
    """``base-llm`` has no options: the question is the whole prompt (GraphScout Appendix A.4)."""

    model_config = DEFERRED_BUILD


METHODS = [
    MethodSpec(
        name="base-llm",
        summary="the chat model answers from the question alone, no graph (GraphScout Table 1's BaseLLM; needs "
                "--model)",
        options=BaseLLMOptions,
        factory="ark.methods.base_llm.method:BaseLLM",
        family="base_llm",
        uses_llm=True,
        offline=False,
        docs="docs/methods/base-llm.md",
        paper="GraphScout (Ying et al.) Appendix A.4: BaseLLM, the model's parametric knowledge only",
    ),
]
