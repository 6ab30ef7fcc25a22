"""MoR organizing helpers: which attempt of the corrective loop is reranked, and the network's scores."""

from __future__ import annotations

from hybridrag.agents.mor.matching import question_vector
from hybridrag.agents.mor.neural import load_reranker
from hybridrag.kb.base import KnowledgeBase


def best_attempt(attempts: list[dict]) -> dict | None:
    """The attempt to rerank: one with candidates, a followed plan before textual matching, the
    fewest problems, the latest.
    """
    key = lambda a: (bool(a["candidates"]), a["kind"] == "plan", -len(a["problems"]), a["iteration"])  # noqa: E731
    return max(attempts, key=key) if attempts else None


def neural_scores(
    reranker: str, weights: str, length: int, kb: KnowledgeBase, cands: list[dict]
) -> tuple[list[float] | None, str]:
    """The trained network's scores (None: use the linear reranker) and which reranker scored.

    A network that cannot score on this KB (weights for another fingerprint length or another
    embedding size) gives way to the linear reranker, and the returned name says why.
    """
    if reranker != "neural":
        return None, reranker
    try:
        net = load_reranker(weights)
        if net.length != length:
            raise ValueError(f"the weights use fingerprint length {net.length}, not {length}")
        return net.score(cands, lambda text: question_vector(kb, text)), "neural"
    except ValueError as exc:  # e.g. a KB embedded with another model: the linear reranker instead
        return None, f"structure (neural unusable: {exc})"
