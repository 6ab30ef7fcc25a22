"""Hand-checked examples for every evaluation metric."""

import math

import pytest

from hybridrag.evals.metrics import (
    answer_hits_at_1,
    answer_scores,
    exact_match,
    f1,
    hit_at_k,
    ndcg_at_k,
    normalize_answer,
    recall_any_at_k,
    recall_at_k,
    reciprocal_rank,
    retrieval_scores,
)

RANKED = ["a", "b", "c", "d"]


def test_hit_at_k_counts_any_relevant_item_in_the_top_k():
    assert hit_at_k(RANKED, {"b"}, 1) == 0.0
    assert hit_at_k(RANKED, {"b"}, 2) == 1.0
    assert hit_at_k(RANKED, {"z"}, 4) == 0.0
    assert hit_at_k([], {"a"}, 5) == 0.0


def test_stark_recall_is_the_fraction_of_gold_items_in_the_top_k():
    gold = {"b", "d", "x"}
    assert recall_at_k(RANKED, gold, 1) == 0.0
    assert recall_at_k(RANKED, gold, 2) == pytest.approx(1 / 3)
    assert recall_at_k(RANKED, gold, 20) == pytest.approx(2 / 3)
    assert recall_at_k(RANKED, set(), 20) == 0.0


def test_fusion_paper_recall_is_whether_any_relevant_item_is_in_the_top_k():
    gold = {"d", "x", "y"}  # STaRK recall@10 would be 1/3
    assert recall_any_at_k(RANKED, gold, 10) == 1.0
    assert recall_any_at_k(RANKED, gold, 3) == 0.0


def test_reciprocal_rank_of_the_first_relevant_item():
    assert reciprocal_rank(RANKED, {"c", "d"}) == pytest.approx(1 / 3)
    assert reciprocal_rank(RANKED, {"a"}) == 1.0
    assert reciprocal_rank(RANKED, {"z"}) == 0.0


def test_ndcg_binary_gains_log2_discount():
    # relevant at ranks 1 and 3: DCG = 1/log2(2) + 1/log2(4) = 1.5; ideal = 1 + 1/log2(3)
    expected = 1.5 / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["a", "b", "c"], {"a", "c"}, 3) == pytest.approx(expected)
    assert ndcg_at_k(["a", "b", "c"], {"a", "c"}, 3) == pytest.approx(0.919720, abs=1e-6)
    # one relevant item at rank 2 of a one-item gold set: 1/log2(3)
    assert ndcg_at_k(["x", "g"], {"g"}, 10) == pytest.approx(1 / math.log2(3))
    # the ideal is capped at k: 3 gold items, k = 1, first item relevant
    assert ndcg_at_k(["a", "b"], {"a", "b", "c"}, 1) == 1.0
    assert ndcg_at_k(["b"], {"a"}, 10) == 0.0


def test_items_may_cover_several_gold_keys_and_repeat_an_answer():
    covered = [["a", "b"], [], ["c"]]
    assert recall_at_k(covered, {"a", "b", "c", "d"}, 1) == 0.5
    assert recall_at_k(covered, {"a", "b", "c", "d"}, 3) == 0.75
    assert reciprocal_rank([[], ["a"]], {"a"}) == 0.5
    # a triple and a passage both naming the only answer: both count, nDCG stays at 1
    assert ndcg_at_k([["g"], ["g"], []], {"g"}, 10) == pytest.approx(1.0)
    # the same with an irrelevant item first: (1/log2(3) + 1/log2(4)) / (1 + 1/log2(3))
    expected = (1 / math.log2(3) + 0.5) / (1 + 1 / math.log2(3))
    assert ndcg_at_k([[], ["g"], ["g"]], {"g"}, 10) == pytest.approx(expected)


def test_squad_normalisation():
    assert normalize_answer("The  Godfather!") == "godfather"
    assert normalize_answer("A Beautiful Mind, an Oscar winner.") == "beautiful mind oscar winner"


def test_exact_match_after_normalisation():
    assert exact_match("the godfather", ["Godfather", "X"]) == 1.0
    assert exact_match("Godfather II", ["Godfather"]) == 0.0
    assert exact_match("", ["Godfather"]) == 0.0


def test_token_f1_takes_the_best_gold_answer():
    # 5 predicted tokens, 2 gold tokens, 2 shared: P = 0.4, R = 1, F1 = 0.8 / 1.4
    assert f1("Tom Hanks and Meg Ryan", ["Tom Hanks"]) == pytest.approx(0.8 / 1.4)
    assert f1("Tom Hanks and Meg Ryan", ["Bill Paxton", "Meg Ryan"]) == pytest.approx(0.8 / 1.4)
    assert f1("nobody", ["Tom Hanks"]) == 0.0
    assert f1("", ["Tom Hanks"]) == 0.0


def test_answer_hits_at_1_is_a_whole_phrase_containment():
    answer = "It was directed by Steven Spielberg."
    assert answer_hits_at_1(answer, ["steven spielberg"]) == 1.0
    assert answer_hits_at_1(answer, ["Spiel"]) == 0.0
    assert answer_hits_at_1(answer, ["George Lucas", "Steven"]) == 1.0
    assert answer_hits_at_1("", ["x"]) == 0.0


def test_score_dicts_use_the_documented_names():
    scores = retrieval_scores(["x", "g"], {"g"})
    assert scores == pytest.approx(
        {"hit@1": 0.0, "hit@5": 1.0, "recall@20": 1.0, "recall_any@10": 1.0, "mrr": 0.5, "ndcg@10": 1 / math.log2(3)}
    )
    assert answer_scores("Tom Hanks", ["tom hanks"]) == {"answer_em": 1.0, "answer_f1": 1.0, "answer_hits@1": 1.0}
