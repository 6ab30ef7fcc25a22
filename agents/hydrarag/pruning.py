"""HydraRAG evidence pruning (paper §4.3, Algorithm 4), without the LLM step.

A candidate path is a dict: ``id``, ``source`` (kg | doc | web), ``phase``, ``text`` (the
verbalised path), ``keys`` (entity keys: ``id:<kb id>`` for linked entities,
``name:<lower-cased name>`` otherwise), ``answers`` (KB ids of answer candidates),
``doc_id`` / ``doc_name`` (passage or web page), ``path`` (structured steps).

1. Relevance: ``s_rel = λ_sem·cos(h(I), h(p)) + (1-λ_sem)·Jaccard(Topic(q), Ent(p))``; top W1.
2. Verification: ``s_ver = α1·ρ_src + α2·min(|Supp|, W_max)/W_max + α3·|Ent(p) ∩ E_q|/|Ent(p)|``
   where Supp(p) is the set of source types of candidates within cosine ``γ`` of p (p
   included); ``cross = α_cross·s_rel + (1-α_cross)·s_ver``; top W2.
3. LLM-aware selection of W_max paths: see :func:`apply_choice` (fallback: top by cross-score).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from hybridrag.agents import vector_table
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.cancel import check_cancelled
from hybridrag.kb.embeddings import SMALL_BATCH, embed_matrix
from hybridrag.prompts.data_block import data_block

_VECTORS: dict[tuple[str, str], np.ndarray] = {}
_MAX_CACHED = 200_000
SENTENCE_TABLE = "hydrarag-sentences"  # vector table of the KB's document sentences (agents.vector_table)
ENCODE_CHUNK = SMALL_BATCH  # texts per encode: the largest a query-time (single-thread) encode takes


@dataclass(frozen=True)
class PruneSettings:
    """Widths and weights of evidence pruning (defaults: the paper's App. C)."""

    beam_width: int = 100
    cross_width: int = 20
    max_width: int = 3
    lambda_sem: float = 0.7
    alpha_cross: float = 0.7
    priors: dict[str, float] = field(default_factory=lambda: {"kg": 1.0, "doc": 0.8, "web": 0.7})
    alphas: tuple[float, float, float] = (1 / 3, 1 / 3, 1 / 3)
    gamma: float = 0.7
    prune_text: str = "relations"  # a KG path's relevance text: "relations" (signature) or "path"


def embed_texts(kb: KnowledgeBase, texts: list[str]) -> np.ndarray:
    """Normalised embeddings of ``texts``, one row each.

    Cached ones are reused, the KB's document sentences are read from their table
    (:func:`agents.hydrarag.text.build_sentence_table`), the rest are encoded in chunks of
    ``ENCODE_CHUNK`` (each a query-time encode: :func:`kb.embeddings.encode_threads`).
    """
    spec = kb.embeddings_spec
    missing = [t for t in dict.fromkeys(texts) if (spec, t) not in _VECTORS]
    if missing:
        if len(_VECTORS) > _MAX_CACHED:
            _VECTORS.clear()
        stored = vector_table.lookup(kb, SENTENCE_TABLE, missing)  # the KB's document sentences, built once
        for t, v in stored.items():
            _VECTORS[(spec, t)] = v
        missing = [t for t in missing if t not in stored]
        for at in range(0, len(missing), ENCODE_CHUNK):
            check_cancelled()  # thousands of paths a beam: a stopped run ends between chunks
            chunk = missing[at : at + ENCODE_CHUNK]
            for t, v in zip(chunk, embed_matrix(kb.embeddings, chunk), strict=True):
                _VECTORS[(spec, t)] = v
    if not texts:
        return np.zeros((0, 1), dtype=np.float32)
    return np.vstack([_VECTORS[(spec, t)] for t in texts])


def embedded(c: dict, prune_text: str = "path") -> str:
    """The text a candidate is embedded by.

    A KG path is embedded by its relation signature (``prune_text=relations``) or its verbalisation
    with fewer names per set (``path``); any other path by its text.
    """
    if prune_text == "relations" and c.get("signature"):
        return c["signature"]
    return c.get("embedded") or c["text"]


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0 for two empty sets)."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def relevance(
    kb: KnowledgeBase,
    indicator: str,
    topic_keys: list[str],
    texts: list[str],
    keys: list[list[str]] | np.ndarray,
    lambda_sem: float,
) -> np.ndarray:
    """Hybrid relevance of each path text to the skyline indicator and the topic entities.

    ``keys`` are each path's entity keys, or the Jaccard overlaps already computed (an array).
    """
    if not texts:
        return np.zeros(0, dtype=np.float32)
    vecs = embed_texts(kb, [*texts, indicator])
    sem = vecs[:-1] @ vecs[-1]
    topics = set(topic_keys)
    ent = keys if isinstance(keys, np.ndarray) else np.array([jaccard(topics, set(k)) for k in keys], dtype=np.float32)
    return lambda_sem * sem + (1 - lambda_sem) * ent


def _alignment(keys: list[str], subgraph_keys: set[str]) -> float:
    """Share of ``keys`` that are ``id:<entity in the subgraph>`` (``subgraph_keys``: those keys)."""
    if not keys:
        return 0.0
    return sum(map(subgraph_keys.__contains__, keys)) / len(keys)


