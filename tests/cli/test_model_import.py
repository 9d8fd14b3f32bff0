"""`ark model import PATH.gguf` converts a GGUF file once to a saved Hugging Face folder under ARK_HOME (by digest):
a tiny random llama written as GGUF by the `gguf` package (skipped without it), read back by transformers."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app

gguf = pytest.importorskip("gguf", reason="the GGUF writer: pip install gguf")
np = pytest.importorskip("numpy")
pytest.importorskip("transformers")
pytestmark = pytest.mark.usefixtures("isolated_env")

VOCAB, DIM, FF = 32, 16, 32


def write_tiny_llama_gguf(path: Path) -> Path:
    """A one-layer llama with a byte-level BPE vocabulary, float32 tensors (transformers dequantizes any type)."""
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(64)
    writer.add_embedding_length(DIM)
    writer.add_block_count(1)
    writer.add_feed_forward_length(FF)
    writer.add_head_count(2)
    writer.add_head_count_kv(2)
    writer.add_rope_dimension_count(DIM // 2)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(VOCAB)
    tokens = ["<s>", "</s>", *(chr(ord("a") + i) for i in range(26)), "ab", "bc", "cd", "de"]
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types([1] * VOCAB)
    writer.add_token_merges(["a b", "b c", "c d", "d e"])
    writer.add_bos_token_id(0)
    writer.add_eos_token_id(1)
    rng = np.random.default_rng(0)

    def weights(*shape: int):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    writer.add_tensor("token_embd.weight", weights(VOCAB, DIM))
    writer.add_tensor("output_norm.weight", np.ones(DIM, np.float32))
    writer.add_tensor("output.weight", weights(VOCAB, DIM))
    writer.add_tensor("blk.0.attn_norm.weight", np.ones(DIM, np.float32))
    writer.add_tensor("blk.0.ffn_norm.weight", np.ones(DIM, np.float32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        writer.add_tensor(f"blk.0.{name}.weight", weights(DIM, DIM))
    writer.add_tensor("blk.0.ffn_gate.weight", weights(FF, DIM))
    writer.add_tensor("blk.0.ffn_up.weight", weights(FF, DIM))
    writer.add_tensor("blk.0.ffn_down.weight", weights(DIM, FF))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_gguf_file_converts_once_to_a_folder_transformers_loads(tmp_path):
    from transformers import AutoModelForCausalLM

    source = write_tiny_llama_gguf(tmp_path / "tiny.gguf")
    first = CliRunner().invoke(app, ["model", "import", str(source)])
    assert first.exit_code == 0, first.output
    assert first.stdout.startswith("converted ")
    folder = Path(first.stdout.split(" ", 1)[1].strip())
    assert folder.parent.name == "models" and folder.name.startswith("gguf-")
    model = AutoModelForCausalLM.from_pretrained(folder)  # a plain float checkpoint: no gguf_file, no quantizer
    assert model.config.vocab_size == VOCAB and getattr(model.config, "quantization_config", None) is None
    again = CliRunner().invoke(app, ["model", "import", str(source)])
    assert again.exit_code == 0 and again.stdout == f"already converted {folder}\n"


def test_a_file_that_is_not_gguf_is_refused_in_one_line(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_text("not a model")
    result = CliRunner().invoke(app, ["model", "import", str(fake)])
    assert result.exit_code != 0 and "is not a GGUF file" in result.output
