"""GRBench (the Graph-CoT benchmark GraphScout evaluates on): its graph files and question files.

A GRBench domain folder (``data/processed_data/<domain>/`` in the Graph-CoT release) holds:

- ``graph.json``: ``{"<type>_nodes": {node_id: {"features": {...}, "neighbors": {neighbor_type: [ids]}}}}``, one
  top-level key per node type (``paper_nodes``, ``Disease_nodes``, ...); node ids are unique across types;
- ``data.json``: JSON lines ``{"qid": str, "question": str, "answer": str}`` with free-text answers (set answers
  are comma-separated names).

Each ``neighbors`` list becomes edges from the node to its neighbors, the neighbor type as the relation. Neighbor
types written ``Source-verb-Target`` (the biomedical domain: ``Compound-treats-Disease``, stored on both
endpoints) are oriented from the ``Source`` node type to the ``Target`` one, so both copies give the same edge.
A node's name is its first name-like feature (:data:`NAME_FEATURES`, Graph-CoT's main feature per type), its
document the name plus its textual features (:func:`ark.loaders.tabular.node_text`), its properties all features.
Neighbors that are not nodes of the graph are dropped, counted in the graph metadata's ``dropped_edges`` (one example in
``dropped_edge_example``) and reported by one warning with the count and that example
(:func:`report_dropped`), which ``ark graph import grbench`` shows on the console.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ark.graph import (
    EdgeTable,
    GraphValidationError,
    KnowledgeGraph,
    NodeTable,
    build_graph,
    normalize_name,
    save_graph,
)
from ark.graph.storage import check_source_outside_target
from ark.storage.jsonl import parse_json_object

from .tabular import node_text

log = logging.getLogger(__name__)

NODE_KEY_SUFFIX = "_nodes"
# Graph-CoT's main (retrieval) feature per node type: the first of these present names the node.
NAME_FEATURES = ("name", "title", "case_name", "full_name", "syllabus", "plain_text")
QUESTION_FIELDS = ("qid", "question", "answer")


@dataclass(frozen=True)
class GRBenchQuestion:
    qid: str
    question: str
    answer: str


def load_grbench(path: str | Path, name: str | None = None) -> KnowledgeGraph:
    """Build a graph from a GRBench ``graph.json`` (or a folder holding one)."""
    file = _graph_file(path)
    try:
        with file.open(encoding="utf-8") as handle:
            document = json.load(handle)
    except json.JSONDecodeError as error:
        raise GraphValidationError(f"{file}: not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(document, dict) or not document:
        raise GraphValidationError(f"{file}: expected an object of '<type>_nodes' tables")
    ids: list[str] = []
    types: list[str] = []
    names: list[str] = []
    texts: list[str] = []
    properties: list[dict[str, Any]] = []
    neighbor_lists: list[tuple[str, str, str, list[Any]]] = []  # (node id, node type, neighbor type, ids)
    for key, table in document.items():
        if not key.endswith(NODE_KEY_SUFFIX) or not isinstance(table, dict):
            raise GraphValidationError(f"{file}: top-level key {key!r} is not a '<type>{NODE_KEY_SUFFIX}' table of "
                                       "nodes; found keys: " + ", ".join(list(document)[:10]))
        node_type = key[: -len(NODE_KEY_SUFFIX)]
        for node_id, node in table.items():
            if not isinstance(node, dict):
                raise GraphValidationError(f"{file}: node {node_id!r} of {key} is not an object")
            features = node.get("features")
            features = {} if features is None else features
            if not isinstance(features, dict):
                raise GraphValidationError(f"{file}: node {node_id!r}: 'features' must be an object")
            name_field, node_name = _node_name(features, str(node_id))
            ids.append(str(node_id))
            types.append(node_type)
            names.append(node_name)
            texts.append(node_text(node_name, {k: v for k, v in features.items() if k != name_field}))
            properties.append(features)
            for neighbor_type, neighbor_ids in (node.get("neighbors") or {}).items():
                if not isinstance(neighbor_ids, list):
                    raise GraphValidationError(f"{file}: node {node_id!r}: neighbors[{neighbor_type!r}] must be a "
                                               "list of node ids")
                neighbor_lists.append((str(node_id), node_type, str(neighbor_type), neighbor_ids))
    known = set(ids)
    type_lookup = {normalize_name(t): t for t in dict.fromkeys(types)}
    sources: list[str] = []
    targets: list[str] = []
    relations: list[str] = []
    dropped, example = 0, None
    for node_id, node_type, neighbor_type, neighbor_ids in neighbor_lists:
        endpoints = _edge_types(neighbor_type, type_lookup)
        reverse = endpoints is not None and endpoints[1] == node_type and endpoints[0] != node_type
        for neighbor in neighbor_ids:
            neighbor = str(neighbor)
            if neighbor not in known:
                dropped += 1
                example = example or dropped_example(node_type, node_id, neighbor_type, neighbor)
                continue
            source, target = (neighbor, node_id) if reverse else (node_id, neighbor)
            sources.append(source)
            targets.append(target)
            relations.append(neighbor_type)
    metadata = {"name": name or file.parent.name, "source": f"GRBench graph {file.resolve()}",
                **report_dropped(file, dropped, example)}
    return build_graph(NodeTable(ids, types, names, texts, properties, source=str(file)),
                       EdgeTable(sources, targets, relations, source=str(file)), metadata=metadata)


def dropped_example(node_type: str, node_id: str, neighbor_type: str, neighbor: str) -> str:
    """One dropped neighbour, as the warning shows it: ``paper 'p1' -> author 'a9'``."""
    return f"{node_type} {node_id!r} -> {neighbor_type} {neighbor!r}"


def report_dropped(file: Path, dropped: int, example: str | None) -> dict[str, Any]:
    """Warn (one line: the count and an example) when neighbours naming no node were dropped; the graph's
    metadata entries that record them."""
    if not dropped:
        return {"dropped_edges": 0}
    log.warning("warning: %s: dropped %s edge(s) whose neighbour names no node of the graph, e.g. %s", file,
                f"{dropped:,}", example)
    return {"dropped_edges": dropped, "dropped_edge_example": example}


def import_grbench(path: str | Path, out: str | Path, name: str | None = None) -> Path:
    """Load a GRBench graph and save it to ``out``; nothing is written if loading fails."""
    check_source_outside_target(_graph_file(path).parent, out)
    return save_graph(load_grbench(path, name=name), out)


def load_grbench_questions(path: str | Path) -> list[GRBenchQuestion]:
    """Questions of a GRBench ``data.json`` (or a folder holding one); ``ValueError`` names the bad line."""
    file = grbench_questions_file(path)
    questions: list[GRBenchQuestion] = []
    with file.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            if line.strip():
                questions.append(parse_grbench_question(line, f"{file}, line {line_no}"))
    return questions


def grbench_questions_file(path: str | Path) -> Path:
    """``path`` itself, or the ``data.json`` inside a GRBench domain folder."""
    file = Path(path)
    return file / "data.json" if file.is_dir() else file


def parse_grbench_question(line: str, where: str) -> GRBenchQuestion:
    """One line of a GRBench question file; ``ValueError`` starting with ``where`` says what is wrong."""
    record = parse_json_object(line, where)
    missing = [f for f in QUESTION_FIELDS if f not in record]
    if missing:
        raise ValueError(f"{where}: missing field(s) {', '.join(missing)}; required: {', '.join(QUESTION_FIELDS)}")
    if not isinstance(record["question"], str) or not record["question"].strip():
        raise ValueError(f"{where}: 'question' must be a non-empty string")
    return GRBenchQuestion(str(record["qid"]), record["question"], str(record["answer"]))


class AnswerMatcher:
    """Maps free-text answers to node ids by name (normalised: case and punctuation ignored)."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        index: dict[str, list[str]] = {}
        for i in range(graph.num_nodes):
            index.setdefault(name_key(graph.name(i)), []).append(graph.node_id(i))
        self._by_name = {k: tuple(v) for k, v in index.items()}

    def ids(self, answer: str) -> list[str]:
        """Node ids named by ``answer``: the whole answer, else comma-separated parts, longest runs first
        (``"Purpura, Thrombocytopenic, Idiopathic, Proteinuria"`` names two nodes). Unmatched parts are skipped;
        a name shared by several nodes gives them all."""
        whole = self._by_name.get(name_key(answer))
        if whole:
            return list(whole)
        parts = [p.strip() for p in str(answer).split(",")]
        found: dict[str, None] = {}
        start = 0
        while start < len(parts):
            for end in range(len(parts), start, -1):
                ids = self._by_name.get(name_key(", ".join(parts[start:end])))
                if ids:
                    found.update(dict.fromkeys(ids))
                    start = end
                    break
            else:
                start += 1
        return list(found)


