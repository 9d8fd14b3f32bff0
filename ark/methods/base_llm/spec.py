"""Registry entry of ``base-llm``: the chat model answers from the question alone."""

from ..base import DEFERRED_BUILD, NoOptions
from ..prompting import prompting_spec


class BaseLLMOptions(NoOptions):
    """``base-llm`` has no options: the question is the whole prompt (GraphScout Appendix A.4)."""

    model_config = DEFERRED_BUILD


METHODS = [
    prompting_spec(
        "base-llm",
        "the chat model answers from the question alone, no graph (GraphScout Table 1's BaseLLM; needs "
        "--model)",
        BaseLLMOptions,
        "ark.methods.base_llm.method:BaseLLM",
        paper="GraphScout (Ying et al.) Appendix A.4: BaseLLM, the model's parametric knowledge only",
    ),
]
