"""STaRK's question files: ``stark_qa/stark_qa.csv``, ``split/<split>.index`` and the human-generated set.

``dataset_dir`` is one dataset's QA folder (``qa/<name>/`` on Hugging Face, ``data/stark/<name>/`` in the
git history), holding ``stark_qa/stark_qa.csv`` (``id,query,answer_ids``; ``answer_ids`` is a Python list
literal), ``stark_qa/stark_qa_human_generated_eval.csv`` (adds ``answer_ids_source``) and
``split/{train,val,test}.index`` (one query id a line; Hugging Face also has ``test-0.1``). Answer ids are
STaRK node ids, which are also the node ids of graphs built by :func:`ark.loaders.stark.load_stark_skb`.
"""

from __future__ import annotations

import ast
import csv
import json
import sys
from pathlib import Path

from .queries import Query

SYNTHESIZED_FILE = Path("stark_qa") / "stark_qa.csv"
HUMAN_FILE = Path("stark_qa") / "stark_qa_human_generated_eval.csv"
SPLIT_DIR = Path("split")
REQUIRED_COLUMNS = ("id", "query", "answer_ids")


def available_splits(dataset_dir: str | Path) -> list[str]:
    """Names of the split files present in ``dataset_dir/split`` (e.g. ``test``, ``train``, ``val``)."""
    split_dir = Path(dataset_dir) / SPLIT_DIR
    if not split_dir.is_dir():
        return []
    return sorted(p.name.removesuffix(".index") for p in split_dir.glob("*.index"))


def load_stark_qa(dataset_dir: str | Path, split: str | None = None, human: bool = False) -> list[Query]:
    """Load STaRK questions: all synthesized ones sorted by id, one split in its file order, or the human set.

    ``split`` is ``None`` or the name of a split file (``train``, ``val``, ``test``, ``test-0.1`` where
    present); ``human=True`` returns the human-generated questions (template ``"human"``; synthesized
    ones have template ``None``) and cannot be combined with a split.
    """
    dataset_dir = Path(dataset_dir)
    if human:
        if split is not None:
            raise ValueError(f"the human-generated STaRK questions have no splits; got split={split!r}")
        return _read_csv(dataset_dir / HUMAN_FILE, template="human")
    queries = _read_csv(dataset_dir / SYNTHESIZED_FILE, template=None)
    if split is None:
        return sorted(queries, key=lambda q: int(q.id) if q.id.isdigit() else q.id)
    by_id = {q.id: q for q in queries}
    wanted = _read_split(dataset_dir, split)
    missing = [qid for qid in wanted if qid not in by_id]
    if missing:
        shown = ", ".join(missing[:5])
        raise ValueError(
            f"{dataset_dir / SPLIT_DIR / (split + '.index')}: {len(missing)} query id(s) not in "
            f"{dataset_dir / SYNTHESIZED_FILE}: {shown}"
        )
    return [by_id[qid] for qid in wanted]


def _read_split(dataset_dir: Path, split: str) -> list[str]:
    path = dataset_dir / SPLIT_DIR / f"{split}.index"
    if not path.is_file():
        valid = available_splits(dataset_dir)
        raise ValueError(
            f"STaRK split {split!r} not found (no file {path}); available splits: "
            f"{', '.join(valid) if valid else 'none'}"
        )
    return [line.strip() for line in path.read_text().split("\n") if line.strip()]


def _read_csv(path: Path, template: str | None) -> list[Query]:
    if not path.is_file():
        raise FileNotFoundError(f"STaRK question file not found: {path}")
    csv.field_size_limit(sys.maxsize)
    with path.open(encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in REQUIRED_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(
                f"{path}: missing column(s) {', '.join(missing)}; found: {', '.join(reader.fieldnames or [])}"
            )
        return [
            Query(
                id=row["id"].strip(),
                query=row["query"],
                answer_ids=_parse_ids(row["answer_ids"], path, reader.line_num),
                template=template,
            )
            for row in reader
        ]


def _parse_ids(value: str, path: Path, line: int) -> list[str]:
    """Parse a list literal such as ``[601168, 947318]`` into string node ids."""
    try:
        parsed = json.loads(value)
    except (json.JSONDecodeError, TypeError):
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            parsed = None
    if not isinstance(parsed, list):
        raise ValueError(f"{path}, line {line}: 'answer_ids' is not a list literal: {value!r}")
    return [str(x) for x in parsed]
