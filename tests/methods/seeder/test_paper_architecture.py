"""``architecture=paper``: Appendix D.2's network exactly, each of our additions a switch of its own."""

from __future__ import annotations

import pytest

from ark.methods.seeder.config import NETWORK_SWITCHES, train_settings

torch = pytest.importorskip("torch")

from ark.methods.seeder.model import SeederNetwork, count_parameters  # noqa: E402
from ark.methods.seeder.trainer import architecture_for  # noqa: E402


def _network(**overrides):
    settings = train_settings("prime", overrides=overrides)
    return SeederNetwork(architecture_for(settings, 16, 16, num_relation_codes=4, num_node_types=3))


def test_paper_turns_every_addition_off_and_ours_keeps_them_on():
    assert train_settings("prime").network_switches() == dict.fromkeys(NETWORK_SWITCHES, True)
    assert train_settings("prime", overrides={"architecture": "paper"}).network_switches() == \
        dict.fromkeys(NETWORK_SWITCHES, False)


@pytest.mark.parametrize("switch", NETWORK_SWITCHES)
def test_each_addition_is_an_option_of_its_own(switch):
    one_off = train_settings("prime", overrides={switch: False}).network_switches()
    assert one_off == {name: name != switch for name in NETWORK_SWITCHES}
    one_on = train_settings("prime", overrides={"architecture": "paper", switch: True}).network_switches()
    assert one_on == {name: name == switch for name in NETWORK_SWITCHES}


def test_paper_network_has_none_of_our_parameters():
    ours, paper = _network(), _network(architecture="paper")
    names = {name for name, _ in paper.named_parameters()}
    assert not any(name.startswith(("roles.", "types.", "edge_query.")) or "relation_bias" in name for name in names)
    assert paper.edge_codes.num_embeddings == 4 and ours.edge_codes.num_embeddings == 5  # no self-loop code
    assert count_parameters(paper) < count_parameters(ours)


def test_paper_layer_is_ffn_of_norm_without_the_extra_residual():
    """h' = FFN(Norm(h + h̄)): with the FFN's weights zeroed the layer's output is zero, not Norm(h + h̄)."""
    for residual, expect_zero in ((False, True), (True, False)):
        net = _network(architecture="paper", extra_residual=residual).eval()
        layer = net.layers[0]
        for p in layer.ffn.parameters():
            torch.nn.init.zeros_(p)
        h = torch.randn(3, 16)
        src, dst = torch.tensor([0, 1]), torch.tensor([1, 2])
        out = layer(h, src, dst, torch.tensor([0, 1]), net.edge_codes.weight, torch.zeros(2))
        assert bool((out == 0).all()) is expect_zero


def test_paper_network_encodes_and_scores():
    net = _network(architecture="paper").eval()
    n, zeros = 4, torch.zeros(4, dtype=torch.long)
    h = net.encode(torch.randn(n, 16), torch.zeros(n), zeros, zeros, torch.randn(1, 16), zeros, torch.tensor([0, 1, 2]),
                   torch.tensor([1, 2, 3]), torch.tensor([0, 1, 3]), torch.zeros(3))
    assert h.shape == (n, 16) and torch.isfinite(net.final_scores(h, torch.randn(1, 16),
                                                                  torch.zeros(n, dtype=torch.long))).all()
