"""Training MoR's trajectory reranker (§3.3, Eq. 7) with torch on a CPU, and scoring what it learnt.

One training example is one query: its candidates' encoded trajectories
(:func:`agents.mor.neural.encode`) and a 0/1 label per candidate (gold or not). The loss is
Eq. 7, the softmax cross-entropy of the gold candidates under a softmax over the query's
candidates: ``-Σ_i y_i log softmax(s)_i``. Queries without a gold candidate carry no signal and
are skipped. The torch module mirrors :class:`agents.mor.neural.NeuralReranker` exactly and is
exported to it, so inference needs no torch. :func:`compare` ranks held-out candidates with the
trained network, the linear training-free reranker and the semantic score alone.
The command that collects candidates and writes the weights is ``hybridrag train-reranker``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from hybridrag.agents.mor import rerank as rr
from hybridrag.agents.mor.matching import question_vector
from hybridrag.agents.mor.neural import TI_IDS, NeuralReranker, encode
from hybridrag.kb.base import KnowledgeBase

Query = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]  # tf, sf, ti, labels
Row = tuple[object, list[dict], list[bool]]  # a question, its candidates, their gold flags


@dataclass
class TrainConfig:
    """Training settings (ours; the paper trains a larger net, App. B.2)."""

    hidden: int = 32
    epochs: int = 30
    lr: float = 1e-3
    weight_decay: float = 1e-4
    seed: int = 0


def _module(length: int, sf_dim: int, hidden: int):
    import torch
    from torch import nn

    class Reranker(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.tf = nn.Linear(length + 1, hidden)
            self.sf = nn.Linear(sf_dim, hidden)
            self.ti = nn.Embedding(len(TI_IDS), hidden)
            self.fc1 = nn.Linear((2 + length) * hidden, hidden)
            self.fc2 = nn.Linear(hidden, 1)

        def forward(self, tf, sf, ti):
            z = torch.cat([self.tf(tf), self.sf(sf), self.ti(ti).flatten(1)], dim=1)
            return self.fc2(torch.relu(self.fc1(z))).squeeze(-1)

    return Reranker()


def eq7_loss(scores, labels):
    """Eq. 7 for one query: ``-Σ_i y_i log softmax(scores)_i`` (torch tensors)."""
    import torch

    return -(labels * torch.log_softmax(scores, dim=0)).sum()


def export(model, length: int, meta: dict) -> NeuralReranker:
    """The torch module's parameters in the numpy reranker's layout."""

    def t(x):
        return x.detach().cpu().numpy().astype(np.float32)

    params = {
        "tf_w": t(model.tf.weight).T,
        "tf_b": t(model.tf.bias),
        "sf_w": t(model.sf.weight).T,
        "sf_b": t(model.sf.bias),
        "ti_emb": t(model.ti.weight),
        "fc1_w": t(model.fc1.weight).T,
        "fc1_b": t(model.fc1.bias),
        "fc2_w": t(model.fc2.weight).T,
        "fc2_b": t(model.fc2.bias),
    }
    return NeuralReranker(params, {**meta, "fingerprint_length": length, "hidden": model.fc2.in_features})


def train(
    queries: list[Query],
    length: int,
    config: TrainConfig,
    meta: dict | None = None,
    snapshot: Callable[[NeuralReranker], None] | None = None,
    progress: bool = False,
) -> tuple[NeuralReranker, list[float]]:
    """Fit the reranker with Adam on Eq. 7, one query per step, shuffled each epoch.

    Args:
        queries: encoded queries ``(tf, sf, ti, labels)``.
        length: fingerprint length.
        config: sizes and optimiser settings.
        meta: stored with the weights (what they were trained on).
        snapshot: called after each epoch with that epoch's network.
        progress: a tqdm bar over epochs with the current loss.

    Returns:
        (the trained reranker, the mean training loss of each epoch).
    """
    import torch
    from tqdm import tqdm

    kept = [q for q in queries if len(q[3]) and q[3].any()]
    if not kept:
        raise ValueError("no training query has a gold candidate; nothing to learn from")
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    model = _module(length, kept[0][1].shape[1], config.hidden)
    opt = torch.optim.Adam(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    data = [tuple(torch.as_tensor(a) for a in q) for q in kept]
    data = [(tf, sf, ti, y.float()) for tf, sf, ti, y in data]
    curve = []
    bar = tqdm(range(config.epochs), desc="train reranker", unit="epoch", disable=not progress)
    for _ in bar:
        rng.shuffle(data)
        total = 0.0
        for tf, sf, ti, y in data:
            opt.zero_grad()
            loss = eq7_loss(model(tf, sf, ti), y)
            loss.backward()
            opt.step()
            total += loss.item()
        curve.append(total / len(data))
        bar.set_postfix(loss=f"{curve[-1]:.4f}")
        if snapshot:  # e.g. the held-out loss of this epoch's network
            snapshot(export(model, length, meta or {}))
    return export(model.eval(), length, meta or {}), curve


def query_loss(reranker: NeuralReranker, queries: list[Query]) -> float:
    """Mean Eq. 7 loss of ``reranker`` over the queries with a gold candidate (numpy)."""
    losses = []
    for tf, sf, ti, y in queries:
        if not len(y) or not y.any():
            continue
        s = reranker.forward(tf, sf, ti).astype(np.float64)
        logp = s - s.max() - np.log(np.exp(s - s.max()).sum())
        losses.append(-float(y.astype(np.float64) @ logp))
    return float(np.mean(losses)) if losses else 0.0


def encode_all(rows: list[Row], kb: KnowledgeBase, length: int) -> list[Query]:
    """Encoded queries ``(tf, sf, ti, labels)`` of collected rows (rows without candidates left out)."""
    embed = lambda text: question_vector(kb, text)  # noqa: E731
    return [(*encode(c, embed, length), np.asarray(y, np.float32)) for _, c, y in rows if c]


def ranking_metrics(rows: list[Row], order_of: Callable[[list[dict]], list[dict]]) -> dict:
    """Hit@1 and MRR over rows (questions without a gold candidate count as misses)."""
    hits, rr_sum = 0, 0.0
    for _, cands, labels in rows:
        ranked = order_of(cands)
        gold = {c["id"] for c, y in zip(cands, labels, strict=True) if y}
        rank = next((i for i, c in enumerate(ranked, 1) if c["id"] in gold), None)
        hits += rank == 1
        rr_sum += 1.0 / rank if rank else 0.0
    n = max(len(rows), 1)
    return {"n": len(rows), "hit1": round(hits / n, 4), "mrr": round(rr_sum / n, 4)}


def compare(rows: list[Row], net: NeuralReranker, kb: KnowledgeBase, length: int) -> dict:
    """Trained vs linear vs semantic-only ranking of the same candidates (tiers kept)."""
    embed = lambda text: question_vector(kb, text)  # noqa: E731
    lin = rr.default_weights(length)
    return {
        "trained": ranking_metrics(rows, lambda c: rr.rerank(c, lin, length, scores=net.score(c, embed))),
        "linear": ranking_metrics(rows, lambda c: rr.rerank(c, lin, length)),
        "semantic": ranking_metrics(rows, lambda c: rr.rerank(c, {"semantic": 1.0}, length, ("tf",))),
    }
