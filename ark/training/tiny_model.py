"""Tiny Qwen3-architecture causal LMs built from a config, with a byte-level BPE tokenizer trained offline.

No weights are downloaded: the model is randomly initialised from ``Qwen3Config`` under a seed, and the tokenizer is
a byte-level BPE (``tokenizers``) trained on the given texts, typically the rendered chats of a training set. Its
chat template (``templates/tool_chat.jinja``) renders tool schemas and Qwen-style ``<tool_call>{json}</tool_call>``
calls and carries ``{% generation %}`` markers, so TRL's assistant-only loss works without swapping templates.
The result is an ordinary Hugging Face folder that ``AutoModelForCausalLM`` / ``AutoTokenizer`` load. These models
exist to prove the training and serving pipeline end to end; their figures are pipeline checks, not model results.

Needs the ``train`` extra (torch, transformers, tokenizers).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

PAD_TOKEN = "<|endoftext|>"
TURN_START = "<|im_start|>"
TURN_END = "<|im_end|>"
SPECIAL_TOKENS = (PAD_TOKEN, TURN_START, TURN_END)
# Markup the template writes around tools; single tokens (not special: they survive decoding) so they stay intact.
MARKUP_TOKENS = ("<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>")


@dataclass(frozen=True)
class TinyModelSpec:
    """Size of a tiny Qwen3 model. The defaults train a few thousand tokens per second on two CPU cores."""

    hidden_size: int = 64
    num_hidden_layers: int = 2
    num_attention_heads: int = 4
    num_key_value_heads: int = 2
    head_dim: int = 16
    intermediate_size: int = 256
    vocab_size: int = 2048
    tokenizer_cross_words: bool = False  # BPE merges may span words (see train_tokenizer)
    tokenizer_max_token_length: int | None = None
    tokenizer_isolate: tuple[str, ...] = ()  # cross-word BPE: regexes whose matches are pieces of their own
    max_position_embeddings: int = 16384
    tie_word_embeddings: bool = True


def tool_chat_template() -> str:
    """The chat template of tiny models (tools, tool calls, tool responses, generation markers)."""
    return resources.files("ark.training").joinpath("templates/tool_chat.jinja").read_text(encoding="utf-8")


def _sample_tools(sample: Mapping[str, Any]) -> list[dict] | None:
    tools = sample.get("tools")
    return json.loads(tools) if isinstance(tools, str) else tools


def _byte_level_tokenizer(vocab: dict[str, int] | None = None, merges: list | None = None,
                          cross_words: bool = False, isolate: tuple[str, ...] = ()):
    r"""A byte-level BPE. ``cross_words``: merges may span spaces and punctuation (never a newline), so phrases
    repeated in the corpus become single tokens; otherwise the GPT-2 word split applies. ``isolate`` (cross-word
    only): regexes whose matches are pieces of their own, e.g. ``'"'`` and ``r'\d+'`` so that a JSON string or a
    number in a tool call is cut into the same tokens as the same text in the question or an observation (a model
    copying it then repeats tokens it has seen)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    if cross_words:
        # A newline is always its own piece: the generation prompt ends with one, so the first token the model
        # writes never has to be fused with the prompt's last character.
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split("\n", behavior="isolated"),
            *(pre_tokenizers.Split(Regex(pattern), behavior="isolated") for pattern in isolate),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    else:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tokenizer.decoder = decoders.ByteLevel()
    return tokenizer


def _wrap(tokenizer_object, chat_template: str):
    """A transformers fast tokenizer around a ``tokenizers.Tokenizer`` with our special tokens and template."""
    from tokenizers import AddedToken
    from transformers import PreTrainedTokenizerFast

    tokenizer_object.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in SPECIAL_TOKENS])
    tokenizer_object.add_tokens([AddedToken(t, special=False, normalized=False) for t in MARKUP_TOKENS])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer_object, eos_token=TURN_END, pad_token=PAD_TOKEN,
                                   chat_template=chat_template, clean_up_tokenization_spaces=False)


def render_chats(samples: Iterable[Mapping[str, Any]], chat_template: str | None = None) -> list[str]:
    """Each chat sample (``{"messages", "tools"}``) rendered as text by ``chat_template`` (default: ours)."""
    template = chat_template or tool_chat_template()
    # A byte-only tokenizer is enough to run the template: rendering does not depend on the merges.
    renderer = _wrap(_byte_level_tokenizer(vocab={}, merges=[]), template)
    return [renderer.apply_chat_template(list(s["messages"]), tools=_sample_tools(s), tokenize=False)
            for s in samples]


