"""The vectors and scores of SSRAG's contexts, for the joint rerank and the dedup.

- :func:`item_vectors`: one vector per context: KB documents by their stored vectors, graph
  contexts by their facts (``graph_vectors="facts"``: the mean of the node's fact vectors) or
  their converted text (``"text"``, the paper);
- :func:`item_scores`: each context's cosine to the query vector Qv; with ``"facts"`` a graph
  context scores as its most relevant fact.

Every vector comes from :mod:`agents.ssrag.vectors` (its cache, the KB's stored vectors, facts
scored by parts).
"""

from __future__ import annotations

import numpy as np

from hybridrag.agents.ssrag.vectors import doc_vectors, fact_vectors, node_vector, vectors
from hybridrag.kb.base import KnowledgeBase

EMBED_CHARS = 2000  # characters of a context embedded (MiniLM reads 256 tokens)
GRAPH_VECTORS = ("facts", "text")


def item_vectors(
    kb: KnowledgeBase,
    items: list[dict],
    nodes: dict[str, dict] | None = None,
    graph: str = "facts",
    scoring: str = "parts",
) -> np.ndarray:
    """One vector per item.

    Stored for KB documents; for a graph item with ``graph="facts"`` the mean of its node's fact
    vectors (``nodes`` by id, the graph branch's nodes; scored by ``scoring``); otherwise its text
    embedded (its first ``EMBED_CHARS`` characters: the embedding model reads a few hundred tokens,
    a longer text gives the same vector).
    """
    if graph not in GRAPH_VECTORS:
        raise ValueError(f"graph_vectors must be one of {GRAPH_VECTORS}, not {graph!r}")
    out = doc_vectors(kb, [it for it in items if it["source"] == "doc"])
    mat, at = np.zeros((len(items), out.shape[1]), dtype=np.float32), 0
    rest = []
    for n, it in enumerate(items):
        node = (nodes or {}).get(it["id"]) if it["source"] == "kg" and graph == "facts" else None
        vec = node_vector(kb, node, scoring) if node is not None else None
        if it["source"] == "doc":
            mat[n], at = out[at], at + 1
        elif vec is not None:
            mat[n] = vec
        else:
            rest.append(n)
    if rest:
        mat[rest] = vectors(kb, [(items[n]["text"] or items[n]["name"])[:EMBED_CHARS] for n in rest])
    return mat


def item_scores(
    kb: KnowledgeBase,
    items: list[dict],
    qv: np.ndarray,
    nodes: dict[str, dict] | None = None,
    graph: str = "facts",
    scoring: str = "parts",
) -> np.ndarray:
    """Cosine of each item to Qv.

    With ``graph="facts"`` a graph item scores as its most relevant fact (the best cosine of its
    facts' vectors), else by its vector (:func:`item_vectors`).
    """
    scores = item_vectors(kb, items, nodes, graph, scoring) @ qv
    for n, it in enumerate(items):
        node = (nodes or {}).get(it["id"]) if it["source"] == "kg" and graph == "facts" else None
        if node and node.get("facts"):
            rows = node.get("triples") or [None] * len(node["facts"])
            scores[n] = float((fact_vectors(kb, node["facts"], rows, scoring) @ qv).max())
    return scores
