"""Retrieval and answer metrics, with the definitions the papers use.

Retrieval metrics score one ranked list against a gold set. Each ranked item is either an
item id (relevant when it is in the gold set) or a collection of the gold keys that item
covers (a passage naming two gold answers covers both; empty means not relevant). The
second form lets evidence items (passages, triples) be judged by their text, see
:mod:`evals.relevance`.

Names follow the papers:

- ``hit_at_k`` (STaRK Hit@k, used by HybGRAG and MoR): 1 if any relevant item is in the top k.
- ``recall_at_k`` (STaRK Recall@k): fraction of the gold items covered by the top k.
- ``recall_any_at_k`` (the fusion paper's Recall@10): 1 if at least one relevant item is in
  the top k; numerically the same as Hit@k, kept under its own name so tables say which.
- ``reciprocal_rank`` (MRR once averaged): 1 / rank of the first relevant item, 0 if none.
- ``ndcg_at_k``: binary gains, log2 discount ``1 / log2(rank + 1)``; the ideal ranking puts
  ``min(k, n_relevant)`` relevant items first, where ``n_relevant`` is the number of gold
  items, raised to the number of relevant items in the ranking when evidence repeats an
  answer (a triple and a passage both naming it), so the score never exceeds 1.

Answer metrics compare generated text with gold answer strings after SQuAD-style
normalisation (lower case, punctuation and the articles a/an/the removed, whitespace
collapsed): ``exact_match``, token ``f1`` (best over gold answers) and ``answer_hits_at_1``
(HydraRAG/SSRAG Hits@1: some gold answer appears as a whole phrase in the answer).
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

RankedItem = str | Collection[str]


def _covers(item: RankedItem, gold: Collection[str]) -> set[str]:
    """Gold keys one ranked item covers."""
    if isinstance(item, str):
        return {item} if item in gold else set()
    return {g for g in item if g in gold}


def hit_at_k(ranked: Sequence[RankedItem], gold: Collection[str], k: int) -> float:
    """STaRK Hit@k: 1.0 if any of the top ``k`` items is relevant, else 0.0."""
    return 1.0 if any(_covers(item, gold) for item in ranked[:k]) else 0.0


def recall_any_at_k(ranked: Sequence[RankedItem], gold: Collection[str], k: int = 10) -> float:
    """The fusion paper's Recall@k: 1.0 if at least one relevant item is in the top ``k``."""
    return hit_at_k(ranked, gold, k)


def recall_at_k(ranked: Sequence[RankedItem], gold: Collection[str], k: int) -> float:
    """STaRK Recall@k: the fraction of gold items covered by the top ``k`` (0.0 for no gold)."""
    if not gold:
        return 0.0
    covered: set[str] = set()
    for item in ranked[:k]:
        covered |= _covers(item, gold)
    return len(covered) / len(set(gold))


def reciprocal_rank(ranked: Sequence[RankedItem], gold: Collection[str]) -> float:
    """1 / rank (1-based) of the first relevant item, 0.0 if none is relevant."""
    for rank, item in enumerate(ranked, 1):
        if _covers(item, gold):
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[RankedItem], gold: Collection[str], k: int = 10) -> float:
    """nDCG@k with binary gains and a log2 discount (see the module docstring for the ideal)."""
    gains = [1.0 if _covers(item, gold) else 0.0 for item in ranked]
    n_ideal = min(k, max(len(set(gold)), int(sum(gains))))
    if n_ideal == 0:
        return 0.0
    dcg = sum(g / math.log2(rank + 1) for rank, g in enumerate(gains[:k], 1))
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, n_ideal + 1))
    return dcg / ideal


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower case, drop punctuation and articles, collapse spaces."""
    text = _ARTICLES.sub(" ", text.lower().translate(_PUNCT))
    return " ".join(text.split())


def exact_match(prediction: str, golds: Iterable[str]) -> float:
    """1.0 if the normalised prediction equals some normalised gold answer."""
    pred = normalize_answer(prediction or "")
    return 1.0 if pred and any(pred == normalize_answer(g) for g in golds) else 0.0


def _f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1(prediction: str, golds: Iterable[str]) -> float:
    """SQuAD token F1 between the prediction and the best-matching gold answer."""
    pred = normalize_answer(prediction or "").split()
    scores = [_f1(pred, normalize_answer(g).split()) for g in golds]
    return max(scores, default=0.0)


def answer_hits_at_1(prediction: str, golds: Iterable[str]) -> float:
    """Hits@1 for generated answers: 1.0 if a gold answer is a whole phrase of the prediction."""
    pred = f" {normalize_answer(prediction or '')} "
    for g in golds:
        norm = normalize_answer(g)
        if norm and f" {norm} " in pred:
            return 1.0
    return 0.0


RETRIEVAL_METRICS = ("hit@1", "hit@5", "recall@20", "recall_any@10", "mrr", "ndcg@10")
ANSWER_METRICS = ("answer_em", "answer_f1", "answer_hits@1")


def retrieval_scores(ranked: Sequence[RankedItem], gold: Collection[str]) -> dict[str, float]:
    """Every retrieval metric of one question, keyed as in :data:`RETRIEVAL_METRICS`."""
    return {
        "hit@1": hit_at_k(ranked, gold, 1),
        "hit@5": hit_at_k(ranked, gold, 5),
        "recall@20": recall_at_k(ranked, gold, 20),
        "recall_any@10": recall_any_at_k(ranked, gold, 10),
        "mrr": reciprocal_rank(ranked, gold),
        "ndcg@10": ndcg_at_k(ranked, gold, 10),
    }


def answer_scores(answer: str, golds: Sequence[str]) -> dict[str, float]:
    """Every answer metric of one question, keyed as in :data:`ANSWER_METRICS`."""
    return {
        "answer_em": exact_match(answer, golds),
        "answer_f1": f1(answer, golds),
        "answer_hits@1": answer_hits_at_1(answer, golds),
    }
