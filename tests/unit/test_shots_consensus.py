"""Solved examples outvoted by their look-alikes (agents/shots/consensus.py); the bank build that leaves
them out is tested in test_shots.py."""

from __future__ import annotations

import numpy as np

from hybridrag.agents.shots.consensus import outliers
from hybridrag.agents.shots.example import SolvedExample


def ex(q: str, masked: str, rels: tuple[str, ...]) -> SolvedExample:
    return SolvedExample(q, masked, ("X",), ("company",), rels, "product", ("Y",), "run")


def unit(*rows: list[float]) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_an_example_outvoted_by_near_identical_peers_is_an_outlier():
    makes = [ex(f"what does C{i} make", "what does <E> make", ("makes",)) for i in range(4)]
    wrong = ex("what does C9 make", "what does <E> make", ("sells",))  # the KB lacked C9's makes edge
    peers = [*makes, wrong]
    vecs = unit(*[[1, 0, 0.01 * i] for i in range(5)])
    assert outliers(peers, vecs, peers, vecs) == [4]


def test_no_outlier_without_enough_close_peers_or_a_clear_majority():
    a = [ex("q1", "m1", ("makes",)), ex("q2", "m2", ("makes",)), ex("q3", "m3", ("sells",))]
    close = unit([1, 0], [1, 0.05], [1, 0.1])
    assert outliers(a, close, a, close) == []  # two peers each: fewer than MIN_PEERS
    split = [*a, ex("q4", "m4", ("makes",)), ex("q5", "m5", ("sells",)), ex("q6", "m6", ("sells",))]
    vecs = unit(*[[1, 0.01 * i] for i in range(6)])
    assert outliers(split, vecs, split, vecs) == []  # each path held by 2 of 5 peers: more than a quarter
    lone = [*a, ex("q5", "m5", ("sells",)), ex("q6", "m6", ("sells",))]
    assert outliers(lone, vecs[:5], lone, vecs[:5]) == [0, 1]  # makes: 1 of 4 peers, sells: 3 of 4
    far = unit([1, 0], [1, 0], [1, 0], [0, 1])
    odd = [ex(f"q{i}", "m", ("makes",)) for i in range(3)] + [ex("q9", "other", ("sells",))]
    assert outliers(odd, far, odd, far) == []  # its look-alikes are not similar enough to vote


def test_peers_of_another_path_length_do_not_vote():
    two = [ex(f"q{i}", "m", ("makes", "made_of")) for i in range(4)]
    one = ex("q9", "m", ("makes",))
    peers = [*two, one]
    vecs = unit(*[[1, 0.01 * i] for i in range(5)])
    assert outliers([one], vecs[4:], peers, vecs) == []