UNLABELLED = "unlabelled"
LEVELS_FILE = Path(__file__).with_name("grbench_levels.json")


def grbench_levels(path: str | Path | None = None) -> dict[str, list[tuple[int, int, str]]]:
    """Domain -> ``(first qid, last qid, level)`` ranges of a level table (default: the shipped one, which names
    its source); ``ValueError`` names a malformed entry."""
    path = LEVELS_FILE if path is None else path
    table = json.loads(Path(path).read_text(encoding="utf-8"))
    valid = table.get("levels", ["easy", "medium", "hard"])
    out: dict[str, list[tuple[int, int, str]]] = {}
    for domain, ranges in (table.get("domains") or {}).items():
        for entry in ranges:
            if not (isinstance(entry, list) and len(entry) == 3 and entry[2] in valid):
                raise ValueError(f"{path}: domain {domain!r}: entry {entry!r} is not [first qid, last qid, level] "
                                 f"with a level in {', '.join(valid)}")
            out.setdefault(domain, []).append((int(entry[0]), int(entry[1]), str(entry[2])))
    return out


def grbench_level(domain: str, qid: str, levels: dict[str, list[tuple[int, int, str]]]) -> str:
    """The level of question ``qid`` of ``domain`` in ``levels``, else :data:`UNLABELLED` (never guessed)."""
    if not qid.isdigit():
        return UNLABELLED
    number = int(qid)
    for first, last, level in levels.get(domain, ()):
        if first <= number <= last:
            return level
    return UNLABELLED


