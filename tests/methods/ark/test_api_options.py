"""``ARK(...)`` takes its options one way: whole as ``config``, or as keywords; never both (nothing silently lost)."""

from __future__ import annotations

import pytest

from ark.methods.ark.api import ARK
from ark.methods.ark.options import ArkOptions, ToolConfig


def test_keywords_set_the_options_over_the_defaults(graph, index) -> None:
    ark = ARK(graph, index=index, n_agents=2, tool_config=ToolConfig(neighborhood_budget=7))
    assert (ark.config.n_agents, ark.config.max_steps, ark.config.fusion) == (2, 20, "votes")
    assert ark.config.tools.neighborhood_budget == 7
    assert ARK(graph, index=index).config == ArkOptions()


def test_a_config_is_taken_whole(graph, index) -> None:
    config = ArkOptions(n_agents=1, max_steps=4)
    assert ARK(graph, index=index, config=config).config is config


@pytest.mark.parametrize("keywords, named", [({"n_agents": 5}, "n_agents"),
                                              ({"max_steps": 3, "fusion": "rrf"}, "max_steps, fusion"),
                                              ({"tool_config": ToolConfig()}, "tool_config")])
def test_keywords_beside_a_config_are_refused_naming_both(graph, index, keywords, named) -> None:
    with pytest.raises(TypeError, match=f"got config and {named}"):
        ARK(graph, index=index, config=ArkOptions(n_agents=1), **keywords)


def test_the_paper_preset_from_python_the_class_and_the_method_factory(graph, index):
    from ark.methods import build_method
    from ark.methods.ark.api import ARK
    from ark.methods.presets import preset_of

    ark = ARK(graph, index=index, preset="paper", n_agents=2)
    assert (ark.config.scoring, ark.config.fusion_evidence, ark.config.n_agents) == ("plain", False, 2)
    assert preset_of(ark.config) == "paper"
    retriever = build_method("ark", graph, {"preset": "paper"})
    assert retriever.ark.config.scoring == "plain"
    with pytest.raises(TypeError, match="got config and preset"):
        ARK(graph, index=index, config=ark.config, preset="paper")
