"""A BERT sentence encoder in numpy, for query-time encodes without importing torch.

Encoding one question with sentence-transformers means importing torch, transformers and
sentence-transformers first: 15-25 s of a fresh ``hybridrag ask`` on this 2-core machine,
for a forward pass that takes milliseconds. This module runs the same forward pass with
numpy on the model folder's own files: ``tokenizer.json`` (the ``tokenizers`` package, no
transformers), ``model.safetensors`` (read by ``safetensors.numpy``) and ``config.json``.

It covers what a sentence-transformers folder of the form *BERT → mean pooling → normalise*
needs (all-MiniLM-L6-v2 is one): absolute positions, post-layer-norm encoder layers, exact
GELU, attention over the unpadded tokens of one text. :meth:`NumpyBert.encode` gives the
vector sentence-transformers gives, to float32 rounding (tests/unit/test_bert_numpy.py compares
both). Anything else (another architecture, CLS pooling) is refused by :func:`supported`, and
the caller keeps the torch path.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

_P = 0.3275911  # Abramowitz & Stegun 7.1.26: |erf error| < 1.5e-7, below float32 rounding here
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def _erf(x: np.ndarray) -> np.ndarray:
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _P * a)
    poly = ((((_A[4] * t + _A[3]) * t + _A[2]) * t + _A[1]) * t + _A[0]) * t
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x * (1.0 / math.sqrt(2.0))))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + np.float32(eps)) * w + b


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def supported(folder: Path) -> bool:
    """Whether ``folder`` is a sentence-transformers BERT with mean pooling this module reproduces."""
    config = _json(folder / "config.json")
    pooling = _json(folder / "1_Pooling" / "config.json")
    modules = (
        [
            m.get("type", "").rsplit(".", 1)[-1]
            for m in json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        ]
        if (folder / "modules.json").exists()
        else []
    )
    return (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and modules[:2] == ["Transformer", "Pooling"]
        and bool(pooling.get("pooling_mode_mean_tokens"))
        and not any(pooling.get(k) for k in ("pooling_mode_cls_token", "pooling_mode_max_tokens"))
        and (folder / "model.safetensors").exists()
        and (folder / "tokenizer.json").exists()
    )


class NumpyBert:
    """The encoder of one model folder (weights loaded once; ~90 MB for MiniLM-L6)."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        cfg = _json(folder / "config.json")
        st = _json(folder / "sentence_bert_config.json")
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.max_len = int(st.get("max_seq_length") or cfg.get("max_position_embeddings", 512))
        self.normalise = any(
            m.get("type", "").endswith("Normalize")
            for m in json.loads((folder / "modules.json").read_text(encoding="utf-8"))
        )
        self.w = {
            k: np.ascontiguousarray(
                v.T if k.endswith("dense.weight") or ".self." in k and k.endswith(".weight") else v, dtype=np.float32
            )
            for k, v in load_file(str(folder / "model.safetensors")).items()
            if k.startswith(("embeddings.", "encoder."))
        }  # linear weights stored as (in, out)
        self.tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(self.max_len)

    def _layer(self, x: np.ndarray, i: int) -> np.ndarray:
        w, p = self.w, f"encoder.layer.{i}."
        n, hidden = x.shape
        d = hidden // self.heads

        def lin(name: str, v: np.ndarray) -> np.ndarray:
            return v @ w[p + name + ".weight"] + w[p + name + ".bias"]

        q, k, v = (
            lin(f"attention.self.{m}", x).reshape(n, self.heads, d).transpose(1, 0, 2)
            for m in ("query", "key", "value")
        )
        scores = q @ k.transpose(0, 2, 1) * (1.0 / math.sqrt(d))
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        ctx = (scores / scores.sum(-1, keepdims=True)) @ v
        attn = lin("attention.output.dense", ctx.transpose(1, 0, 2).reshape(n, hidden))
        x = _layer_norm(
            x + attn, w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], self.eps
        )
        out = lin("output.dense", _gelu(lin("intermediate.dense", x)))
        return _layer_norm(x + out, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self.eps)

    def encode_one(self, text: str) -> np.ndarray:
        """The pooled (and, if the folder says so, normalised) float32 vector of one text."""
        ids = np.asarray(self.tok.encode(text).ids, dtype=np.int64)
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][: len(ids)]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        for i in range(self.layers):
            x = self._layer(x, i)
        vec = x.mean(0)
        if self.normalise:
            vec = vec / max(float(np.linalg.norm(vec)), 1e-12)
        return vec.astype(np.float32)