def train_tokenizer(texts: Iterable[str], vocab_size: int = 2048, chat_template: str | None = None,
                    cross_words: bool = False, max_token_length: int | None = None, isolate: tuple[str, ...] = ()):
    """A byte-level BPE tokenizer trained on ``texts`` (deterministic for the same texts and size).

    Any byte sequence stays encodable (the 256 byte symbols are always in the vocabulary), so text the training set
    never showed only costs more tokens. ``cross_words`` lets merges span words (short sequences on a small,
    repetitive corpus: good for memorisation checks, worse for new text); ``max_token_length`` caps a token's
    characters; ``isolate``: see :func:`_byte_level_tokenizer`. Returns a ``PreTrainedTokenizerFast`` with our chat
    template.
    """
    from tokenizers import pre_tokenizers, trainers

    special = list(SPECIAL_TOKENS) + list(MARKUP_TOKENS)
    minimum = 256 + len(special)
    if vocab_size < minimum:
        raise ValueError(f"vocab_size must be at least {minimum} (bytes + special tokens), got {vocab_size}")
    tokenizer = _byte_level_tokenizer(cross_words=cross_words, isolate=tuple(isolate))
    trainer = trainers.BpeTrainer(vocab_size=vocab_size - len(special), min_frequency=2, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[],
                                  max_token_length=max_token_length)
    # Markup and special tokens are cut out before training so that no merge straddles them.
    cut = [text for text in texts]
    for token in special:
        cut = [piece for text in cut for piece in text.split(token)]
    tokenizer.train_from_iterator(cut, trainer=trainer)
    return _wrap(tokenizer, chat_template or tool_chat_template())


def tiny_qwen3_config(tokenizer, spec: TinyModelSpec = TinyModelSpec()):
    """A ``Qwen3Config`` of ``spec``'s size whose vocabulary and special ids match ``tokenizer``."""
    from transformers import Qwen3Config

    eos = tokenizer.convert_tokens_to_ids(TURN_END)
    pad = tokenizer.convert_tokens_to_ids(PAD_TOKEN)
    return Qwen3Config(
        vocab_size=len(tokenizer), hidden_size=spec.hidden_size, intermediate_size=spec.intermediate_size,
        num_hidden_layers=spec.num_hidden_layers, num_attention_heads=spec.num_attention_heads,
        num_key_value_heads=spec.num_key_value_heads, head_dim=spec.head_dim,
        max_position_embeddings=spec.max_position_embeddings, tie_word_embeddings=spec.tie_word_embeddings,
        bos_token_id=None, eos_token_id=eos, pad_token_id=pad,
    )


def build_tiny_model(out_dir: str | Path, *, texts: Iterable[str] | None = None,
                     samples: Iterable[Mapping[str, Any]] | None = None, spec: TinyModelSpec = TinyModelSpec(),
                     seed: int = 0) -> Path:
    """Write a randomly initialised tiny Qwen3 model and its tokenizer to ``out_dir``; return the folder.

    The tokenizer is trained on ``texts`` and/or the rendered ``samples`` (chat samples as in
    :mod:`ark.training.datasets`). The same inputs, spec and seed give the same files.
    """
    import torch
    from transformers import AutoModelForCausalLM, GenerationConfig

    corpus = list(texts or [])
    if samples is not None:
        corpus += render_chats(samples)
    if not corpus:
        raise ValueError("build_tiny_model needs texts or samples to train its tokenizer on")
    tokenizer = train_tokenizer(corpus, vocab_size=spec.vocab_size, cross_words=spec.tokenizer_cross_words,
                                max_token_length=spec.tokenizer_max_token_length,
                                isolate=spec.tokenizer_isolate)
    config = tiny_qwen3_config(tokenizer, spec)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.generation_config = GenerationConfig(eos_token_id=config.eos_token_id, pad_token_id=config.pad_token_id,
                                               do_sample=False)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "ark_tiny_model.json").write_text(json.dumps({"spec": asdict(spec), "seed": seed,
                                                         "tokenizer_texts": len(corpus)}, indent=2) + "\n")
    return out
