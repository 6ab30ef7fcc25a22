"""HybGRAG's retriever bank: the text module and the hybrid module (no LLM here).

- Text module: vector similarity between the question and every indexed text (entity
  documents and passages); hits are grouped by the entity a text belongs to. An entity the
  question names exactly ranks above a title that merely contains its name ("Big" above "The
  Big Picture"; :func:`tools.names.prefer_exact`, the rule fusion and SSRAG use).
- Hybrid module: the ego-graph of each topic entity along the useful relations (undirected,
  radius <= 2 by default), the intersection of their entity sets (topic entities excluded),
  then the candidates' texts ranked by similarity to the question. Each candidate keeps the
  reasoning path from every topic entity, verbalised for the validator.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from hybridrag.agents.hybgrag.linking import link_action, link_entity
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.model import Subgraph, Triple
from hybridrag.tools.fused_text import hybrid_search
from hybridrag.tools.items import Item
from hybridrag.tools.names import prefer_exact
from hybridrag.tools.retrieval import mentions_in
from hybridrag.tools.text_hops import doc_rows

__all__ = [  # link_action and link_entity live in agents.hybgrag.linking and are re-exported here
    "Reference",
    "Retrieval",
    "exact_first",
    "hybrid_retrieve",
    "link_action",
    "link_entity",
    "name_in",
    "rank_entities",
    "reference_paths",
    "text_retrieve",
    "verbalise_path",
]


@dataclass
class Reference(Item):
    """One retrieved item: an entity (with its best text) or an unattached passage, and its reasoning paths."""

    paths: list[list[Triple]] = field(default_factory=list)


@dataclass
class Retrieval:
    """What one retrieval module returned, plus the facts the critic may use."""

    module: str
    references: list[Reference]
    ego_sizes: dict[str, int] = field(default_factory=dict)
    intersection: int | None = None
    unused_relations: list[str] = field(default_factory=list)


def verbalise_path(kb: KnowledgeBase, start: str, path: list[Triple]) -> str:
    """Render ``topic → relation → ... → neighbour``; edges walked tail-to-head say (inverse)."""
    names = kb.names({start, *(e for t in path for e in (t.head, t.tail))})  # one store read per path
    parts, node = [names[start]], start
    for t in path:
        forward = t.head == node
        parts.append(t.type if forward else f"{t.type} (inverse)")
        node = t.tail if forward else t.head
        parts.append(names[node])
    return " → ".join(parts)


def _vectors(kb: KnowledgeBase, rows: list[int]) -> np.ndarray:
    index = kb.dense.index
    keys = np.asarray(rows, dtype=np.int64)
    try:
        return np.asarray(index.reconstruct_batch(keys), dtype=np.float32)
    except (AttributeError, RuntimeError):
        return np.vstack([index.reconstruct(int(r)) for r in rows]).astype(np.float32)


def rank_entities(kb: KnowledgeBase, question: str, entity_ids: list[str], k: int) -> list[tuple[str, float, int]]:
    """Rank entities by the best cosine similarity of their texts; returns (id, score, row)."""
    rows_of = doc_rows(kb)
    owners, rows = [], []
    for eid in entity_ids:
        for r in rows_of.get(eid, []):
            owners.append(eid)
            rows.append(r)
    if not rows:
        return [(eid, 0.0, -1) for eid in entity_ids[:k]]
    scores = _vectors(kb, rows) @ kb.embed(question)
    best: dict[str, tuple[float, int]] = {}
    for eid, row, s in zip(owners, rows, scores.tolist(), strict=True):
        if eid not in best or s > best[eid][0]:
            best[eid] = (s, row)
    ranked = sorted(best.items(), key=lambda kv: -kv[1][0])[:k]
    return [(eid, s, row) for eid, (s, row) in ranked]


def text_retrieve(
    kb: KnowledgeBase, question: str, k: int = 10, search: Callable[[str, int], list] | None = None
) -> Retrieval:
    """Text module: dense and BM25 search over all texts, fused, grouped by owning entity (best first).

    ``search(query, k)``: the dense hits (``kb.dense_search`` unless given; the graph passes its tool step);
    they are fused with as many BM25 hits and near-duplicates ordered by corroboration
    (:func:`tools.fused_text.hybrid_search`), which beats either search alone on real text.
    """
    firsts: dict[str, object] = {}  # owner (or passage id) → its best hit, in hit order
    for hit in hybrid_search(kb, question, 4 * k, dense=search):
        firsts.setdefault(hit.doc.entity_id or hit.doc.id, hit)
    kept = list(firsts.values())[:k]
    names = kb.names({h.doc.entity_id for h in kept if h.doc.entity_id})  # one store read for all hits
    refs = [
        Reference(
            h.doc.entity_id or h.doc.id,
            "entity" if h.doc.entity_id else "passage",
            names[h.doc.entity_id] if h.doc.entity_id else h.doc.id,
            h.score,
            "doc",
            h.doc.text,
        )
        for h in kept
    ]
    return Retrieval("text", exact_first(kb, question, refs)[:k])


def exact_first(kb: KnowledgeBase, question: str, refs: list[Reference]) -> list[Reference]:
    """``refs`` with the entities the question names exactly placed above the first near-miss title.

    A near-miss is an entity whose title contains a name the question writes verbatim and that
    :func:`tools.names.prefer_exact` does not keep beside it ("The Big Picture" for "who directed
    Big"). The named entity takes the near-miss's place and score (with its own best text when the
    search did not return it); the near-misses and the rest follow in their order.
    """
    named = mentions_in(kb, question)
    ids = [r.id for r in refs if r.kind == "entity" and r.id not in named]
    if not named or not ids:
        return refs
    written = [kb.name(n).casefold() for n in named]
    holding = [i for i in ids if any(name_in(w, kb.name(i).casefold()) for w in written)]
    near = set(holding) - set(prefer_exact(kb, question, holding, named))
    first = next((j for j, r in enumerate(refs) if r.id in near), None)
    if first is None:
        return refs
    ahead = {r.id for r in refs[:first]}
    moved = [r for r in refs[first:] if r.id in named]
    missing = [n for n in named if n not in ahead and all(r.id != n for r in moved)]
    for eid, _, row in rank_entities(kb, question, missing, len(missing)):
        moved.append(
            Reference(eid, "entity", kb.name(eid), 0.0, "doc", kb.docs[row].text if row >= 0 else kb.name(eid))
        )
    top = refs[first].score
    moved = [replace(r, score=top) for r in moved]
    rest = [r for r in refs[first:] if r.id not in named]
    return [*refs[:first], *moved, *rest]


def name_in(name: str, title: str) -> bool:
    """Whether ``name`` is written in ``title`` as whole words (both casefolded)."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", title) is not None


