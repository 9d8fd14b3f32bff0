"""``import ark.training`` and its modules work without the heavy training libraries installed."""

from __future__ import annotations

import subprocess
import sys

BLOCKED = ("torch", "transformers", "trl", "peft", "datasets", "accelerate", "tokenizers", "safetensors")


def test_training_modules_import_without_torch_and_transformers():
    blocker = "; ".join(f"sys.modules[{name!r}] = None" for name in BLOCKED)  # None makes `import name` fail
    code = (f"import sys; {blocker}; import ark, ark.llm, ark.training; "
            "import ark.training.tiny_model, ark.llm.local_backend, ark.training.sft, "
            "ark.llm.hf_models, ark.llm.tool_calls, ark.methods.ark.distill.imitation, ark.training.datasets, "
            "ark.methods.ark.distill.dataset; "
            "from ark.llm.tool_calls import parse_tool_calls; "
            "assert parse_tool_calls('<tool_call>{\"name\": \"finish\"}</tool_call>')['tool_calls']; "
            "from ark.training.sft import SFTSettings; assert SFTSettings().lora_r == 32; "
            "import importlib.util; assert importlib.util.find_spec('ark') is not None")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_sft_defaults_follow_the_paper_recipe():
    from ark.training.sft import LORA_TARGETS, SFTSettings

    settings = SFTSettings()
    assert (settings.lora, settings.lora_r, settings.lora_alpha, settings.lora_dropout) == (True, 32, 64, 0.1)
    assert settings.learning_rate == 1e-5 and settings.epochs == 1 and settings.max_length == 16384
    assert settings.early_stopping_patience is not None and tuple(settings.target_modules) == LORA_TARGETS