def verification(kb: KnowledgeBase, cands: list[dict], subgraph: set[str], s: PruneSettings) -> list[dict]:
    """Tri-factor features and ``s_ver`` per candidate: source prior, agreement, alignment."""
    if not cands:
        return []
    sources = np.array([c["source"] for c in cands])
    if len(set(sources.tolist())) > 1:  # corroboration needs another source; one source supports itself
        vecs = embed_texts(kb, [embedded(c) for c in cands])
        sims = vecs @ vecs.T
    else:
        sims = np.ones((len(cands), len(cands)), dtype=np.float32)
    out, subgraph_keys = [], {f"id:{e}" for e in subgraph}
    for i, c in enumerate(cands):
        support = sorted(set(sources[sims[i] >= s.gamma].tolist()) | {c["source"]})
        f1 = s.priors.get(c["source"], 0.0)
        f2 = min(len(support), s.max_width) / s.max_width
        f3 = _alignment(c["keys"], subgraph_keys)
        ver = s.alphas[0] * f1 + s.alphas[1] * f2 + s.alphas[2] * f3
        out.append({"support": support, "f": [round(f1, 4), round(f2, 4), round(f3, 4)], "ver": float(ver)})
    return out


def beam_cross_scores(
    kb: KnowledgeBase, rel: np.ndarray, texts: list[str], doc_sentences: list[str], s: PruneSettings
) -> np.ndarray:
    """Cross-score of KG paths inside the beam (§4.2.1): relevance plus verification.

    A path is corroborated by the retrieved document sentences within cosine ``γ`` (f2), its
    source prior is ρ_KG (f1) and its alignment is 1 (f3: a beam path starts at a topic entity
    and stays within D_max hops, i.e. inside E_q by construction). ``texts`` (the verbalised
    paths) are read only when there are document sentences.
    """
    sources = np.ones(len(rel), dtype=np.float32)  # kg itself
    if doc_sentences and len(rel):
        sims = embed_texts(kb, texts) @ embed_texts(kb, doc_sentences).T
        sources += (sims.max(axis=1) >= s.gamma).astype(np.float32)
    f2 = np.minimum(sources, s.max_width) / s.max_width
    ver = s.alphas[0] * s.priors.get("kg", 1.0) + s.alphas[1] * f2 + s.alphas[2] * 1.0
    return s.alpha_cross * rel + (1 - s.alpha_cross) * ver


def rank_candidates(
    kb: KnowledgeBase, cands: list[dict], indicator: str, topic_keys: list[str], subgraph: set[str], s: PruneSettings
) -> list[dict]:
    """Steps 1 and 2: the top-W2 candidates by cross-score, each with its scores attached."""
    rel = relevance(
        kb, indicator, topic_keys, [embedded(c, s.prune_text) for c in cands], [c["keys"] for c in cands], s.lambda_sem
    )
    order = np.argsort(-rel, kind="stable")[: s.beam_width]
    pool = [{**cands[i], "rel": float(rel[i])} for i in order]
    for c, v in zip(pool, verification(kb, pool, subgraph, s), strict=True):
        c.update(v)
        c["score"] = s.alpha_cross * c["rel"] + (1 - s.alpha_cross) * c["ver"]
    pool.sort(key=lambda c: -c["score"])
    return pool[: s.cross_width]


def apply_choice(pool: list[dict], picks: list[int] | None, width: int) -> tuple[list[dict], bool]:
    """Step 3: the LLM's picks (1-based numbers into ``pool``); top by cross-score when unusable.

    Returns the selected paths and whether the LLM choice was used.
    """
    chosen = [pool[n - 1] for n in dict.fromkeys(picks or []) if 1 <= n <= len(pool)][:width]
    return (chosen, True) if chosen else (pool[:width], False)


def numbered(paths: list[dict]) -> str:
    """Paths as a numbered list with their source (the trace's view of unrefined paths)."""
    return "\n".join(f"{i}. [{p['source']}] {p['text']}" for i, p in enumerate(paths, 1)) or "(none)"


def path_blocks(paths: list[dict]) -> str:
    """Paths as numbered quoted data blocks with their source, for prompts."""
    return (
        "\n".join(data_block([("path", p["text"])], n=i, source=p["source"]) for i, p in enumerate(paths, 1))
        or "(none)"
    )


def to_evidence(c: dict) -> dict:
    """A pruned path in the common evidence shape."""
    return {
        "source": c["source"],
        "id": c.get("doc_id") or c["id"],
        "text": c["text"],
        "score": round(float(c.get("score", 0.0)), 6),
        "path": c.get("path"),
    }


def to_ranked(kb: KnowledgeBase, paths: list[dict], topic_ids: set[str], k: int) -> list[dict]:
    """Answer candidates of the paths in path order (entities, then passages/pages), the top ``k``.

    A candidate more than one path reaches keeps the place of the first and the best score of all,
    so a later path with a higher score cannot move the answer of a path selected before it back.
    """
    best: dict[str, dict] = {}

    def offer(item: dict) -> None:
        seen = best.get(item["id"])
        if seen is None:
            best[item["id"]] = item
        else:
            seen["score"] = max(seen["score"], item["score"])

    wanted = {eid for p in paths for eid in p.get("answers", []) if eid not in topic_ids}
    names = kb.names(wanted) if wanted else {}  # one read for every answer candidate's name
    for rank, p in enumerate(paths):
        score = round(float(p.get("score", 0.0)), 6)
        for eid in p.get("answers", []):
            if eid not in topic_ids:
                offer(
                    {
                        "id": eid,
                        "kind": "entity",
                        "name": names[eid],
                        "score": score,
                        "source": p["source"],
                        "_rank": rank,
                    }
                )
        if p.get("doc_id"):
            kind = "web" if p["source"] == "web" else "passage"
            offer(
                {
                    "id": p["doc_id"],
                    "kind": kind,
                    "name": p.get("doc_name") or p["doc_id"],
                    "score": score,
                    "source": p["source"],
                    "_rank": rank,
                }
            )
    items = sorted(best.values(), key=lambda r: (r["_rank"], r["kind"] != "entity", -r["score"]))
    return [{k_: v for k_, v in r.items() if k_ != "_rank"} for r in items[:k]]
