"""MoR organizing: the structure-aware reranker over traversal trajectories (§3.3, §B.2).

Features of a candidate's trajectory, fixed to the last ``length`` nodes (3 in the paper, the
earliest positions padded):

- Textual Fingerprint (TF): ``tf_0 .. tf_{L-1}``, the textual score of each node on the path
  (0 for padding; ``tf_{L-1}`` is the candidate itself), plus ``semantic``, the initial
  semantic score of the candidate;
- Structural Fingerprint (SF): the category at each position, one-hot ``sf_<i>_<type>``
  (``padding`` for padding), and the whole category sequence ``sfp_<a>|<b>|<c>``;
- Traversal Identifier (TI): how each position was reached, one-hot ``ti_<i>_<text|struct|padding>``.

The paper feeds these to a small neural network (TF → 256, SF through a transformer → 256, TI
embeddings 3×256, two dense layers) trained with the softmax cross-entropy of Eq. 7; that network
is :mod:`agents.mor.neural` (``reranker="neural"``, the default). This module is the linear
alternative (``reranker="structure"``): training-free defaults below, or weights fitted with the
same Eq. 7 loss on a dev split with gold answers (:func:`fit_weights`); and the tiered ordering
both share (:func:`rerank`).

Default weights (ours, following the paper's findings): ``semantic`` 1.0 (the paper's ranker
without reranker); TF 0.5 on the candidate and 0.25 on each earlier node (TF matters most,
Table 2, and relevance along the path counts, Fig. 4 and Table 3); 0.1 per structurally reached
position (structural traversal supplies most MAG answers, Fig. 5); SF 0 (no prior without data).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

PAD = "padding"
FILLER_TIER = 9  # fillers rank after every other tier


def _positions(traj: list[dict], length: int) -> list[dict | None]:
    tail = traj[-length:]
    return [None] * (length - len(tail)) + list(tail)


GROUPS = {"tf": ("tf_", "semantic"), "sf": ("sf_", "sfp_"), "ti": ("ti_",)}


def parse_groups(text: str) -> tuple[str, ...]:
    """``"tf,sf,ti"`` → the feature groups; unknown names raise ValueError."""
    groups = tuple(g.strip() for g in text.split(",") if g.strip())
    bad = set(groups) - set(GROUPS)
    if bad:
        raise ValueError(f"unknown reranker feature group(s) {sorted(bad)}; use tf, sf, ti")
    return groups


def features(
    trajectory: list[dict], semantic: float, length: int = 3, groups: tuple[str, ...] = ("tf", "sf", "ti")
) -> dict[str, float]:
    """The TF, SF and TI features of one trajectory, as named values.

    Args:
        trajectory: the steps that reached the candidate, first to last.
        semantic: the candidate's initial semantic score.
        length: positions kept (the last ones); 1 is the paper's node-based variant (Table 3).
        groups: feature groups kept, for the feature ablation of Table 2.
    """
    slots = _positions(trajectory, length)
    out: dict[str, float] = {"semantic": float(semantic)}
    for i, step in enumerate(slots):
        out[f"tf_{i}"] = float(step["tf"]) if step else 0.0
        out[f"sf_{i}_{step['type'] if step else PAD}"] = 1.0
        out[f"ti_{i}_{step['via'] if step else PAD}"] = 1.0
    out["sfp_" + "|".join(s["type"] if s else PAD for s in slots)] = 1.0
    prefixes = tuple(p for g in groups for p in GROUPS[g])
    return {k: v for k, v in out.items() if k.startswith(prefixes)}


def default_weights(length: int = 3) -> dict[str, float]:
    """The training-free weights documented in the module docstring."""
    w = {"semantic": 1.0, f"tf_{length - 1}": 0.5}
    for i in range(length - 1):
        w[f"tf_{i}"] = 0.25
    for i in range(length):
        w[f"ti_{i}_struct"] = 0.1
    return w


def score(feats: dict[str, float], weights: dict[str, float]) -> float:
    """Linear reranking score (bias-free: only differences within a query matter)."""
    return sum(weights.get(k, 0.0) * v for k, v in feats.items())


def rerank(
    candidates: list[dict],
    weights: dict[str, float],
    length: int = 3,
    groups: tuple[str, ...] = ("tf", "sf", "ti"),
    scores: list[float] | None = None,
) -> list[dict]:
    """Score candidates ``{"id", "semantic", "trajectory"[, "filler"]}``, best first.

    Adds ``features`` and ``score``; ``scores`` (one per candidate, e.g. the trained network's,
    :mod:`agents.mor.neural`) replace the linear score of ``weights``. Candidates rank by tier,
    then score: tier ``c["tier"]`` (0 when absent; the graph-first pool puts text-only matches
    in tier 1), fillers (textual top-ups of a short list) last. Each later tier's scores are
    shifted below the last score of the tiers before it, so scores fall down the list.
    """
    tiers: dict[int, list[dict]] = {}
    for i, c in enumerate(candidates):
        feats = features(c["trajectory"], c["semantic"], length, groups)
        tier = FILLER_TIER if c.get("filler") else int(c.get("tier", 0))
        value = scores[i] if scores is not None else score(feats, weights)
        tiers.setdefault(tier, []).append({**c, "features": feats, "score": round(value, 6)})
    out: list[dict] = []
    for tier in sorted(tiers):
        group = sorted(tiers[tier], key=lambda c: -c["score"])
        if out:
            shift = max(0.0, group[0]["score"] - out[-1]["score"] + 1e-3)
            group = [{**c, "score": round(c["score"] - shift, 6)} for c in group]
        out += group
    return out


def _matrix(lists: list[list[dict[str, float]]], names: list[str]) -> list[np.ndarray]:
    col = {n: j for j, n in enumerate(names)}
    mats = []
    for feats in lists:
        m = np.zeros((len(feats), len(names)), np.float64)
        for i, f in enumerate(feats):
            for k, v in f.items():
                m[i, col[k]] = v
        mats.append(m)
    return mats


def listwise_loss(weights: dict[str, float], data: list[tuple[list[dict[str, float]], list[bool]]]) -> float:
    """Mean softmax cross-entropy of Eq. 7 over the queries that have a positive candidate."""
    losses = []
    for feats, labels in data:
        if not any(labels) or not feats:
            continue
        s = np.array([score(f, weights) for f in feats])
        logp = s - s.max() - np.log(np.exp(s - s.max()).sum())
        losses.append(-float(np.asarray(labels, float) @ logp))
    return float(np.mean(losses)) if losses else 0.0


def fit_weights(
    data: list[tuple[list[dict[str, float]], list[bool]]],
    init: dict[str, float] | None = None,
    epochs: int = 300,
    lr: float = 0.5,
    l2: float = 1e-3,
) -> dict[str, float]:
    """Fit the linear reranker with the listwise softmax cross-entropy of Eq. 7.

    Args:
        data: one ``(features of each candidate, is-gold flag of each candidate)`` per dev query;
            queries without a gold candidate carry no signal and are skipped.
        init: starting weights (the defaults when None).
        epochs: full-batch gradient steps.
        lr: step size.
        l2: ridge penalty pulling weights towards ``init``.

    Returns:
        The fitted weights by feature name.
    """
    init = dict(init or default_weights())
    kept = [(f, lab) for f, lab in data if f and any(lab)]
    if not kept:
        return init
    names = sorted({k for f, _ in kept for x in f for k in x} | set(init))
    mats = _matrix([f for f, _ in kept], names)
    ys = [np.asarray(lab, np.float64) for _, lab in kept]
    w0 = np.array([init.get(n, 0.0) for n in names])
    w = w0.copy()
    for _ in range(epochs):
        grad = l2 * (w - w0)
        for m, y in zip(mats, ys, strict=True):
            s = m @ w
            p = np.exp(s - s.max())
            p /= p.sum()
            grad += m.T @ (y.sum() * p - y) / len(mats)
        w -= lr * grad
    return {n: round(float(v), 6) for n, v in zip(names, w, strict=True) if abs(v) > 1e-9}


def save_weights(weights: dict[str, float], path: str | Path, length: int = 3) -> None:
    """Write ``{"fingerprint_length", "weights"}`` as JSON."""
    data = {"fingerprint_length": length, "weights": weights}
    Path(path).write_text(json.dumps(data, indent=1), encoding="utf-8")


def load_weights(path: str | Path | None, length: int = 3) -> dict[str, float]:
    """Weights from a file written by :func:`save_weights`, or the defaults when no path."""
    if not path:
        return default_weights(length)
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if data.get("fingerprint_length", length) != length:
        raise ValueError(
            f"reranker weights in {path} use fingerprint length {data['fingerprint_length']}, not {length}"
        )
    return {k: float(v) for k, v in data["weights"].items()}
