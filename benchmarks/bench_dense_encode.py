"""Dense encoding of HPO node texts: the FLOP floor of the whole graph and tokens/s before vs after on a sample.

    python benchmarks/bench_dense_encode.py [--sample 2000] [--threads 2]
    python benchmarks/bench_dense_encode.py --stride 4 [--check 800]   # the measured run: every 4th text after
                                                                        # the length sort (--stride 1: the graph)

Also the share of the sample whose top-10 neighbours (cosine, within the sample) are the same as before.
The floor: every text's token count after truncation (the model's own tokenizer) and the model's config give
2 x (weights of the matrix products) per token plus attention (4 x length x hidden per token and layer); divided by
the machine's measured fp32 and bf16 matrix-product rates (one 4096x384 @ 384x1536 product, oneDNN and MKL).
"Before" is sentence-transformers' ``encode`` in blocks of 512 with 64 texts a call (what ``embed_texts`` did);
"after" is :mod:`ark.index.sorted_encoding` in fp32 and bf16. Times are CPU time (``time.process_time``) and wall.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


class _Before:
    """The encoder as the old path saw it (not an nn.Module, so embed_texts takes its block-wise path)."""

    def __init__(self, encoder) -> None:
        self.encoder = encoder
        self.device = "cpu"
        self.tokenize = encoder.preprocess

    def get_embedding_dimension(self) -> int:
        return self.encoder.get_embedding_dimension()

    def encode(self, texts, **kwargs):
        return self.encoder.encode(texts, **kwargs)


def flops(lengths: np.ndarray, config: dict) -> float:
    hidden, inter, layers = config["hidden_size"], config["intermediate_size"], config["num_hidden_layers"]
    weights = layers * (4 * hidden * hidden + 2 * hidden * inter)
    attention = layers * 4 * hidden * float((lengths.astype(np.float64) ** 2).sum())
    return 2.0 * weights * float(lengths.sum()) + attention


def old_padding(docs: list[str], lengths: np.ndarray) -> int:
    """Padded tokens of the old path: blocks of 512, each sorted by characters, batches of 64."""
    padded = 0
    for start in range(0, len(docs), 512):
        block = sorted(range(start, min(start + 512, len(docs))), key=lambda i: -len(docs[i]))
        for b in range(0, len(block), 64):
            batch = lengths[block[b:b + 64]]
            padded += len(batch) * int(batch.max())
    return padded


def gemm_rates() -> dict[str, float]:
    import torch

    a, b = torch.randn(4096, 384), torch.randn(1536, 384)
    cases = {"fp32 (MKL)": lambda: torch.nn.functional.linear(a, b),
             "bf16": lambda: torch.nn.functional.linear(a.bfloat16(), b.bfloat16())}
    rates = {}
    for name, call in cases.items():
        call()
        start = time.process_time()
        for _ in range(20):
            call()
        rates[name] = 20 * 2 * 4096 * 384 * 1536 / (time.process_time() - start)
    return rates


def timed(call):
    wall, cpu = time.perf_counter(), time.process_time()
    result = call()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stride", type=int, default=0,
                        help="the measured run: embed every Nth text after one sort by tokens (1: all), fp32, with "
                             "the progress bar, against the fp32 floor (0: the before/after sample comparison)")
    parser.add_argument("--check", type=int, default=800,
                        help="texts of the measured run re-embedded by the reference fp32 path for the checks")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import json

    import torch

    from ark.index.dense import _model_path, embed_texts, load_encoder
    from ark.index.graph_index import node_documents
    from ark.index.sorted_encoding import plan_batches, token_lengths
    from ark.loaders import open_graph

    torch.set_num_threads(args.threads)
    print(f"load: {os.getloadavg()}  threads: {args.threads}  {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    docs = list(node_documents(open_graph("hpo")))
    encoder = load_encoder(device="cpu")
    lengths = token_lengths(encoder, docs)
    config = json.loads((_model_path("all-MiniLM-L6-v2") / "config.json").read_text())
    total = flops(lengths, config)
    print(f"HPO: {len(docs)} texts, {int(lengths.sum()):,} tokens after truncation, {total / 1e12:.1f} TFLOP; "
          f"padded: before {old_padding(docs, lengths):,} tokens, "
          f"one sort {plan_batches(lengths, 16_384).padded_tokens:,}")
    for name, rate in gemm_rates().items():
        print(f"  {name}: {rate / 1e9:.0f} GFLOP per CPU-second -> floor {total / rate:.0f} CPU-s "
              f"({total / rate / args.threads:.0f} s on {args.threads} cores)")
    if args.stride:
        measured_run(args, docs, encoder, lengths, config, _Before(encoder))
        return
    rng = np.random.default_rng(0)
    picked = rng.choice(len(docs), min(args.sample, len(docs)), replace=False)
    sample = [docs[i] for i in picked]
    tokens = int(lengths[picked].sum())
    before, wall, cpu = timed(lambda: embed_texts(sample, progress=False, encoder=_Before(encoder)))
    print(f"sample {len(sample)} texts, {tokens:,} tokens")
    print(f"  before            : wall {wall:6.1f} s  CPU {cpu:6.1f} s  {tokens / cpu:7.0f} tokens/CPU-s")
    for precision in ("fp32", "bf16"):
        after, wall, cpu = timed(lambda p=precision: embed_texts(sample, progress=False, encoder=encoder, precision=p))
        cosine = float((after * before).sum(axis=1).min())
        print(f"  after ({precision})     : wall {wall:6.1f} s  CPU {cpu:6.1f} s  {tokens / cpu:7.0f} tokens/CPU-s"
              f"  min cosine vs before {cosine:.6f}  max |diff| {float(np.abs(after - before).max()):.1e}"
              f"  same top-10 neighbours {same_neighbours(before, after):.1%}")
    print(f"load after: {os.getloadavg()}")


# The floor the issue states: 39.3 TFLOP at the 67 GFLOP per CPU-second fp32 (MKL) rate measured 2026-12-02.
STATED_FP32_RATE = 67e9


def measured_run(args, docs: list[str], encoder, lengths: np.ndarray, config: dict, reference) -> None:
    """Embed a stratified share of the texts (every ``stride``-th after one sort by tokens, so every length is in
    it as often as in the graph) with ARK's default path in fp32, in CPU time; compare with the fp32 floor of those
    texts; check ``check`` of them against the reference fp32 path (sentence-transformers' ``encode``)."""
    from ark.index.dense import embed_texts

    order = np.argsort(-lengths, kind="stable")[::args.stride]
    texts = [docs[i] for i in order]
    floor_flop = flops(lengths[order], config)
    rate = gemm_rates()["fp32 (MKL)"]
    share = "the whole graph" if args.stride == 1 else f"a stratified sample, every {args.stride}th text"
    print(f"measured run on {share}: {len(texts):,} texts ({len(texts) / len(docs):.1%}), "
          f"{int(lengths[order].sum()):,} tokens, {floor_flop / 1e12:.2f} TFLOP")
    load = os.getloadavg()
    vectors, wall, cpu = timed(lambda: embed_texts(texts, progress=True, encoder=encoder, precision="fp32"))
    for name, flop_rate in (("this run's", rate), ("the stated (67 GFLOP/CPU-s)", STATED_FP32_RATE)):
        floor = floor_flop / flop_rate
        print(f"  fp32 floor at {name} rate {flop_rate / 1e9:.0f} GFLOP/CPU-s: {floor:.0f} CPU-s -> "
              f"measured {cpu:.0f} CPU-s = {cpu / floor:.2f}x the floor")
    print(f"  wall {wall:.0f} s, CPU {cpu:.0f} s, {int(lengths[order].sum()) / cpu:,.0f} tokens/CPU-s; "
          f"load {load} -> {os.getloadavg()}")
    check = np.linspace(0, len(texts) - 1, min(args.check, len(texts))).astype(int)
    expected = reference.encode([texts[i] for i in check], batch_size=64, normalize_embeddings=True,
                                convert_to_numpy=True)
    got = vectors[check]
    cosine = (got * expected).sum(axis=1)
    print(f"  checks on {len(check)} texts spread over the lengths, against sentence-transformers' encode (fp32): "
          f"cosine min {float(cosine.min()):.6f}, max |diff| {float(np.abs(got - expected).max()):.1e}, "
          f"same top-10 neighbours {same_neighbours(expected, got):.1%}")


def same_neighbours(before: np.ndarray, after: np.ndarray, k: int = 10) -> float:
    """Share of the sample's texts whose k nearest others in the sample (cosine) are the same set both ways."""
    def nearest(vectors: np.ndarray) -> np.ndarray:
        sims = vectors @ vectors.T
        np.fill_diagonal(sims, -np.inf)
        return np.sort(np.argpartition(-sims, k, axis=1)[:, :k], axis=1)

    return float((nearest(before) == nearest(after)).all(axis=1).mean())


if __name__ == "__main__":
    main()
