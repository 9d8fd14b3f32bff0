"""ARK's tools: observation formats and their structured twins, filters, error observations, caps, ablations, budgets,
telemetry."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from ark.graph import EdgeTable, NodeTable, build_graph
from ark.methods.ark.options import ToolConfig
from ark.methods.ark.tools import TOOL_SPECS, Toolbox
from ark.runtime.tools import dumped
from tests.support.graphs import build_index, build_small_graph


def toolbox(graph, index, **config):
    return Toolbox(graph, index, ToolConfig(**config))


def unchecked_toolbox(graph, index, **config):
    """A toolbox taking answers no search showed (the paper's unchecked SELECT): these tests add nodes directly."""
    return Toolbox(graph, index, ToolConfig(**config), allow_unseen_answers=True)


# ------------------------------------------------------------------------------------------------ schemas
def to_openai_tools(config=None):
    return Toolbox(build_small_graph(), None, config).openai_tools()


def to_mcp_tools(config=None):
    return Toolbox(build_small_graph(), None, config).mcp_tools()


def test_openai_schemas_come_from_the_argument_models():
    tools = {t["function"]["name"]: t["function"] for t in to_openai_tools()}
    assert list(tools) == ["search_in_graph", "search_in_neighborhood", "add_to_answer", "finish"]
    neighborhood = tools["search_in_neighborhood"]["parameters"]
    assert neighborhood["required"] == ["node_index"]
    assert set(neighborhood["properties"]) == {"node_index", "query", "node_types", "edge_types"}
    node_types = neighborhood["properties"]["node_types"]  # Optional flattened, no anyOf/null
    assert node_types["type"] == "array" and node_types["items"] == {"type": "string"}
    item = tools["add_to_answer"]["parameters"]["properties"]["answer_nodes"]["items"]
    assert item["properties"]["node_index"]["type"] == "integer" and "$ref" not in json.dumps(tools)
    assert [m["name"] for m in to_mcp_tools()] == list(TOOL_SPECS)
    assert to_mcp_tools()[0]["inputSchema"] == tools["search_in_graph"]["parameters"]


def test_ablation_switches_change_the_schemas():
    names = [t["function"]["name"] for t in to_openai_tools(ToolConfig.for_ablation("no_neighbors"))]
    assert "search_in_neighborhood" not in names and len(names) == 3

    def props(ablation):
        tools = to_openai_tools(ToolConfig.for_ablation(ablation))
        return set(tools[1]["function"]["parameters"]["properties"])

    assert props("neighbors_no_query") == {"node_index", "node_types", "edge_types"}
    assert props("neighbors_no_filters") == {"node_index", "query"}
    with pytest.raises(ValueError, match="valid: full"):
        ToolConfig.for_ablation("nope")


# ------------------------------------------------------------------------------------------------ global search
def test_global_search_lists_nodes_with_scores_and_snippets(graph, index):
    outcome = toolbox(graph, index).execute("search_in_graph", json.dumps({"query": "febrile seizures"}))
    assert outcome.ok and outcome.text.startswith("Found ")
    results = outcome.data.results
    assert results[0].index == 3 and outcome.text.split("\n")[2].startswith("[3] Febrile seizure (phenotype)")
    assert [r.index for r in results] == outcome.node_indices and len(results) <= 5
    assert all(r.score > 0 for r in results) and outcome.data.shortened is None
    assert "shortened" not in dumped(outcome.data)  # and the record has no such key
    assert all(f"[{r.index}] " in outcome.text and f"Score: {r.score:.3f}" in outcome.text for r in results)
    assert "**" in outcome.text and "Context:" in outcome.text


def test_global_search_size_default_and_cap(graph, index):
    box = toolbox(graph, index, max_global_size=3)
    assert len(box.execute("search_in_graph", '{"query": "seizure epilepsy nervous head"}').node_indices) <= 5
    capped = box.execute("search_in_graph", '{"query": "seizure epilepsy nervous head migraine", "size": "50"}')
    assert len(capped.node_indices) == 3 and "(size capped at 3)" in capped.text


def test_zero_results_and_empty_query(graph, index):
    box = toolbox(graph, index)
    outcome = box.execute("search_in_graph", '{"query": "xylophone"}')
    assert outcome.ok and outcome.text == "No nodes found for query: 'xylophone'"
    assert box.telemetry.zero_result_calls == 1
    blank = box.execute("search_in_graph", '{"query": "  "}')
    assert not blank.ok and "non-empty" in blank.text


# ------------------------------------------------------------------------------------------------ neighborhood
def test_neighborhood_shows_relations_and_directions(graph, index):
    outcome = toolbox(graph, index).execute("search_in_neighborhood", '{"node_index": 0}')
    assert outcome.text.startswith("Search around [0] Dravet syndrome (disease) found 3 results:")
    by_index = {r.index: r for r in outcome.data.results}
    assert set(by_index) == {2, 3, 5} and outcome.data.total == 3 and outcome.data.center == 0
    assert by_index[2].out == ["has_phenotype"] and by_index[2].in_ == []
    # SCN1A: Dravet -associated_with-> SCN1A and SCN1A -associated_with-> Dravet, on one line.
    assert by_index[5].out == ["associated_with"] and by_index[5].in_ == ["associated_with"]
    assert "-associated_with-> [5] SCN1A (gene/protein) <-associated_with-" in outcome.text


def test_neighborhood_query_ranks_by_bm25(graph, index):
    outcome = toolbox(graph, index).execute("search_in_neighborhood", '{"node_index": 0, "query": "fever"}')
    assert outcome.data.results[0].index == 3 and "1. -has_phenotype-> [3] Febrile seizure" in outcome.text
    assert outcome.data.matching == 1 and outcome.data.query == "fever"
    assert "(1 matches the query)" in outcome.text and "**fever**" in outcome.text
    # The paper's Neighbors(v, q, F) is a top-k over N_F: non-matching neighbors follow the matching ones.
    assert len(outcome.node_indices) == 3


def test_neighborhood_filters_are_case_and_separator_insensitive(graph, index):
    box = toolbox(graph, index)
    typed = box.execute("search_in_neighborhood", '{"node_index": 0, "node_types": ["Gene/Protein"]}')
    assert typed.node_indices == [5] and "node_types=gene/protein" in typed.text
    assert typed.data.node_types == ["gene/protein"] and typed.data.edge_types is None
    related = box.execute("search_in_neighborhood", '{"node_index": "3", "edge_types": ["IS-A"]}')
    assert sorted(related.node_indices) == [2] and "edge_types=is_a" in related.text
    incoming = box.execute("search_in_neighborhood", '{"node_index": 3, "edge_type": "has phenotype"}')
    assert sorted(incoming.node_indices) == [0, 5] and "<-has_phenotype-" in incoming.text


def test_unknown_names_list_the_valid_ones(graph, index):
    box = toolbox(graph, index)
    bad_type = box.execute("search_in_neighborhood", '{"node_index": 0, "node_types": ["disease", "drug"]}')
    assert not bad_type.ok and bad_type.error == "unknown_name" and bad_type.data.node_types == ["drug"]
    assert "Unknown node type 'drug'. Valid node types: disease, phenotype, gene/protein" in bad_type.text
    bad_rel = box.execute("search_in_neighborhood", '{"node_index": 4, "edge_type": "treats"}')
    assert "Valid edge types: has_phenotype, associated_with, is_a" in bad_rel.text
    assert "Edge types at node [4]: has_phenotype, is_a" in bad_rel.text
    missing = box.execute("search_in_neighborhood", '{"node_index": 999}')
    assert missing.error == "unknown_node" and "0 to 7" in missing.text
    no_field = box.execute("search_in_neighborhood", '{"query": "x"}')
    assert no_field.error == "invalid_arguments" and "node_index: missing required field" in no_field.text
    assert box.telemetry.invalid_calls == 4


def test_filters_are_sets_and_the_single_value_form_still_works(graph, index):
    box = toolbox(graph, index)
    both = box.execute("search_in_neighborhood", '{"node_index": 3, "node_types": ["disease", "gene/protein"]}')
    assert sorted(both.node_indices) == [0, 5] and both.data.node_types == ["disease", "gene/protein"]
    # F_E as a set: is_a (to Seizure) or has_phenotype (from Dravet and SCN1A), but not associated_with.
    relations = box.execute("search_in_neighborhood", '{"node_index": 3, "edge_types": ["is_a", "has_phenotype"]}')
    assert sorted(relations.node_indices) == [0, 2, 5] and relations.data.edge_types == ["is_a", "has_phenotype"]
    combined = box.execute("search_in_neighborhood",
                           '{"node_index": 3, "node_types": ["phenotype"], "edge_types": ["is_a", "has_phenotype"]}')
    assert combined.node_indices == [2]
    # The single-value forms (a string), a bare string for the set, and a JSON-encoded list are all accepted.
    single = box.execute("search_in_neighborhood", '{"node_index": 0, "node_type": "gene/protein"}')
    bare = box.execute("search_in_neighborhood", '{"node_index": 0, "node_types": "gene/protein"}')
    encoded = box.execute("search_in_neighborhood", json.dumps({"node_index": 0, "node_types": '["gene/protein"]'}))
    assert single.node_indices == bare.node_indices == encoded.node_indices == [5]
    merged = box.execute("search_in_neighborhood",
                         '{"node_index": 0, "node_type": "phenotype", "node_types": ["gene/protein"]}')
    assert sorted(merged.node_indices) == [2, 3, 5]
    bad = box.execute("search_in_neighborhood", '{"node_index": 4, "edge_types": ["treats", "cures"]}')
    assert "Unknown edge types 'treats', 'cures'" in bad.text and bad.data.edge_types == ["treats", "cures"]


def test_zero_result_neighborhood(graph, index):
    box = toolbox(graph, index)
    outcome = box.execute("search_in_neighborhood", '{"node_index": 4, "node_types": ["gene/protein"]}')
    assert "found no results" in outcome.text and outcome.node_indices == []
    assert box.telemetry.zero_result_calls == 1


def test_ablation_without_query_ignores_the_query(graph, index):
    box = toolbox(graph, index, neighborhood_query=False)
    outcome = box.execute("search_in_neighborhood", '{"node_index": 0, "query": "fever"}')
    # Row order: relation code (has_phenotype before associated_with), direction, node index.
    assert outcome.node_indices == [2, 3, 5] and "query=" not in outcome.text


def test_ablation_without_filters_ignores_types(graph, index):
    box = toolbox(graph, index, neighborhood_filters=False)
    outcome = box.execute("search_in_neighborhood", '{"node_index": 0, "node_types": ["gene/protein"]}')
    assert sorted(outcome.node_indices) == [2, 3, 5] and "node_type" not in outcome.text


def test_ablation_without_neighborhood_rejects_the_tool(graph, index):
    box = toolbox(graph, index, neighborhood_tool=False)
    outcome = box.execute("search_in_neighborhood", '{"node_index": 0}')
    assert outcome.error == "unknown_tool" and "add_to_answer, finish, search_in_graph" in outcome.text


def test_keyword_ranking_option_follows_the_reference_rule(graph, index):
    box = toolbox(graph, index, neighborhood_ranking="keyword")
    outcome = box.execute("search_in_neighborhood", '{"node_index": 0, "query": "the febrile seizure"}')
    # Name containing the whole query first; then text matching query words; non-matching neighbors dropped.
    assert outcome.node_indices[0] == 3 and 5 not in outcome.node_indices


# ------------------------------------------------------------------------------------------------ answers
def test_add_to_answer_keeps_order_without_duplicates(graph, index):
    box = unchecked_toolbox(graph, index)
    first = box.execute("add_to_answer", json.dumps(
        {"answer_nodes": [{"node_index": 3, "reasoning": "fever seizures"}, {"node_index": "0"}]}))
    assert first.ok and first.node_indices == [3, 0]
    assert "- [3] Febrile seizure (phenotype)" in first.text and "Reasoning: fever seizures" in first.text
    again = box.execute("add_to_answer", '{"answer_nodes": [{"node_index": 0}, {"node_index": 77}, {"node_index": 5}]}')
    assert again.node_indices == [5] and "Already in the answer: [0]" in again.text and "77" in again.text
    assert box.answer == [3, 0, 5]
    encoded = box.execute("add_to_answer", json.dumps({"answer_nodes": json.dumps([{"node_index": 7}])}))
    assert encoded.node_indices == [7]
    done = box.execute("finish", "")
    assert done.finished and box.finished and "4 nodes" in done.text


def test_null_reasoning_is_accepted_as_none_given(graph, index):
    box = unchecked_toolbox(graph, index)
    outcome = box.execute("add_to_answer", '{"answer_nodes": [{"node_index": 3, "reasoning": null}]}')
    assert outcome.ok and outcome.node_indices == [3] and box.answer == [3]
    assert "Reasoning:" not in outcome.text and box.reasoning[3] == ""


def test_counts_in_observations_agree_in_number(graph, index):
    box = unchecked_toolbox(graph, index)
    one = box.execute("add_to_answer", '{"answer_nodes": [{"node_index": 3}]}')
    assert one.text.endswith("The answer now has 1 node.")
    two = box.execute("add_to_answer", '{"answer_nodes": [{"node_index": 0}]}')
    assert two.text.endswith("The answer now has 2 nodes.")
    found = box.execute("search_in_graph", '{"query": "seizure", "size": 1}')
    assert found.text.startswith("Found 1 node for query: 'seizure':")
    assert box.execute("finish", "").text == "Finished. The answer has 2 nodes."


def test_an_answer_no_observation_showed_is_refused_and_counted_invalid(graph, index):
    box = toolbox(graph, index)
    blind = box.execute("add_to_answer", '{"answer_nodes": [{"node_index": 0}, {"node_index": 1}]}')
    assert not blind.ok and blind.error == "unseen_node" and box.answer == []
    assert "no search of yours has shown [0], [1]" in blind.text and "search for them first" in blind.text
    assert blind.data.unseen == [0, 1] and box.telemetry.invalid_calls == 1
    found = box.execute("search_in_graph", '{"query": "febrile seizure", "size": 1}')
    [shown] = found.node_indices
    mixed = box.execute("add_to_answer", json.dumps({"answer_nodes": [{"node_index": shown}, {"node_index": 1}]}))
    assert mixed.ok and box.answer == [shown] and mixed.data.unseen == [1]
    assert box.telemetry.invalid_calls == 1  # a call that added a seen node is valid; the unseen one is named
    around = box.execute("search_in_neighborhood", json.dumps({"node_index": shown}))
    neighbour = next(n for n in around.node_indices if n not in box.answer)
    assert box.execute("add_to_answer", json.dumps({"answer_nodes": [{"node_index": neighbour}]})).ok


def test_the_paper_switch_accepts_answers_no_observation_showed(graph, index):
    box = unchecked_toolbox(graph, index)
    assert box.execute("add_to_answer", '{"answer_nodes": [{"node_index": 0}]}').ok and box.answer == [0]
    assert box.telemetry.invalid_calls == 0


def test_answer_cap_and_call_budgets(graph, index):
    box = unchecked_toolbox(graph, index, max_answer_nodes=2, max_global_calls=1, max_neighborhood_calls=1)
    box.execute("add_to_answer", '{"answer_nodes": [{"node_index": 1}, {"node_index": 2}, {"node_index": 3}]}')
    assert box.answer == [1, 2]
    assert box.execute("search_in_graph", '{"query": "seizure"}').ok
    refused = box.execute("search_in_graph", '{"query": "headache"}')
    assert refused.error == "budget" and "1 global searches" in refused.text
    assert box.execute("search_in_neighborhood", '{"node_index": 0}').ok
    assert box.execute("search_in_neighborhood", '{"node_index": 1}').error == "budget"
    assert box.telemetry.global_calls == 1 and box.telemetry.neighborhood_calls == 1
    assert box.telemetry.budget_refusals == 3 and box.telemetry.invalid_calls == 0


def test_bad_calls_are_answered_never_raised(graph, index):
    box = toolbox(graph, index)
    assert box.execute("search_in_graph", '{"query": "sei').error == "invalid_json"
    assert box.execute("search_in_graph", "[1, 2]").error == "invalid_json"
    assert box.execute("teleport", "{}").error == "unknown_tool"
    assert box.execute("add_to_answer", '{"answer_nodes": []}').error == "invalid_arguments"
    assert box.execute("add_to_answer", '{"answer_nodes": [{"node_index": -1}]}').error == "unknown_node"
    assert box.execute("search_in_neighborhood", '{"node_index": "abc"}').error == "invalid_arguments"
    assert box.telemetry.invalid_calls == 6 and box.answer == []


def test_repeated_identical_calls_are_counted(graph, index):
    box = toolbox(graph, index)
    box.execute("search_in_graph", '{"query": "seizure", "size": 5}')
    box.execute("search_in_graph", '{"size": 5, "query": "seizure"}')  # same call, other key order
    box.execute("search_in_graph", '{"query": "seizure", "size": 6}')
    assert box.telemetry.repeated_calls == 1 and box.telemetry.global_calls == 3


def test_observation_cap_shortens_entries_and_never_drops_them(graph, index):
    box = toolbox(graph, index, max_observation_chars=450)
    outcome = box.execute("search_in_graph", '{"query": "seizure epilepsy nervous headache migraine", "size": 8}')
    assert len(outcome.text) <= 450 and "Context:" not in outcome.text
    assert outcome.data.shortened.snippet_chars == 0
    listed = [int(line[1:line.index("]")]) for line in outcome.text.split("\n") if line.startswith("[")]
    assert listed == [r.index for r in outcome.data.results] == outcome.node_indices and len(listed) == 8
    tiny = toolbox(graph, index, max_observation_chars=200)  # below what 8 entries need: longer, but complete
    complete = tiny.execute("search_in_graph", '{"query": "seizure epilepsy nervous headache migraine", "size": 8}')
    assert len([line for line in complete.text.split("\n") if line.startswith("[")]) == 8


def _long_named_graph(n: int = 60):
    """A hub whose neighbours have ~110-character names and long texts (the worst case for the cap)."""
    words = ["kinase", "receptor", "channel", "transporter", "ligase", "factor", "binding", "domain"]
    name = ("autosomal dominant progressive {w} {i} deficiency with congenital anomalies of the kidney and urinary "
            "tract type {i}")
    ids = ["hub"] + [f"n{i}" for i in range(n)]
    names = ["Hub syndrome with a long name"] + [name.format(w=words[i % 8], i=i) for i in range(n)]
    texts = [names[0]] + [f"{names[i + 1]}. " + f"protein {words[i % 8]} " * 60 for i in range(n)]
    edges = EdgeTable(["hub"] * n, [f"n{i}" for i in range(n)], ["has_phenotype"] * n)
    return build_graph(NodeTable(ids, ["disease"] + ["phenotype"] * n, names, texts), edges)


def test_thirty_hits_and_twenty_neighbours_with_long_names_are_all_shown():
    """``search_in_graph(size=30)`` and a 20-neighbour call on long-named nodes present every result, and the
    structured results list exactly the entries the text shows."""
    graph = _long_named_graph()
    box = Toolbox(graph, build_index(graph), ToolConfig())
    found = box.execute("search_in_graph", '{"query": "protein kinase receptor congenital kidney", "size": 30}')
    listed = [int(line[1:line.index("]")]) for line in found.text.split("\n") if line.startswith("[")]
    assert len(listed) == 30 and listed == [r.index for r in found.data.results] == found.node_indices
    assert len(found.text) <= 6000 and "omitted" not in dumped(found.data)
    around = box.execute("search_in_neighborhood", '{"node_index": 0, "query": "kinase receptor"}')
    lines = [line for line in around.text.split("\n") if line[:1].isdigit()]
    assert len(lines) == 20 and [r.index for r in around.data.results] == around.node_indices
    assert [int(line.split("[", 1)[1].split("]")[0]) for line in lines] == around.node_indices
    assert len(around.text) <= 6000 and "(Showing 20 of 60 results." in around.text


# ------------------------------------------------------------------------------------------------ hub
def build_hub_graph(n_neighbors: int = 5000):
    words = ["kinase", "receptor", "channel", "transporter", "ligase", "factor", "binding", "domain"]
    ids = ["hub"] + [f"n{i}" for i in range(n_neighbors)]
    types = ["disease"] + [("gene" if i % 3 else "drug") for i in range(n_neighbors)]
    names = ["Hub disease"] + [f"protein {i} {words[i % 8]}" for i in range(n_neighbors)]
    texts = ["Hub disease"] + [f"protein {i} {words[i % 8]} {words[(i * 7) % 8]} " * 5 for i in range(n_neighbors)]
    src = ["hub" if i % 2 else f"n{i}" for i in range(n_neighbors)]
    dst = [f"n{i}" if i % 2 else "hub" for i in range(n_neighbors)]
    rel = [("targets", "associated", "expressed", "binds", "regulates")[i % 5] for i in range(n_neighbors)]
    return build_graph(NodeTable(ids, types, names, texts), EdgeTable(src, dst, rel))


def test_hub_with_thousands_of_neighbors_stays_capped_and_fast():
    graph = build_hub_graph()
    box = Toolbox(graph, build_index(graph), ToolConfig())
    calls = [
        '{"node_index": 0}',
        '{"node_index": 0, "query": "kinase channel"}',
        '{"node_index": 0, "query": "receptor", "node_type": "GENE", "edge_type": "targets"}',
    ]
    box.execute("search_in_neighborhood", calls[1])  # warm-up (lazy caches)
    for call in calls:
        elapsed = []
        for _ in range(3):  # best of three: the bound is about the work, not a busy machine's scheduling
            started = time.perf_counter()
            outcome = box.execute("search_in_neighborhood", call)
            elapsed.append(time.perf_counter() - started)
        assert min(elapsed) < 0.05, f"{call} took {min(elapsed) * 1000:.1f} ms"
        assert len(outcome.text) <= 6000 and len(outcome.node_indices) == 20
        assert "(Showing 20 of " in outcome.text
    first = box.execute("search_in_neighborhood", calls[1])
    assert "found 5000 results" in first.text
    shown = [graph.name(r.index) for r in first.data.results]
    assert all("kinase" in name or "channel" in name for name in shown[:5])
    keyword = Toolbox(graph, box.index, ToolConfig(neighborhood_ranking="keyword"))
    elapsed = []
    for _ in range(3):
        started = time.perf_counter()
        assert len(keyword.execute("search_in_neighborhood", calls[1]).node_indices) == 20
        elapsed.append(time.perf_counter() - started)
    assert min(elapsed) < 0.05
    scores = np.asarray(box.index.score("kinase", np.arange(1, 5001)))
    assert int((scores > 0).sum()) > 20


def test_offset_shows_the_next_page_of_the_same_ranking_and_is_hidden_unless_asked():
    graph = build_hub_graph()
    box = Toolbox(graph, build_index(graph), ToolConfig())
    first = box.execute("search_in_neighborhood", '{"node_index": 0, "query": "kinase"}')
    second = box.execute("search_in_neighborhood", '{"node_index": 0, "query": "kinase", "offset": 20}')
    assert second.data.offset == 20 and len(second.node_indices) == 20
    assert not set(first.node_indices) & set(second.node_indices)
    ranking = first.node_indices + second.node_indices
    both = box.execute("search_in_neighborhood", '{"node_index": 0, "query": "kinase"}')
    assert both.node_indices == ranking[:20]
    assert "21. " in second.text and "(Showing results 21-40 of 5000 results." in second.text
    hidden = Toolbox(graph, None, ToolConfig()).openai_tools()[1]["function"]["parameters"]["properties"]
    shown = Toolbox(graph, None, ToolConfig(neighborhood_paging=True)).openai_tools()[1]
    assert "offset" not in hidden and "offset" in shown["function"]["parameters"]["properties"]


def test_finish_records_a_stated_confidence_and_reason(graph, index):
    box = toolbox(graph, index)
    outcome = box.execute("finish", '{"confidence": "low", "reason": "The graph has no treatment relation."}')
    assert outcome.finished and outcome.data.confidence == "low"
    assert (box.confidence, box.confidence_reason) == ("low", "The graph has no treatment relation.")
    refused = toolbox(graph, index).execute("finish", '{"confidence": "certain"}')
    assert not refused.ok and "confidence" in refused.text


def test_hub_ranking_matches_a_full_stable_sort_of_first_occurrences():
    """The hub path (run-wise dedup, top-k instead of a full sort, relations looked up per run) ranks exactly like
    the plain definition: neighbours in order of first occurrence in the row, stably sorted by score."""
    from ark.methods.ark.tools.neighborhood import SMALL_NEIGHBORHOOD, filtered_neighborhood, rank_neighborhood

    n = SMALL_NEIGHBORHOOD + 1500
    ids = ["hub"] + [f"n{i}" for i in range(n)]
    words = ["kinase", "receptor", "channel", "ligase"]
    texts = ["hub"] + [f"{words[i % 4]} {words[(i // 4) % 4]}" for i in range(n)]
    src, dst, rel = [], [], []
    for i in range(n):  # every neighbour once, a third again by another relation, some in both directions
        src.append("hub"), dst.append(f"n{i}"), rel.append(("targets", "binds")[i % 2])
        if i % 3 == 0:
            src.append(f"n{i}"), dst.append("hub"), rel.append("regulates")
        if i % 7 == 0:
            src.append("hub"), dst.append(f"n{i}"), rel.append("expressed")
    graph = build_graph(NodeTable(ids, ["disease"] + ["gene"] * n, ids, texts), EdgeTable(src, dst, rel))
    index = build_index(graph)
    nodes, codes, outgoing = filtered_neighborhood(graph, 0, None, None)
    first_seen = list(dict.fromkeys(nodes.tolist()))
    for query in (None, "kinase channel", "receptor receptor ligase"):
        ranked = rank_neighborhood(graph, index, nodes, codes, outgoing, query, "bm25", limit=20)
        full = rank_neighborhood(graph, index, nodes, codes, outgoing, query, "bm25")
        expected = first_seen
        if query:
            scores = index.score(query, np.asarray(first_seen))
            expected = [first_seen[i] for i in sorted(range(len(first_seen)), key=lambda i: (-scores[i], i))]
        assert full.nodes.tolist() == expected and ranked.nodes.tolist() == expected[:20]
        assert ranked.total == full.total == n and ranked.runs is not None
        for node in [*ranked.nodes.tolist(), 3, 21]:
            sel = nodes == node
            out = list(dict.fromkeys(codes[sel & outgoing].tolist()))
            inc = list(dict.fromkeys(codes[sel & ~outgoing].tolist()))
            assert ranked.relations_of(node) == (out, inc)


@pytest.mark.parametrize("positives", [0, 5, 300])
def test_stable_top_is_the_prefix_of_a_stable_argsort(positives):
    from ark.methods.ark.tools.neighborhood import _stable_top

    rng = np.random.default_rng(positives)
    scores = np.zeros(1000)
    scores[rng.choice(1000, positives, replace=False)] = rng.integers(1, 6, positives)  # many ties
    if positives == 5:
        scores[rng.choice(1000, 7, replace=False)] = -rng.integers(1, 3, 7)  # negatives sort after the zeros
    for limit in (1, 20, 999):
        expected = np.argsort(-scores, kind="stable")[:limit]
        assert _stable_top(scores, limit).tolist() == expected.tolist()


def test_results_are_typed_in_memory_and_written_with_the_keys_records_have_always_had(graph, index):
    box = toolbox(graph, index)
    found = box.execute("search_in_graph", {"query": "febrile seizures"})
    around = box.execute("search_in_neighborhood", {"node_index": 0})
    added = box.execute("add_to_answer", {"answer_nodes": [{"node_index": 3, "reasoning": "febrile"}]})
    assert [type(r.data).__name__ for r in (found, around, added)] == [
        "SearchInGraphResult", "SearchInNeighborhoodResult", "AddToAnswerResult"]
    assert list(dumped(found.data)) == ["query", "size", "results"]  # no "shortened": nothing was
    assert list(dumped(around.data)) == ["center", "query", "node_types", "edge_types", "total", "matching",
                                         "results", "offset"]
    assert list(dumped(around.data)["results"][0]) == ["index", "out", "in"]
    assert list(dumped(added.data)) == ["added", "repeated", "missing", "refused", "size"]  # no "error": it worked