def _ego_graphs(kb: KnowledgeBase, topic_ids: list[str], relations: list[str], radius: int) -> dict[str, Subgraph]:
    # No useful relation at all: any relation, one hop (a bounded neighbourhood, our choice).
    rels, rad = (relations, radius) if relations else (None, 1)
    return {t: kb.graph.ego_graph([t], radius=rad, relations=rels) for t in topic_ids}


def hybrid_retrieve(
    kb: KnowledgeBase, question: str, topic_ids: list[str], relations: list[str], radius: int = 2, k: int = 10
) -> Retrieval:
    """Hybrid module: ego-graphs along ``relations``, intersection, VSS ranking of candidates."""
    egos = _ego_graphs(kb, topic_ids, relations, radius)
    seeds = set(topic_ids)
    sets = [set(sg.distance) - seeds for sg in egos.values()]
    candidates = set.intersection(*sets) if sets else set()
    used = {t.type for sg in egos.values() for t in sg.triples}
    out = Retrieval(
        "hybrid",
        [],
        {t: len(s) for t, s in zip(egos, sets, strict=True)},
        len(candidates),
        [r for r in relations if r not in used],
    )
    ranked = rank_entities(kb, question, sorted(candidates), k)
    names = kb.names(eid for eid, _, _ in ranked)  # one store read for all candidates
    for eid, score, row in ranked:
        text = kb.docs[row].text if row >= 0 else names[eid]
        paths = [sg.path_to(eid) for sg in egos.values()]
        out.references.append(Reference(eid, "entity", names[eid], score, "kg", text, paths))
    return out


def reference_paths(kb: KnowledgeBase, ref: Reference) -> list[str]:
    """Verbalised reasoning paths of a reference (one per topic entity)."""
    return [verbalise_path(kb, _path_start(p, ref.id), p) for p in ref.paths if p]


def _path_start(path: list[Triple], end: str) -> str:
    """Walk a path backwards from ``end`` to the topic entity it starts at."""
    node = end
    for t in reversed(path):
        node = t.head if t.tail == node else t.tail
    return node
