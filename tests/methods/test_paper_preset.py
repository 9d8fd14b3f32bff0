"""``--preset paper`` against the papers: every setting the preset changes, per family, is read back from the seed
text of its paper (shared/seeds: 000 ARK, 002 SeedER, 004 GraphScout) by a pattern of this test's own, not by the
quote the preset carries; the preset's quotes are in the papers too, and every setting is one a request may set."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from ark.methods import get_method_spec
from ark.methods.options import request_keys
from ark.methods.presets import method_preset
from ark.methods.seeder.config import PAPER_COLUMNS, TABLE7_ROWS, paper_training_values

SEEDS = Path(os.environ.get("ARK_SHARED", Path(__file__).parents[3] / "shared")) / "seeds"
PAPERS = {"ark": "000_", "seeder": "002_", "graphscout": "004_"}
BASELINES = ("cypher", "graph-cot", "graph-counselor", "graph-rag", "polyg")  # GraphScout's, grounding nodes
PAPER_OF = {**{family: family for family in PAPERS}, **{name: "graphscout" for name in BASELINES}}


def paper_text(family: str) -> str:
    found = sorted(SEEDS.glob(f"{PAPERS[family]}*.txt"))
    if not found:
        pytest.skip(f"the papers' text is not at {SEEDS} (set ARK_SHARED)")
    return normalised(found[0].read_text(encoding="utf-8"))


def normalised(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").split())


def stated(text: str, pattern: str) -> str:
    match = re.search(pattern, text)
    assert match, f"the paper does not say {pattern!r}"
    return match.group(1)


# (family, option) -> (pattern whose group 1 is what the paper states, how that reads as the option's value)
CHECKS = {
    ("ark", "n_agents"): (r"is run with \$n=(\d+)\$ parallel agents", int),
    ("ark", "max_steps"): (r"a maximum trajectory length of \$T_\{\\max\}=(\d+)\$", int),
    ("ark", "tools.default_global_size"): (r"Global search returns up to \$k\$ nodes from the full graph\. By "
                                           r"default \$k=(\d+)\$", int),
    ("ark", "tools.neighborhood_budget"): (r"Neighborhood exploration uses a fixed budget of \$k=(\d+)\$ neighbors",
                                           int),
    ("ark", "relevance"): (r"We implement \$\\text\{rel\}\$ with (BM25) \(Robertson", {"BM25": "bm25"}.get),
    # BM25 over the nodes' text, one field: our ``plain`` (``fielded`` is BM25F, weighting names above the text).
    ("ark", "scoring"): (r"with BM25 \(Robertson and Zaragoza, 2009\) over (an inverted index of node textual "
                         r"attributes)", {"an inverted index of node textual attributes": "plain"}.get),
    ("ark", "fusion"): (r"ranking nodes first by the number of agents that selected them \((vote count)\)",
                        {"vote count": "votes"}.get),
    # Votes, then the earliest position, and nothing in between: no graph evidence breaks ties.
    ("ark", "fusion_evidence"): (r"\(vote count\), and breaking ties by the (earliest position) at which the node "
                                 r"appears in any agent's list", {"earliest position": False}.get),
    # The ranking is the top k of the selected set V_T alone, not V_T followed by the rest of the subgraph.
    ("seeder", "fill"): (r"\*\*return\*\* \$R_k\(q\) \\leftarrow \\text\{Top\}_k\((V_T); s_v\)\$", {"V_T": False}.get),
    ("graphscout", "retriever.index"): (r"The Node Retriever is implemented as a FAISS-based (vector search) "
                                        r"module", {"vector search": "dense"}.get),
    ("graphscout", "retriever.default_topk"): (r"Number of retrieved nodes per query\. Default is (\d+)\.", int),
    ("graphscout", "max_turns"): (r"capped by a fixed budget of tool calls \(we use \$T=(\d+)\$ \)", int),
    **{(name, "node_index"): (r"for all methods that require (vector retrieval), we use Qwen3-text-embedding-v4",
                              {"vector retrieval": "dense"}.get) for name in BASELINES},
}


def test_the_methods_with_the_paper_preset_are_the_papers_families_and_graphscouts_node_grounding_baselines():
    from ark.methods import method_specs

    assert {name for name, spec in method_specs().items() if spec.presets} == set(PAPER_OF)


@pytest.mark.parametrize("family", sorted(PAPER_OF))
def test_every_setting_of_the_paper_preset_is_the_value_its_paper_states(family):
    preset = method_preset(get_method_spec(family), "paper")
    text = paper_text(PAPER_OF[family])
    assert sorted(preset.keys()) == sorted(key for fam, key in CHECKS if fam == family)  # none unchecked
    for setting in preset.settings:
        pattern, read = CHECKS[(family, setting.key)]
        assert read(stated(text, pattern)) == setting.value, setting.key
        assert normalised(setting.quote) in text, f"{family} {setting.key}: {setting.quote!r} is not in the paper"


@pytest.mark.parametrize("family", sorted(PAPER_OF))
def test_the_preset_sets_only_what_a_request_may_set_and_changes_the_options(family):
    spec = get_method_spec(family)
    preset = method_preset(spec, "paper")
    assert set(preset.keys()) <= set(request_keys(spec.options))
    made, default = spec.make_options({"preset": "paper"}), spec.make_options({})
    for setting in preset.settings:
        value = made
        for part in setting.key.split("."):
            value = getattr(value, part)
        assert value == setting.value
    assert made.model_dump() != default.model_dump()  # the preset is not the defaults


def table7(text_lines: list[str], label: str) -> list[str]:
    row = next((line for line in text_lines if line.startswith(label + "\t")), None)
    assert row is not None, f"Table 7 has no row {label!r}"
    return row.split("\t")[1:4]


def table7_value(cell: str):
    cell = cell.strip()
    if cell.startswith("["):
        return [int(v) for v in cell.strip("[]").split(",")]
    if "/" in cell:  # "Yes / 256": PCA enabled, its dimension
        return int(cell.split("/")[1])
    power = re.fullmatch(r"(\d+)×10\^\{(-?\d+)\}", cell)
    if power:
        return int(power.group(1)) * 10.0 ** int(power.group(2))
    return float(cell) if "." in cell else int(cell)


def test_seeder_training_under_the_paper_preset_is_table_7_with_appendix_d2s_network():
    paper_text("seeder")  # skips without the papers
    raw = sorted(SEEDS.glob("002_*.txt"))[0].read_text(encoding="utf-8")
    lines = raw[raw.index("Table 7: **Training hyperparameters"):].splitlines()
    assert table7(lines, "Hyperparameter") == ["STARK-PRIME", "STARK-MAG", "STARK-AMAZON"]
    for position, column in enumerate(PAPER_COLUMNS):
        ours = paper_training_values(column)
        for label, key in TABLE7_ROWS.items():
            assert ours[key] == pytest.approx(table7_value(table7(lines, label)[position])), (column, label)
    from ark.methods.seeder.config import train_settings

    assert "D.2 Sparse Graph Transformer Encoder" in raw
    settings = train_settings("paper", graph="stark-mag")
    assert settings.architecture == "paper" and settings.hidden == 32
    assert not any(settings.network_switches().values())  # Appendix D.2's network: none of our additions
    assert train_settings("paper", graph="hpo").hidden == 16  # PRIME's column off STaRK
