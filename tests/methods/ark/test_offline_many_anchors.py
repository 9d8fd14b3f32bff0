"""Many named entities in a question (a profile): the offline policy's candidates come from every anchor's whole
neighbourhood, scored across the anchors, not from each anchor's first page ranked by the question's text.

A recipe graph (no clinical names): six ingredients, each used by ten one-ingredient decoy recipes whose text
repeats every ingredient's name (so the question's text ranks them first) and by one recipe that uses all six and
whose text says none of them. With a budget of three neighbours a call, each ingredient's first page shows decoys
only; the recipe sharing all six is found by reading the further pages.
"""

from __future__ import annotations

import pytest

from ark.graph import EdgeTable, NodeTable, build_graph
from ark.index import open_index
from ark.methods.ark.api import ARK
from ark.methods.ark.options import ToolConfig
from ark.runtime.tools import arguments_of

INGREDIENTS = ["saffron", "fennel", "quince", "sorrel", "juniper", "tamarind"]
QUESTION = "Which recipe uses saffron, fennel, quince, sorrel, juniper and tamarind?"


def recipe_graph():
    ids = [f"ING:{i}" for i in INGREDIENTS]
    types = ["ingredient"] * len(INGREDIENTS)
    labels = [i.capitalize() for i in INGREDIENTS]
    texts = [f"{i.capitalize()}, an ingredient." for i in INGREDIENTS]
    edges = []
    for name in INGREDIENTS:
        for k in range(10):
            rid = f"REC:{name}-{k}"
            ids.append(rid), types.append("recipe"), labels.append(f"Plain {name} dish {k}")
            texts.append("A recipe to try with " + ", ".join(INGREDIENTS) + " on the side.")
            edges.append((rid, f"ING:{name}", "uses"))
    ids.append("REC:all"), types.append("recipe"), labels.append("Grandmother's stew")
    texts.append("An old family recipe.")
    edges += [("REC:all", f"ING:{i}", "uses") for i in INGREDIENTS]
    src, dst, rel = zip(*edges, strict=True)
    return build_graph(NodeTable(ids, types, labels, texts, source="recipes"), EdgeTable(src, dst, rel),
                       metadata={"name": "recipes"})


@pytest.fixture(scope="module")
def retrieval():
    graph = recipe_graph()
    ark = ARK(graph, llm=None, index=open_index(graph, progress=False), n_agents=1,
              tool_config=ToolConfig(neighborhood_budget=3))
    return graph, ark.retrieve(QUESTION)


def test_the_node_sharing_every_named_entity_comes_first_though_no_first_page_lists_it(retrieval):
    graph, result = retrieval
    assert graph.name(result.ranked[0].index) == "Grandmother's stew"


def test_the_anchors_neighbourhoods_are_read_past_their_first_page(retrieval):
    _, result = retrieval
    offsets = [arguments_of(c).get("offset", 0) for m in result.trajectories[0].messages if m.role == "assistant"
               for c in m.tool_calls or [] if c.name == "search_in_neighborhood"]
    assert max(offsets) >= 9  # ten decoys and the stew: pages at 3, 6 and 9
