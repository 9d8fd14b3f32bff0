"""Registry entries of SeedER and the graph baselines of its Table 1 (light: options only, no torch)."""

from ..registry import MethodSpec
from .options import (
    PAPER_PRESET,
    AStarOptions,
    BeamOptions,
    KHopFilterOptions,
    PCSTOptions,
    PPRMMROptions,
    PPROptions,
    SeederOptions,
    SubgraphRAGOptions,
)

_PAPER = "SeedER: seed-and-expand retrieval with a learned expansion policy (the seed documents' second method)"
_DOCS = "docs/methods/seeder.md"
_BASELINES = "ark.methods.seeder.baselines"


def _baseline(name: str, summary: str, options: type, factory: str, requires: tuple[str, ...] = ("dense",)
              ) -> MethodSpec:
    return MethodSpec(name, summary, options, f"{_BASELINES}:{factory}", family="seeder", requires=requires,
                      docs=_DOCS, paper=_PAPER)


METHODS = [
    MethodSpec(
        name="seeder",
        summary="SeedER: dense seeds, a filtered k-hop subgraph, and a trained graph-transformer policy that picks "
                "which nodes to add (no LLM; needs a model from `ark train seeder`)",
        options=SeederOptions,
        factory="ark.methods.seeder.method:SeederMethod",
        family="seeder",
        requires=("seeder",),
        docs=_DOCS,
        paper=_PAPER,
        presets=(PAPER_PRESET,),
    ),
    _baseline("khop-filter", "K-HOP-WITH-FILTERING from 3 dense seeds: per hop keep the nodes scored by node, "
              "parent and relation similarity (SeedER's strongest heuristic)", KHopFilterOptions,
              "KHopFilterRetriever"),
    _baseline("ppr", "personalised PageRank from 3 dense seeds over their 2-hop neighbourhood, blended with dense "
              "similarity", PPROptions, "PPRRetriever"),
    _baseline("ppr-mmr", "PPR's top 250 reranked by maximal marginal relevance", PPRMMROptions, "PPRMMRRetriever"),
    _baseline("beam", "2-hop beam search from 3 dense seeds over node and relation similarity", BeamOptions,
              "BeamSearchRetriever"),
    _baseline("astar", "A*-style best-first search from 3 dense seeds (path score + similarity heuristic)",
              AStarOptions, "AStarRetriever"),
    _baseline("pcst", "G-Retriever's prize-collecting Steiner tree over the seeds' 2-hop neighbourhood",
              PCSTOptions, "PCSTRetriever", requires=("seeder",)),
    _baseline("subgraphrag", "SubgraphRAG-style triple scoring (head, relation, tail similarity) around 3 dense "
              "seeds", SubgraphRAGOptions, "SubgraphRAGRetriever"),
]
