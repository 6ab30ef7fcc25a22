"""MoR's trained trajectory reranker: inputs, numpy forward = torch forward, Eq. 7, training, weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from hybridrag.agents.mor import neural as N
from hybridrag.agents.mor import training as T


def step(t: str, via: str, tf: float) -> dict:
    return {"id": t, "type": t.split(":")[0], "via": via, "tf": tf, "edge": None}


def fake_embed(text: str) -> np.ndarray:
    """A deterministic 6-d code per category sequence."""
    rng = np.random.default_rng(abs(hash(text)) % 2**32)
    return rng.normal(size=6).astype(np.float32)


def cand(tfs: list[float], vias: list[str], semantic: float) -> dict:
    types = ["person", "movie", "person"][-len(tfs) :]
    return {
        "id": f"c{tfs}",
        "semantic": semantic,
        "trajectory": [step(f"{t}:{i}", v, s) for i, (t, v, s) in enumerate(zip(types, vias, tfs, strict=True))],
    }


def test_inputs_pad_the_first_positions():
    traj = [step("movie:1", "text", 0.5), step("person:2", "struct", 0.25)]
    assert N.sf_text(traj, 3) == "padding movie person"
    assert N.tf_row(traj, 0.9, 3) == [0.0, 0.5, 0.25, 0.9]
    assert N.ti_row(traj, 3) == [N.TI_IDS["padding"], N.TI_IDS["text"], N.TI_IDS["struct"]]
    tf, sf, ti = N.encode([{"trajectory": traj, "semantic": 0.9}], fake_embed, 1)
    assert np.allclose(tf, [[0.25, 0.9]]) and ti.tolist() == [[N.TI_IDS["struct"]]] and sf.shape == (1, 6)


def test_numpy_forward_equals_the_torch_module():
    torch.manual_seed(1)
    module = T._module(3, 6, 8)
    net = T.export(module, 3, {})
    cands = [cand([0.1, 0.7, 0.2], ["text", "struct", "struct"], 0.3), cand([0.9], ["text"], 0.8)]
    tf, sf, ti = N.encode(cands, fake_embed, 3)
    want = module(torch.as_tensor(tf), torch.as_tensor(sf), torch.as_tensor(ti)).detach().numpy()
    assert np.allclose(net.forward(tf, sf, ti), want, atol=1e-5)
    assert np.allclose(net.score(cands, fake_embed), want, atol=1e-5)


def test_eq7_loss_and_its_gradient():
    scores = torch.tensor([2.0, 0.0, -1.0], requires_grad=True)
    labels = torch.tensor([0.0, 1.0, 0.0])
    loss = T.eq7_loss(scores, labels)
    p = torch.softmax(scores.detach(), 0)
    assert float(loss.detach()) == pytest.approx(-float(torch.log(p[1])))
    loss.backward()
    assert torch.allclose(scores.grad, p - labels, atol=1e-6)  # d/ds of -log softmax_gold = p - y


def toy_queries(n: int, seed: int = 0) -> list[T.Query]:
    """Queries where the gold candidate is the one reached structurally with the highest last tf."""
    rng, out = np.random.default_rng(seed), []
    for _ in range(n):
        cands = [
            cand([rng.uniform(0, 0.5), rng.uniform(0, 0.5)], ["text", "text"], rng.uniform(0, 1)) for _ in range(4)
        ]
        cands.append(cand([rng.uniform(0.3, 1), rng.uniform(0.6, 1)], ["text", "struct"], rng.uniform(0, 1)))
        y = np.zeros(5, np.float32)
        y[-1] = 1
        out.append((*N.encode(cands, fake_embed, 3), y))
    return out


def test_training_reduces_the_loss():
    data = toy_queries(40)
    before = T.query_loss(T.export(T._module(3, 6, 8), 3, {}), data)
    snaps: list[float] = []
    net, curve = T.train(
        data, 3, T.TrainConfig(hidden=8, epochs=8, lr=5e-3), snapshot=lambda n: snaps.append(T.query_loss(n, data))
    )
    assert len(curve) == 8 and len(snaps) == 8
    assert curve[-1] < curve[0] and T.query_loss(net, data) < 0.5 * before
    held = toy_queries(20, seed=1)
    hits = sum(int(np.argmax(net.forward(tf, sf, ti)) == 4) for tf, sf, ti, _ in held)
    assert hits >= 18


def test_training_without_any_gold_candidate_is_refused():
    tf, sf, ti, _ = toy_queries(1)[0]
    with pytest.raises(ValueError, match="no training query has a gold candidate"):
        T.train([(tf, sf, ti, np.zeros(5, np.float32))], 3, T.TrainConfig(epochs=1))


def test_weight_file_round_trip_and_errors(tmp_path):
    net = T.export(T._module(3, 6, 8), 3, {"trained_on": ["toy"]})
    path = tmp_path / "w.npz"
    net.save(path)
    loaded = N.load_reranker(path)
    cands = [cand([0.1, 0.2], ["text", "struct"], 0.5)]
    assert loaded.meta["trained_on"] == ["toy"] and loaded.length == 3
    assert loaded.score(cands, fake_embed) == net.score(cands, fake_embed)
    with pytest.raises(FileNotFoundError, match="reranker weights not found"):
        N.load_reranker(tmp_path / "missing.npz")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="unreadable reranker weights"):
        N.load_reranker(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="expect 6-d category embeddings"):
        loaded.score(cands, lambda text: np.zeros(4, np.float32))


def test_shipped_weights_load_by_default():
    net = N.load_reranker()
    assert net.length == 3 and net.sf_dim == 384  # MiniLM category-sequence codes
    assert any("metaqa" in name for name in net.meta["trained_on"])
