"""Fusion of parallel agents' answer lists (paper Section 3.2, Table 3) and the system prompt."""

from __future__ import annotations

import pytest

from ark.methods.ark.fusion import fuse
from ark.methods.ark.options import ToolConfig
from ark.methods.ark.prompt import render_system_prompt
from ark.methods.ark.tools import Toolbox
from tests.support.graphs import build_index, build_small_graph


def test_votes_rank_by_count_then_earliest_position():
    # L = [1,2,3 | 3,4 | 4,3,5]; votes: 3→3, 4→2, others 1; first positions: 1@0, 2@1, 3@2, 4@4, 5@7.
    fused = fuse([[1, 2, 3], [3, 4], [4, 3, 5]])
    assert [f.index for f in fused] == [3, 4, 1, 2, 5]
    assert [f.votes for f in fused] == [3, 2, 1, 1, 1]
    assert [f.first_position for f in fused] == [2, 4, 0, 1, 7]
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 5


def test_the_two_readings_of_earliest_position_differ_where_a_later_agent_ranks_a_node_higher():
    # One vote each. Concatenated: 1@0, 2@1, 3@2, 4@3, 5@4. Within any one list: 1, 4 rank 0; 2, 5 rank 1; 3 rank 2.
    lists = [[1, 2, 3], [4, 5]]
    assert [f.index for f in fuse(lists)] == [1, 2, 3, 4, 5]
    assert [f.index for f in fuse(lists, ties="concatenated")] == [1, 2, 3, 4, 5]
    fused = fuse(lists, ties="any_list")
    assert [f.index for f in fused] == [1, 4, 2, 5, 3]
    assert [f.first_position for f in fused] == [0, 3, 1, 4, 2]  # still the concatenated position
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == 5
    # Votes still come first under either reading; evidence still comes before the position.
    assert [f.index for f in fuse([[1, 2], [3, 2]], ties="any_list")] == [2, 1, 3]
    evidence = {1: (0,), 2: (0,), 3: (0,), 4: (1,), 5: (2,)}
    assert [f.index for f in fuse(lists, ties="any_list", evidence=evidence)] == [5, 4, 1, 2, 3]


def test_an_unknown_tie_break_names_the_choices():
    with pytest.raises(ValueError, match="unknown fusion tie-break 'first'; valid: concatenated, any_list"):
        fuse([[1]], ties="first")


def test_votes_ignore_duplicates_within_one_agent():
    assert [f.index for f in fuse([[7, 7, 8], [8]])] == [8, 7]


def test_ordering_keeps_first_appearance_in_agent_order():
    fused = fuse([[1, 2, 3], [3, 4], [4, 3, 5]], "ordering")
    assert [f.index for f in fused] == [1, 2, 3, 4, 5] and fused[2].votes == 3


def test_random_is_a_seeded_permutation_of_the_union():
    lists = [[1, 2, 3], [3, 4], [4, 3, 5], [9, 8, 7, 6]]
    first = [f.index for f in fuse(lists, "random", seed=1)]
    assert sorted(first) == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert first == [f.index for f in fuse(lists, "random", seed=1)]
    assert any([f.index for f in fuse(lists, "random", seed=s)] != first for s in range(2, 6))


def test_unknown_fusion_and_empty_input():
    with pytest.raises(ValueError, match="valid: votes, ordering, random"):
        fuse([[1]], "borda")
    assert fuse([[], []]) == []


def test_system_prompt_lists_types_relations_and_schema():
    graph = build_small_graph()
    prompt = render_system_prompt(graph)
    assert "Node types: disease, phenotype, gene/protein" in prompt
    assert "Relation types: has_phenotype, associated_with, is_a" in prompt
    assert "- disease -has_phenotype-> phenotype (3)" in prompt
    assert "search_in_neighborhood(node_index, query, node_types, edge_types)" in prompt and "$" not in prompt
    for section in ("# Worked examples", "**Descriptive**", "**Entity-anchored**", "**Multi-anchor**",
                    "# How many nodes to add", "# When to stop"):
        assert section in prompt
    global_only = render_system_prompt(graph, ToolConfig.for_ablation("no_neighbors"))
    assert "search_in_neighborhood" not in global_only
    assert "search_in_neighborhood(node_index, query)`" in render_system_prompt(
        graph, ToolConfig.for_ablation("neighbors_no_filters"))


@pytest.mark.parametrize(("default", "largest", "budget"), [(5, 30, 20), (8, 12, 7)])
def test_prompt_schema_and_code_agree_on_the_sizes(default, largest, budget):
    """Appendix A.2: global search returns k = 5 nodes unless the agent asks for more; the prompt, the tool schema
    and the tool itself state and use the same numbers, whatever the configuration."""
    graph = build_small_graph()
    config = ToolConfig(default_global_size=default, max_global_size=largest, neighborhood_budget=budget)
    prompt = render_system_prompt(graph, config, max_steps=7)
    assert f"the {default} best nodes unless you ask for another\n  `size` (at most {largest})" in prompt
    assert f"the best {budget} are shown" in prompt and "at most 7 turns" in prompt
    box = Toolbox(graph, build_index(graph), config)
    tools = {t["function"]["name"]: t["function"] for t in box.openai_tools()}
    size = tools["search_in_graph"]["parameters"]["properties"]["size"]["description"]
    assert size == f"Number of results to return (default {default}, at most {largest})."
    assert f"the {default} nodes (or `size`, up to {largest})" in tools["search_in_graph"]["description"]
    assert f"The best {budget} neighbors are shown." in tools["search_in_neighborhood"]["description"]
    found = box.execute("search_in_graph", '{"query": "seizure epilepsy nervous headache migraine"}')
    assert len(found.data.results) == min(default, 8) and found.data.size == default
    capped = box.execute("search_in_graph", '{"query": "seizure epilepsy nervous headache migraine", "size": 99}')
    assert capped.data.size == largest
