"""A small graph on which SeedER must learn to cross a connector that looks nothing like the question.

For each topic word T (volcano, glacier, ...): a topic node "T"; six look-alike pages "T facts", "T history", ...
(``describes``) each with a souvenir ``sells``-linked to it; and one catalogue code such as "QX-4711"
(``filed under``) that ``contains`` the answer, a part number such as "part 8813-B". The question is "Which part
belongs to T?". Dense seeds land on the topic and its look-alikes; K-HOP-WITH-FILTERING with a small budget keeps
the look-alikes and their souvenirs, because the code's text is unrelated to the question, and so never reaches
the answer two hops away. A policy can learn "follow `filed under`, then `contains`".
"""

from __future__ import annotations

import numpy as np

from ark.graph import EdgeTable, KnowledgeGraph, NodeTable, build_graph

TOPICS = ["volcano", "glacier", "violin", "tractor", "lighthouse", "penguin", "cathedral", "submarine", "orchid",
          "telescope", "saxophone", "canyon", "windmill", "dolphin", "pyramid", "tornado", "harbor", "comet",
          "meadow", "bicycle", "castle", "coral reef", "rainforest", "locomotive"]
PAGES = ["facts", "history", "photos", "news", "trivia", "guide"]


def build_connector_graph(topics: list[str] | None = None, seed: int = 0) -> tuple[KnowledgeGraph, list[dict]]:
    """The graph and its questions ``{"id", "query", "answer_ids"}`` (one per topic)."""
    rng = np.random.default_rng(seed)
    ids, types, names, texts = [], [], [], []
    src, dst, rel = [], [], []
    questions = []

    def node(node_id: str, node_type: str, text: str) -> str:
        ids.append(node_id), types.append(node_type), names.append(text), texts.append(text)
        return node_id

    for i, topic in enumerate(topics or TOPICS):
        t = node(f"topic:{i}", "topic", topic.capitalize())
        for j, page in enumerate(PAGES):
            p = node(f"page:{i}:{j}", "page", f"{topic.capitalize()} {page}")
            src.append(t), dst.append(p), rel.append("describes")
            s = node(f"souvenir:{i}:{j}", "item", f"{topic.capitalize()} {page} souvenir")
            src.append(p), dst.append(s), rel.append("sells")
        code = node(f"code:{i}", "code", f"QX-{rng.integers(1000, 9999)}")
        src.append(t), dst.append(code), rel.append("filed_under")
        answer = node(f"part:{i}", "item", f"part {rng.integers(1000, 9999)}-{chr(65 + int(rng.integers(26)))}")
        src.append(code), dst.append(answer), rel.append("contains")
        questions.append({"id": f"q{i}", "query": f"Which part belongs to {topic}?", "answer_ids": [answer]})
    graph = build_graph(NodeTable(ids, types, names, texts, source="connector"), EdgeTable(src, dst, rel),
                        metadata={"name": "connector", "source": "tests/support/seeder_fixture.py"})
    return graph, questions
