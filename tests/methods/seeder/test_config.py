"""SeedER's settings: Table 7 presets, Table 2b ablations, --set overrides, and the errors they give."""

from __future__ import annotations

import pytest

from ark.methods.options import parse_set_values
from ark.methods.seeder.config import ABLATIONS, PRESETS, train_settings


def test_presets_carry_table_7():
    prime, mag, amazon = (train_settings(name) for name in ("prime", "mag", "amazon"))
    assert (prime.search.sizes, prime.search.caps, prime.hidden, prime.layers) == ([7, 10], [20, 50], 16, 3)
    assert (mag.search.sizes, mag.search.caps, mag.hidden, mag.layers) == ([7, 7, 8], [20, 30, 50], 32, 4)
    assert (amazon.search.seeds, amazon.search.sizes, amazon.lr, amazon.epochs) == (10, [4, 4, 4], 3e-4, 10)
    for settings in (prime, mag, amazon):
        assert (settings.batch_size, settings.weight_decay, settings.max_grad_norm, settings.trajectories) == \
            (16, 1e-5, 1.0, 8)
        assert settings.search.pca_dim == 256 and settings.bpr_weight == 1.0 and settings.baseline == "mean"
    assert set(PRESETS) == {"prime", "mag", "amazon", "hpo"}


def test_ablations_and_overrides():
    assert train_settings("prime", "no-bpr").bpr_weight == 0.0
    single = train_settings("prime", "single-trajectory")
    assert (single.trajectories, single.baseline) == (1, "none")
    assert train_settings("prime", "greedy-baseline").baseline == "greedy"
    assert train_settings("prime", "rerank").policy == "rerank"
    assert set(ABLATIONS) == {"no-bpr", "single-trajectory", "no-baseline", "greedy-baseline", "rerank"}
    settings = train_settings("hpo", overrides=parse_set_values(["search.budget=200", "lr=3e-4", "bpr_loss=margin"]))
    assert (settings.search.budget, settings.lr, settings.bpr_loss, settings.hidden) == (200, 3e-4, "margin", 32)


@pytest.mark.parametrize(("preset", "ablation", "overrides", "message"), [
    ("nope", None, {}, "valid: prime, mag, amazon, hpo"),
    ("prime", "nope", {}, "valid: no-bpr"),
    ("prime", None, {"lrr": 1}, "lrr"),
    ("prime", None, {"search": {"sizes": [5]}}, "same length"),
    ("prime", None, {"search": {"sizes": [30, 10]}}, "cannot exceed its candidate cap"),
    ("prime", None, {"trajectories": 1}, "policy gradient vanishes"),
    ("prime", None, {"select_metric": "ndcg"}, "valid: hit@1"),
])
def test_bad_settings_name_the_problem(preset, ablation, overrides, message):
    with pytest.raises(ValueError, match=message):
        train_settings(preset, ablation, overrides)
    with pytest.raises(ValueError, match="expected key=value"):
        parse_set_values(["budget"])
