"""A synthetic graph shaped like STaRK-MAG, written in the ark-agent-cli parquet layout, deterministic from a seed.

    python benchmarks/synthetic_mag.py --out DIR [--scale 1.0] [--seed 0]

At ``--scale 1`` it has the sizes of STaRK's MAG knowledge base: about 1.87M nodes of four types (700,000 papers,
1,104,000 authors, 8,700 institutions, 60,000 fields of study) and about 20M typed directed edges (``writes``
author→paper 6.5M, ``cites`` paper→paper 5.0M, ``has_topic`` paper→field 7.4M, ``affiliated_with``
author→institution 1.0M), with about 200M whitespace tokens of node text (about 1.4 GB). ``--scale`` multiplies
every count (at least one node of each type), so tests use a tiny copy of the same shape.

How it is made:

- **Vocabulary.** 200,000 distinct synthetic words (``200,000 * sqrt(scale)`` below scale 1, at least 5,000) of two
  to four consonant-vowel syllables, never an English stopword, ranked by a Zipf law (frequency ∝ 1/rank); the 30
  highest ranks are English function words ("the", "of", "and", ...) so the token statistics of abstracts look
  like real English.
- **Fields of study** each own 12 *topic words* drawn from ranks 300-60,000; a field's name is two of its topic
  words, its description 20-40 words.
- **Papers**: a title of 6-14 words and an abstract whose length is log-normal (median about 240 words, mean about
  270, clipped to 30-3,000). Each token is, with probability 0.3, one of the topic words of the paper's primary
  field, otherwise a word of the Zipf background. Properties: ``abstract`` (text) and ``year`` (a number).
- **Authors** are "First Last" from 3,000 first names and 60,000 surnames (so some names repeat, as in MAG);
  institutions are "University of X", "X Institute of Technology", ...; both have a short property or none.
- **Edges, heavy-tailed.** Every node gets a popularity weight ``(r + 1) ** -s`` for its rank ``r`` in a random
  permutation (a Zipf law; ``s`` = 0 is uniform), and each relation samples its sources and targets by those
  weights: ``s`` = 0.5 for authors' productivity, 0.7 for how often a paper is cited, 0.9 for a field's share of
  papers (the largest field has about 300k papers), 0.8 for institutions. Every paper has at least one author
  and its primary field among its topics. Self-citations are dropped here, repeated (source, target, relation)
  triples by the import (which reports the stored count).

Everything is vectorised (numpy draws, Arrow string kernels) and written in row groups, so generation at full
scale takes a few minutes and about 3 GB of memory. All draws come from ``numpy.random.SeedSequence(seed)``
children, so the same seed and scale give byte-identical files.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ark.text import ENGLISH_STOPWORDS

FUNCTION_WORDS = ["the", "of", "and", "in", "to", "a", "we", "is", "for", "that", "with", "on", "this", "by", "are",
                  "as", "an", "be", "from", "our", "which", "these", "it", "at", "can", "using", "based", "both",
                  "also", "between"]
CONSONANTS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z",
              "br", "ch", "cr", "dr", "gr", "kr", "pl", "pr", "sh", "st", "th", "tr"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou"]
SYLLABLES = [c + v for c in CONSONANTS for v in VOWELS]
VOCABULARY_SIZE = 200_000
TOPIC_WORDS = 12
TOPIC_SHARE = 0.3
CHUNK = 20_000  # papers per row group (fixed: the draws of a chunk depend on it)
NODE_SCHEMA = pa.schema([("id", pa.string()), ("name", pa.string()), ("type", pa.string()),
                         ("properties", pa.string())])
EDGE_SCHEMA = pa.schema([("from", pa.string()), ("to", pa.string()), ("type", pa.string())])


@dataclass(frozen=True)
class Relation:
    """One relation: ``count`` edges from ``source`` to ``target`` nodes, each side sampled by a Zipf popularity."""

    name: str
    source: str
    target: str
    count: int
    source_exponent: float
    target_exponent: float


@dataclass(frozen=True)
class MagShape:
    """Node counts per type and the relations, at scale 1 (STaRK-MAG's sizes)."""

    papers: int = 700_000
    authors: int = 1_104_000
    institutions: int = 8_700
    fields: int = 60_000
    relations: tuple[Relation, ...] = (
        Relation("writes", "author", "paper", 6_500_000, 0.5, 0.2),
        Relation("cites", "paper", "paper", 5_000_000, 0.3, 0.7),
        Relation("has_topic", "paper", "field_of_study", 7_400_000, 0.1, 0.9),
        Relation("affiliated_with", "author", "institution", 1_000_000, 0.0, 0.8),
    )

    def scaled(self, scale: float) -> MagShape:
        if not scale > 0:
            raise ValueError(f"scale must be > 0, got {scale}")

        def size(n: int) -> int:
            return max(1, round(n * scale))

        return MagShape(size(self.papers), size(self.authors), size(self.institutions), size(self.fields),
                        tuple(Relation(r.name, r.source, r.target, size(r.count), r.source_exponent,
                                       r.target_exponent) for r in self.relations))

    def count(self, node_type: str) -> int:
        return {"paper": self.papers, "author": self.authors, "institution": self.institutions,
                "field_of_study": self.fields}[node_type]


PREFIX = {"paper": "P", "author": "A", "institution": "I", "field_of_study": "F"}


def node_ids(node_type: str, indices: np.ndarray) -> pa.Array:
    """String ids (``P12``, ``A7``, ...) of nodes of one type, built column-wise."""
    numbers = pc.cast(pa.array(np.asarray(indices, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise(PREFIX[node_type], numbers, "")


def zipf_weights(n: int, exponent: float, rng: np.random.Generator) -> np.ndarray:
    """Popularity ``(rank + 1) ** -exponent`` over a random permutation of ``n`` nodes, normalised to sum 1."""
    weights = np.empty(n, dtype=np.float64)
    weights[rng.permutation(n)] = np.arange(1, n + 1, dtype=np.float64) ** -exponent
    return weights / weights.sum()


def draw(weights: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` indices drawn with probabilities ``weights`` (inverse CDF; int64)."""
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    return np.minimum(np.searchsorted(cdf, rng.random(size), side="right"), len(weights) - 1)


def synthetic_words(count: int, rng: np.random.Generator, min_syllables: int = 2, max_syllables: int = 4,
                    exclude: frozenset[str] = frozenset()) -> list[str]:
    """``count`` distinct lowercase words of syllables, none in ``exclude`` (shorter words first)."""
    found: dict[str, None] = {}
    while len(found) < count:
        need = count - len(found)
        lengths = np.sort(rng.integers(min_syllables, max_syllables + 1, 2 * need))
        picks = rng.integers(0, len(SYLLABLES), (2 * need, max_syllables))
        for length, row in zip(lengths.tolist(), picks.tolist(), strict=True):
            word = "".join(SYLLABLES[s] for s in row[:length])
            if word not in exclude and word not in found:
                found[word] = None
                if len(found) == count:
                    break
    return list(found)


def join_words(vocabulary: pa.Array, ids: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """One string per row: the words ``vocabulary[ids]`` split into consecutive runs of ``lengths``, space-joined."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:])
    lists = pa.ListArray.from_arrays(pa.array(offsets), vocabulary.take(pa.array(ids)))
    return pc.binary_join(lists, " ")


class Writer:
    """Row groups into ``nodes.parquet`` and ``edges.parquet``, counting rows and whitespace tokens."""

    def __init__(self, out: Path) -> None:
        self.nodes = pq.ParquetWriter(out / "nodes.parquet", NODE_SCHEMA)
        self.edges = pq.ParquetWriter(out / "edges.parquet", EDGE_SCHEMA)
        self.tokens = 0
        self.node_rows = 0
        self.edge_rows = 0

    def add_nodes(self, ids: pa.Array, names: pa.Array, node_type: str, properties: pa.Array, tokens: int) -> None:
        n = len(ids)
        types = pa.array([node_type] * n, pa.string()) if n < 1000 else pa.repeat(pa.scalar(node_type), n)
        self.nodes.write_table(pa.table([ids, names, types, properties], schema=NODE_SCHEMA))
        self.node_rows += n
        self.tokens += tokens

    def add_edges(self, sources: pa.Array, targets: pa.Array, relation: str) -> None:
        types = pa.repeat(pa.scalar(relation), len(sources))
        self.edges.write_table(pa.table([sources, targets, types], schema=EDGE_SCHEMA))
        self.edge_rows += len(sources)

    def close(self) -> None:
        self.nodes.close()
        self.edges.close()


def _word_count(array: pa.Array) -> int:
    """Whitespace tokens in a string array (words are single-space separated)."""
    spaces = pc.sum(pc.count_substring(array, " ")).as_py() or 0
    return int(spaces + pc.sum(pc.greater(pc.utf8_length(array), 0)).as_py())


def generate(out: str | Path, scale: float = 1.0, seed: int = 0,
             log: Callable[[str], None] | None = None) -> dict:
    """Write ``nodes.parquet``, ``edges.parquet`` and ``graph.json`` into ``out``; return the counts."""
    started = time.perf_counter()
    say = log or (lambda _message: None)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    shape = MagShape().scaled(scale)
    streams = iter(np.random.SeedSequence(seed).spawn(16))

    def rng() -> np.random.Generator:
        return np.random.default_rng(next(streams))

    # Vocabulary, ranked: function words first, then synthetic words; Zipf frequencies over the ranks.
    vocab_rng = rng()
    vocabulary_size = max(5_000, round(VOCABULARY_SIZE * min(scale, 1.0) ** 0.5))  # Heaps' law, roughly
    words = FUNCTION_WORDS + synthetic_words(vocabulary_size - len(FUNCTION_WORDS), vocab_rng,
                                             exclude=ENGLISH_STOPWORDS | frozenset(FUNCTION_WORDS))
    vocabulary = pa.array(words, pa.string())
    background = 1.0 / np.arange(1, len(words) + 1)
    background_cdf = np.cumsum(background / background.sum())
    low, high = 300, min(60_000, len(words))
    field_rng = rng()
    topics = field_rng.integers(low, high, (shape.fields, TOPIC_WORDS))

    weights_rng = rng()
    weights = {}
    for relation in shape.relations:
        sides = ((relation.source, relation.source_exponent), (relation.target, relation.target_exponent))
        for side, exponent in sides:
            weights.setdefault((side, exponent), zipf_weights(shape.count(side), exponent, weights_rng))
    field_weights = weights[("field_of_study", 0.9)]
    primary_field = draw(field_weights, shape.papers, rng())

    writer = Writer(out)
    say(f"vocabulary of {len(words):,} words; writing {shape.papers:,} papers ...")
    paper_rng_seed = next(streams)
    for chunk_index, start in enumerate(range(0, shape.papers, CHUNK)):
        chunk_rng = np.random.default_rng([paper_rng_seed.entropy, chunk_index])
        end = min(start + CHUNK, shape.papers)
        n = end - start
        title_lengths = chunk_rng.integers(6, 15, n)
        abstract_lengths = np.clip(np.round(chunk_rng.lognormal(5.47, 0.5, n)), 30, 3000).astype(np.int64)
        texts = []
        for lengths in (title_lengths, abstract_lengths):
            total = int(lengths.sum())
            owner = np.repeat(np.arange(start, end), lengths)
            ids = np.searchsorted(background_cdf, chunk_rng.random(total), side="right")
            np.minimum(ids, len(words) - 1, out=ids)
            topical = chunk_rng.random(total) < TOPIC_SHARE
            ids[topical] = topics[primary_field[owner[topical]], chunk_rng.integers(0, TOPIC_WORDS, int(topical.sum()))]
            texts.append(join_words(vocabulary, ids, lengths))
        titles = pc.utf8_capitalize(texts[0])
        years = pc.cast(pa.array(chunk_rng.integers(1990, 2021, n)), pa.string())
        properties = pc.binary_join_element_wise('{"abstract": "', texts[1], '", "year": ', years, "}", "")
        writer.add_nodes(node_ids("paper", np.arange(start, end)), titles, "paper", properties,
                         int(title_lengths.sum() + abstract_lengths.sum()))

    say(f"writing {shape.authors:,} authors, {shape.institutions:,} institutions, {shape.fields:,} fields ...")
    name_rng = rng()
    first_names = [w.capitalize() for w in synthetic_words(3_000, name_rng, 2, 2)]
    last_names = [w.capitalize() for w in synthetic_words(60_000, name_rng, 2, 3)]
    for start in range(0, shape.authors, 200_000):
        end = min(start + 200_000, shape.authors)
        first = pa.array(first_names).take(pa.array(name_rng.integers(0, len(first_names), end - start)))
        last = pa.array(last_names).take(pa.array(name_rng.integers(0, len(last_names), end - start)))
        names = pc.binary_join_element_wise(first, last, " ")
        writer.add_nodes(node_ids("author", np.arange(start, end)), names, "author",
                         pa.repeat(pa.scalar("{}"), end - start), 2 * (end - start))

    places = [w.capitalize() for w in synthetic_words(shape.institutions, name_rng, 3, 3)]
    patterns = ["University of {}", "{} Institute of Technology", "{} Research Centre", "{} State University",
                "{} Medical School"]
    kinds = name_rng.integers(0, len(patterns), shape.institutions).tolist()
    institution_names = pa.array([patterns[k].format(p) for k, p in zip(kinds, places, strict=True)])
    countries = pa.array(synthetic_words(50, name_rng, 2, 3)).take(
        pa.array(name_rng.integers(0, 50, shape.institutions)))
    countries = pc.utf8_capitalize(countries)
    writer.add_nodes(node_ids("institution", np.arange(shape.institutions)), institution_names, "institution",
                     pc.binary_join_element_wise('{"country": "', countries, '"}', ""),
                     _word_count(institution_names) + shape.institutions)

    field_names = pc.utf8_capitalize(join_words(vocabulary, topics[:, :2].ravel(), np.full(shape.fields, 2)))
    field_names = _unique_names(field_names, vocabulary, topics)
    description_lengths = field_rng.integers(20, 41, shape.fields)
    description_ids = np.where(field_rng.random(int(description_lengths.sum())) < 0.5,
                               topics[np.repeat(np.arange(shape.fields), description_lengths),
                                      field_rng.integers(0, TOPIC_WORDS, int(description_lengths.sum()))],
                               draw(background / background.sum(), int(description_lengths.sum()), field_rng))
    descriptions = join_words(vocabulary, description_ids, description_lengths)
    levels = pc.cast(pa.array(np.minimum(field_rng.geometric(0.5, shape.fields) - 1, 5)), pa.string())
    writer.add_nodes(node_ids("field_of_study", np.arange(shape.fields)), field_names, "field_of_study",
                     pc.binary_join_element_wise('{"description": "', descriptions, '", "level": ', levels, "}", ""),
                     _word_count(field_names) + int(description_lengths.sum()))

    say("writing edges ...")
    edge_rng = rng()
    for relation in shape.relations:
        source_w = weights[(relation.source, relation.source_exponent)]
        target_w = weights[(relation.target, relation.target_exponent)]
        sources = draw(source_w, relation.count, edge_rng)
        targets = draw(target_w, relation.count, edge_rng)
        if relation.name == "writes":  # every paper has an author: the first draws go to papers in order
            k = min(shape.papers, relation.count)
            targets[:k] = np.arange(k)
        elif relation.name == "has_topic":  # every paper's primary field is among its topics
            k = min(shape.papers, relation.count)
            sources[:k], targets[:k] = np.arange(k), primary_field[:k]
        elif relation.name == "affiliated_with":  # one affiliation each for a random subset of the authors
            sources = edge_rng.permutation(shape.authors)[: relation.count] if relation.count <= shape.authors \
                else sources
        if relation.source == relation.target:  # no self-citations
            keep = sources != targets
            sources, targets = sources[keep], targets[keep]
        for lo in range(0, len(sources), 2_000_000):
            hi = min(lo + 2_000_000, len(sources))
            writer.add_edges(node_ids(relation.source, sources[lo:hi]), node_ids(relation.target, targets[lo:hi]),
                             relation.name)
    writer.close()
    info = {"id": "synthetic-mag", "name": "synthetic-mag",
            "description": f"Synthetic MAG-shaped graph (benchmarks/synthetic_mag.py, scale {scale}, seed {seed})"}
    (out / "graph.json").write_text(json.dumps(info, indent=1) + "\n")
    stats = {"nodes": writer.node_rows, "edges": writer.edge_rows, "tokens": writer.tokens,
             "nodes_bytes": (out / "nodes.parquet").stat().st_size,
             "edges_bytes": (out / "edges.parquet").stat().st_size,
             "seconds": round(time.perf_counter() - started, 1), "scale": scale, "seed": seed}
    say(f"wrote {stats['nodes']:,} nodes, {stats['edges']:,} edges, {stats['tokens']:,} tokens "
        f"in {stats['seconds']} s")
    return stats


def _unique_names(names: pa.Array, vocabulary: pa.Array, topics: np.ndarray) -> pa.Array:
    """Field names made unique: a repeated two-word name gets the field's next topic words appended."""
    values = names.to_pylist()
    seen: set[str] = set()
    for i, name in enumerate(values):
        extra = 2
        while name in seen:
            name = f"{name} {vocabulary[int(topics[i, extra % TOPIC_WORDS])].as_py()}"
            extra += 1
        seen.add(name)
        values[i] = name
    return pa.array(values, pa.string())


QUESTION_TEMPLATES = ("author_field", "cites_field", "institution_field")


def mag_questions(graph, n: int, seed: int = 0, max_answers: int = 20) -> list[dict]:
    """``n`` STaRK-MAG-style questions with exact answers computed on the imported ``graph`` (two anchors each):

    - ``author_field``: "Which papers written by AUTHOR are about FIELD?" (papers of the author ∩ papers of the field);
    - ``cites_field``: "Which papers about FIELD cite TITLE?" (citers of the paper ∩ papers of the field);
    - ``institution_field``: "Which papers about FIELD were written by authors affiliated with INSTITUTION?".

    Each question starts from a random paper (so it has at least one answer) and its most specific field, and is
    kept when its answer set has at most ``max_answers`` papers, the author named is the only author of that name
    and the institution has at most 300 members. Deterministic in ``seed``.
    """
    from collections import Counter

    rng = np.random.default_rng(seed)
    papers = graph.nodes_of_type("paper")
    author_names = Counter(graph.name(i) for i in graph.nodes_of_type("author").tolist())

    codes = {name: graph.relation_code(name) for name in ("writes", "cites", "has_topic", "affiliated_with")}

    def linked(node: int, relation: str, direction: str) -> np.ndarray:
        return np.asarray(graph.neighbors(node, codes[relation], direction).nodes, dtype=np.int64)

    out: list[dict] = []
    attempts = 0
    while len(out) < n and attempts < 200 * n:
        attempts += 1
        template = QUESTION_TEMPLATES[len(out) % len(QUESTION_TEMPLATES)]
        paper = int(papers[rng.integers(len(papers))])
        fields = linked(paper, "has_topic", "out")
        if not len(fields):
            continue
        # The paper's most specific topic (fewest papers), as STaRK-MAG questions name specific fields.
        sizes = np.diff(graph.indptr)[fields]
        field = int(fields[rng.choice(np.flatnonzero(sizes == sizes.min()))])
        on_field = linked(field, "has_topic", "in")
        if template == "author_field":
            authors = [a for a in linked(paper, "writes", "in").tolist() if author_names[graph.name(a)] == 1]
            if not authors:
                continue
            anchor = authors[int(rng.integers(len(authors)))]
            answers = np.intersect1d(linked(anchor, "writes", "out"), on_field)
            query = f"Which papers written by {graph.name(anchor)} are about {graph.name(field)}?"
        elif template == "cites_field":
            cited = linked(paper, "cites", "out")
            if not len(cited):
                continue
            anchor = int(cited[rng.integers(len(cited))])
            answers = np.intersect1d(linked(anchor, "cites", "in"), on_field)
            query = f"Which papers about {graph.name(field)} cite {graph.name(anchor)}?"
        else:
            institutions = [i for a in linked(paper, "writes", "in").tolist()
                            for i in linked(a, "affiliated_with", "out").tolist()]
            if not institutions:
                continue
            anchor = institutions[int(rng.integers(len(institutions)))]
            members = linked(anchor, "affiliated_with", "in")
            if len(members) > 300:  # large institutions give answer sets of hundreds
                continue
            written = np.concatenate([linked(a, "writes", "out") for a in members.tolist()])
            answers = np.intersect1d(written, on_field)
            query = (f"Which papers about {graph.name(field)} were written by authors affiliated with "
                     f"{graph.name(anchor)}?")
        if not 1 <= len(answers) <= max_answers:
            continue
        out.append({"id": f"smag-q{len(out):04d}", "query": query,
                    "answer_ids": [graph.node_id(int(a)) for a in answers.tolist()], "template": template,
                    "anchor_ids": [graph.node_id(anchor), graph.node_id(field)]})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write (created)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every count (1 = STaRK-MAG size)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    stats = generate(args.out, args.scale, args.seed, log=print)
    print(json.dumps(stats))


if __name__ == "__main__":
    main()