def name_key(text: str) -> str:
    """A name or answer as the matcher compares it: lower case, punctuation and extra spaces dropped."""
    return " ".join(re.sub(r"[^\w]+", " ", str(text).lower()).split())


def _graph_file(path: str | Path) -> Path:
    file = Path(path)
    if file.is_dir():
        file = file / "graph.json"
    if not file.is_file():
        raise FileNotFoundError(f"GRBench graph not found: {file} (expected graph.json from Graph-CoT's release)")
    return file


def _node_name(features: dict[str, Any], fallback: str) -> tuple[str | None, str]:
    """(feature key, name) of a node: its first name-like feature, else its id."""
    for key in NAME_FEATURES:
        value = features.get(key)
        if isinstance(value, str) and value.strip():
            return key, value.strip()
        if isinstance(value, int | float) and not isinstance(value, bool):
            return key, str(value)
    return None, fallback


def _edge_types(neighbor_type: str, type_lookup: dict[str, str]) -> tuple[str, str] | None:
    """(source type, target type) of a ``Source-verb-Target`` neighbor type naming two node types, else None."""
    parts = neighbor_type.split("-")
    if len(parts) < 3:
        return None
    source = type_lookup.get(normalize_name(parts[0]))
    target = type_lookup.get(normalize_name(parts[-1]))
    if source is None or target is None:
        return None
    return source, target
