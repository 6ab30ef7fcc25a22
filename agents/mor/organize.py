"""MoR organizing: the attempts of the corrective loop, which one is reranked, and its reranked top-K."""

from __future__ import annotations

from hybridrag.agents.mor import rerank as rr
from hybridrag.agents.mor.context import MoRContext
from hybridrag.agents.mor.matching import question_vector
from hybridrag.agents.mor.neural import load_reranker
from hybridrag.agents.mor.output import outputs, passage_outputs
from hybridrag.kb.base import KnowledgeBase


def add_attempt(
    attempts: list[dict],
    iteration: int,
    kind: str,
    problems: list[str],
    candidates: list[dict],
    topics: list[str] | None = None,
) -> list[dict]:
    """The attempts so far plus this one: a followed plan (``kind="plan"``) or textual matching (``"text"``)."""
    attempt = {
        "iteration": iteration,
        "kind": kind,
        "problems": problems,
        "candidates": candidates,
        "topics": topics or [],
    }
    return [*attempts, attempt]


def best_attempt(attempts: list[dict]) -> dict | None:
    """The attempt to rerank: one with candidates, a followed plan over textual matching, fewest problems, latest."""
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


def rerank_best(
    ctx: MoRContext, kb: KnowledgeBase, question: str, attempts: list[dict], candidates: list[dict]
) -> tuple[dict, dict]:
    """Rerank the best attempt's candidates (``candidates`` when there is none) and keep the top-K.

    With no candidate left, or on a documents KB (``hybridrag ingest --documents``) when no followed plan
    reached one (:func:`textual_only`), the passages about no entity are ranked instead (:func:`passage_outputs`).

    Returns:
        (the outputs ``answer``, ``ranked``, ``evidence``; the facts for the trace: ``reranker``,
        ``attempt``, ``pool``, ``top`` and, for the passage fallback, ``passages``).
    """
    best = best_attempt(attempts)
    cands = best["candidates"] if best else candidates
    scores, used = neural_scores(ctx.reranker, ctx.reranker_weights, ctx.fingerprint_length, kb, cands)
    linear = used.startswith("structure")
    weights = (
        rr.load_weights("" if ctx.reranker == "neural" else ctx.reranker_weights, ctx.fingerprint_length)
        if linear
        else {"semantic": 1.0}
    )
    groups = rr.parse_groups(ctx.reranker_features) if linear or scores is not None else ("tf",)
    top = rr.rerank(cands, weights, ctx.fingerprint_length, groups, scores)[: ctx.top_k]
    out = outputs(kb, question, top, best.get("topics", []) if best else [])
    facts = {"reranker": used, "attempt": best["iteration"] if best else None, "pool": len(cands), "top": top}
    if not top or (textual_only(best) and "documents" in kb.manifest):
        out = passage_outputs(kb, question, ctx.top_k, ctx.text_matcher)
        facts["passages"] = len(out["ranked"])
    return out, facts


def textual_only(best: dict | None) -> bool:
    """Whether the reranked attempt is textual matching of the question alone (no followed plan reached any).

    On a documents KB with an extracted graph, that matching ranks entities whose only text is their
    name, while the text that answers is in the passages about no entity: there the passages rank instead.
    """
    return best is None or best["kind"] != "plan" or not best["candidates"]
