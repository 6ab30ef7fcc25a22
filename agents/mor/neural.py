"""MoR's trained trajectory reranker (§3.3, App. B.2): the network's inputs and its numpy forward pass.

The paper's reranker, scaled down for a CPU:

- TF: the textual scores of the last ``L`` nodes of the trajectory (0 for padding) and the
  candidate's initial semantic score, through one linear layer (paper: 4 → 256; here ``hidden``);
- SF: the category sequence as text (``"padding movie person"``) encoded by a transformer, then
  one linear layer (paper: a 768-d transformer embedding → 256). The transformer is the KB's own
  sentence-embedding model (``kb.embed``; MiniLM, 384-d, for the bundled KBs), so category names of
  any domain get a meaningful code;
- TI: a learnable embedding of each position's identifier (padding / text / struct), one vector
  per position (paper: 3 × 256);
- the concatenation (``(2 + L) × hidden``) goes through two fully connected layers (ReLU between)
  to one score. Trained with the softmax cross-entropy of Eq. 7 (:mod:`agents.mor.training`).

Inference is numpy only (no torch import on the request path); the parameter names and layouts
are those :mod:`agents.mor.training` writes. Weights ship in ``agents/mor/weights/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

PAD = "padding"
TI_IDS = {PAD: 0, "text": 1, "struct": 2}
WEIGHTS_DIR = Path(__file__).parent / "weights"
DEFAULT_WEIGHTS = WEIGHTS_DIR / "reranker_metaqa.npz"
PARAMS = ("tf_w", "tf_b", "sf_w", "sf_b", "ti_emb", "fc1_w", "fc1_b", "fc2_w", "fc2_b")


def sf_text(trajectory: list[dict], length: int) -> str:
    """The structural fingerprint as text: the last ``length`` categories, padding first."""
    tail = trajectory[-length:]
    return " ".join([PAD] * (length - len(tail)) + [s["type"] for s in tail])


def tf_row(trajectory: list[dict], semantic: float, length: int) -> list[float]:
    """The textual fingerprint: ``length`` node scores (padding 0) and the semantic score."""
    tail = trajectory[-length:]
    return [0.0] * (length - len(tail)) + [float(s["tf"]) for s in tail] + [float(semantic)]


def ti_row(trajectory: list[dict], length: int) -> list[int]:
    """The traversal identifiers: padding / text / struct for each of the last ``length`` nodes."""
    tail = trajectory[-length:]
    return [TI_IDS[PAD]] * (length - len(tail)) + [TI_IDS.get(s["via"], TI_IDS["text"]) for s in tail]


def encode(
    candidates: list[dict], embed: Callable[[str], np.ndarray], length: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three inputs of ``candidates`` (``{"trajectory", "semantic"}``): TF, SF and TI.

    TF is ``[N, L+1]``, SF ``[N, D]`` (each distinct category sequence embedded once), TI ``[N, L]``.
    """
    texts = [sf_text(c["trajectory"], length) for c in candidates]
    codes = {t: np.asarray(embed(t), np.float32) for t in dict.fromkeys(texts)}
    dim = next(iter(codes.values())).shape[0] if codes else 0
    tf = np.asarray([tf_row(c["trajectory"], c["semantic"], length) for c in candidates], np.float32)
    sf = np.vstack([codes[t] for t in texts]) if texts else np.zeros((0, dim), np.float32)
    ti = np.asarray([ti_row(c["trajectory"], length) for c in candidates], np.int64)
    return tf.reshape(len(candidates), length + 1), sf, ti.reshape(len(candidates), length)


class NeuralReranker:
    """The trained reranker: parameters plus ``meta`` (fingerprint length, hidden size, SF encoder)."""

    def __init__(self, params: dict[str, np.ndarray], meta: dict) -> None:
        """Check the parameter shapes against ``meta`` (a clear ValueError when they disagree)."""
        missing = [p for p in PARAMS if p not in params]
        if missing:
            raise ValueError(f"reranker weights lack {missing}")
        self.p = {k: np.asarray(params[k], np.float32) for k in PARAMS}
        self.meta = dict(meta)
        self.length = int(meta["fingerprint_length"])
        hidden = self.p["tf_b"].shape[0]
        if self.p["tf_w"].shape != (self.length + 1, hidden) or self.p["ti_emb"].shape[-1] != hidden:
            raise ValueError(f"reranker weights do not fit fingerprint length {self.length}")
        self.sf_dim = self.p["sf_w"].shape[0]

    def forward(self, tf: np.ndarray, sf: np.ndarray, ti: np.ndarray) -> np.ndarray:
        """Scores ``[N]`` of encoded candidates (the same arithmetic as the torch model)."""
        p = self.p
        e_tf = tf @ p["tf_w"] + p["tf_b"]
        e_sf = sf @ p["sf_w"] + p["sf_b"]
        e_ti = p["ti_emb"][ti].reshape(len(ti), -1)  # [N, L, H] → [N, L·H]
        h = np.maximum(np.concatenate([e_tf, e_sf, e_ti], axis=1) @ p["fc1_w"] + p["fc1_b"], 0.0)
        return (h @ p["fc2_w"] + p["fc2_b"]).reshape(-1)

    def score(self, candidates: list[dict], embed: Callable[[str], np.ndarray]) -> list[float]:
        """Scores of raw candidates, embedding their category sequences with ``embed``."""
        if not candidates:
            return []
        tf, sf, ti = encode(candidates, embed, self.length)
        if sf.shape[1] != self.sf_dim:
            raise ValueError(
                f"reranker weights expect {self.sf_dim}-d category embeddings, the KB's model gives {sf.shape[1]}-d"
            )
        return [round(float(s), 6) for s in self.forward(tf, sf, ti)]

    def save(self, path: str | Path) -> None:
        """Write the parameters and meta as one ``.npz`` (meta as a JSON string)."""
        np.savez_compressed(path, meta=np.asarray(json.dumps(self.meta)), **self.p)


@lru_cache(maxsize=8)
def _load(path: str, mtime: float) -> NeuralReranker:
    with np.load(path, allow_pickle=False) as data:
        meta = json.loads(str(data["meta"]))
        return NeuralReranker({k: data[k] for k in PARAMS if k in data.files}, meta)


def load_reranker(path: str | Path = "") -> NeuralReranker:
    """The reranker in ``path`` (empty: the shipped MetaQA weights); one-line error when unreadable."""
    target = Path(path) if path else DEFAULT_WEIGHTS
    if not target.is_file():
        raise FileNotFoundError(f"reranker weights not found: {target}")
    try:
        return _load(str(target.resolve()), target.stat().st_mtime)
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"unreadable reranker weights {target}: {exc}") from exc
