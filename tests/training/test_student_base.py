"""``ark distill train --base`` resolution (:mod:`ark.training.student_base`) on small real folders: a chat model
whose template renders no tools trains from a cached copy carrying ARK's tool template (the user's folder untouched,
the copy reused), a folder with a tool template is used as given, a folder without any chat template and a file
that is not GGUF are refused with messages naming the problem. The real GGUF path:
tests/distill/test_pretrained_student.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("tokenizers")

from ark.llm.gguf_import import GGUFImportError  # noqa: E402
from ark.llm.hf_models import ChatTemplateError, check_tool_chat_template  # noqa: E402
from ark.training.student_base import resolve_student_base  # noqa: E402
from ark.training.tiny_model import build_tiny_model  # noqa: E402

PLAIN_CHATML = ("{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")  # SmolLM2-like: no tools


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "base", texts=["Marfan syndrome FBN1"] * 20)


def retemplate(folder, template):
    config = folder / "tokenizer_config.json"
    values = json.loads(config.read_text())
    values["chat_template"] = template
    config.write_text(json.dumps(values))
    (folder / "chat_template.jinja").unlink(missing_ok=True)


def test_a_tool_less_template_trains_with_arks_tool_template_on_a_cached_copy(tiny, tmp_path):
    import shutil

    from transformers import AutoTokenizer

    base = tmp_path / "chat-model"
    shutil.copytree(tiny, base)
    retemplate(base, PLAIN_CHATML)
    with pytest.raises(ChatTemplateError):  # as given, the trainer would refuse it
        check_tool_chat_template(AutoTokenizer.from_pretrained(base), "base")
    resolved = resolve_student_base(base, home=tmp_path / "home")
    assert resolved.tool_template and not resolved.converted_from_gguf
    assert any("renders no tools" in note for note in resolved.notes())
    check_tool_chat_template(AutoTokenizer.from_pretrained(resolved.path), "copy")  # now renders tools
    assert (tmp_path / "home" / "models") in Path(resolved.path).parents
    assert json.loads((base / "tokenizer_config.json").read_text())["chat_template"] == PLAIN_CHATML  # untouched
    assert resolve_student_base(base, home=tmp_path / "home").path == resolved.path  # cached


def test_a_tool_template_base_is_used_as_given(tiny, tmp_path):
    resolved = resolve_student_base(tiny, home=tmp_path / "home")
    assert resolved.path == str(tiny) and not resolved.tool_template and resolved.notes() == []


def test_no_chat_template_and_a_non_gguf_file_are_refused(tiny, tmp_path):
    import shutil

    bare = tmp_path / "bare"
    shutil.copytree(tiny, bare)
    retemplate(bare, None)
    with pytest.raises(ChatTemplateError, match="no chat template"):
        resolve_student_base(bare, home=tmp_path / "home")
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a model")
    with pytest.raises(GGUFImportError, match="not a GGUF file"):
        resolve_student_base(fake, home=tmp_path / "home")
