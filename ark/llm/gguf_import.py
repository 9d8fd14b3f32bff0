"""A GGUF model file as a saved Hugging Face folder, converted once and cached under ``$ARK_HOME/models`` by the
file's digest (``ark model import PATH.gguf``). Needs the ``train`` extra and the ``gguf`` package.

transformers reads a GGUF file into a real HF model (``from_pretrained(folder, gguf_file=name)``, the weights
dequantized to floats), but ``save_pretrained`` then refuses the model ("quantized with gguf and is not
serializable"): the dequantized model keeps the GGUF quantization marker. It is cleared before saving, so the saved
folder is a plain float checkpoint every ARK path (``--model hf:PATH``, ``ark distill train --base``) loads.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from ark.errors import ArkError

IMPORT_META = "ark_gguf_import.json"  # written last into a converted folder: the source file and its digest
DIGEST_CHARS = 16


class GGUFImportError(ValueError, ArkError):
    """A GGUF file that cannot be converted (missing, not a GGUF file, or a model transformers cannot read)."""


def file_digest(path: Path, chunk: int = 1 << 20) -> str:
    """BLAKE2b of the file's bytes (the cache key: the same weights under another name convert once)."""
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def imported_folder(path: str | Path, home: Path) -> Path:
    """Where the converted folder of ``path`` lives: ``home/models/gguf-<digest>`` (it may not exist yet)."""
    return home / "models" / f"gguf-{file_digest(Path(path))[:DIGEST_CHARS]}"


def import_gguf(path: str | Path, home: Path) -> tuple[Path, bool]:
    """Convert ``path`` once: (the saved HF folder, whether it was converted now rather than found in the cache)."""
    source = Path(path).expanduser().resolve()
    if not source.is_file():
        raise GGUFImportError(f"no such GGUF file: {source}")
    with source.open("rb") as handle:
        if handle.read(4) != b"GGUF":
            raise GGUFImportError(f"{source} is not a GGUF file (its first bytes are not 'GGUF')")
    target = imported_folder(source, home)
    if (target / IMPORT_META).is_file():
        return target, False
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        _convert(source, scratch)
        meta = {"source": str(source), "digest": file_digest(source), "bytes": source.stat().st_size}
        (scratch / IMPORT_META).write_text(json.dumps(meta, indent=2) + "\n")
        if target.exists():  # an unfinished folder from an interrupted import
            shutil.rmtree(target)
        os.replace(scratch, target)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return target, True


def _convert(source: Path, out: Path) -> None:
    """Load the GGUF file with transformers (dequantized), clear the GGUF marker and save model and tokenizer."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        model = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name)
    except ImportError as exc:
        raise GGUFImportError(f"reading {source.name} needs the gguf package: pip install gguf ({exc})") from exc
    except (ValueError, KeyError, OSError) as exc:
        raise GGUFImportError(f"transformers cannot read {source}: {exc}") from exc
    _clear_quantization(model)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def _clear_quantization(model: Any) -> None:
    """Drop the GGUF quantization marker that makes ``save_pretrained`` refuse a dequantized model."""
    for name in ("hf_quantizer", "quantization_method"):
        if hasattr(model, name):
            setattr(model, name, None)
    if hasattr(model, "is_quantized"):
        with contextlib.suppress(AttributeError):  # a read-only property derived from hf_quantizer
            model.is_quantized = False
    if hasattr(model.config, "quantization_config"):
        delattr(model.config, "quantization_config")
