"""The base a student trains from, as ``ark distill train --base`` accepts it: a Hugging Face folder or cached id, a
GGUF file (converted once by :mod:`ark.llm.gguf_import`, as ``ark model import`` does), or a folder whose chat
template renders no tools (SmolLM2-Instruct's, for one), which trains with ARK's own tool template
(:func:`ark.training.tiny_model.tool_chat_template`: ChatML turns, ``<tool_call>`` calls, generation markers).

A template swap never writes into the user's folder: a cached copy under ``$ARK_HOME/models`` links the weights and
holds the tokenizer with ARK's template, so the adapter, the merged model and ``--model hf:PATH`` all read the same
template the student learnt. Needs the ``train`` extra (and ``gguf`` for GGUF files).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..llm.hf_models import ChatTemplateError, check_tool_chat_template

log = logging.getLogger(__name__)

TEMPLATE_META = "ark_tool_template.json"  # written last into a template copy: its source folder
# Files of a model folder the copy links (the tokenizer's files are written anew, never through a link).
_MODEL_FILES = ("config.json", "generation_config.json")
_MODEL_PREFIXES = ("model", "pytorch_model")


@dataclass(frozen=True)
class StudentBase:
    """The folder or id to train from, and what was done to get it (for the training record and the user)."""

    path: str
    given: str
    converted_from_gguf: bool = False
    tool_template: bool = False  # ARK's tool template replaced the base's own (it renders no tools)

    def notes(self) -> list[str]:
        notes = []
        if self.converted_from_gguf:
            notes.append(f"{self.given} is a GGUF file: converted once to {self.path} (ark model import)")
        if self.tool_template:
            notes.append(f"the chat template of {self.given} renders no tools: training with ARK's tool template "
                         f"(a copy of the base at {self.path})")
        return notes


def resolve_student_base(base: str | Path, home: Path | None = None) -> StudentBase:
    """``base`` ready to train: GGUF files converted, a tool-less template replaced by ARK's (see the module doc).
    Anything else (an id, a folder with a tool template) is returned as given; loading errors stay the trainer's."""
    from ..config import ark_home

    home = home if home is not None else ark_home()
    given = str(base)
    path, converted = Path(given).expanduser(), False
    if path.is_file() and path.suffix.lower() == ".gguf":
        from ..llm.gguf_import import import_gguf

        path, _ = import_gguf(path, home)
        converted = True
    if not path.is_dir():
        return StudentBase(given, given)
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path))
    except (OSError, ValueError):
        return StudentBase(str(path), given, converted)  # the trainer names the problem
    try:
        check_tool_chat_template(tokenizer, f"base {given!r}")
    except ChatTemplateError as exc:
        if not getattr(tokenizer, "chat_template", None):
            raise  # no conversation template at all: not a chat model
        log.info("%s", exc)
        return StudentBase(str(with_tool_template(path, tokenizer, home)), given, converted, True)
    return StudentBase(str(path), given, converted)


def with_tool_template(folder: Path, tokenizer: object, home: Path) -> Path:
    """A cached copy of ``folder`` (weights linked) whose tokenizer carries ARK's tool template."""
    from .tiny_model import tool_chat_template

    template = tool_chat_template()
    key = hashlib.blake2b(f"{folder.resolve()}\n{template}".encode(), digest_size=8).hexdigest()
    target = home / "models" / f"{folder.name}-ark-tools-{key}"
    if (target / TEMPLATE_META).is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        for entry in folder.iterdir():
            if entry.is_file() and (entry.name in _MODEL_FILES or entry.name.startswith(_MODEL_PREFIXES)):
                os.symlink(entry.resolve(), scratch / entry.name)
        tokenizer.chat_template = template  # type: ignore[attr-defined]
        tokenizer.save_pretrained(str(scratch))  # type: ignore[attr-defined]
        (scratch / TEMPLATE_META).write_text(json.dumps({"source": str(folder.resolve()),
                                                         "template": "ark.training tool_chat.jinja"}) + "\n")
        if target.exists():
            shutil.rmtree(target)
        os.replace(scratch, target)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return target
