"""MoR textual matching (§3.2.2) and the initial semantic score (§B.2), no LLM.

Textual matching scores an *expanded query* (the question plus one node's restriction) against
entity documents and the passages about each entity; an entity's score is the best of its texts,
and matching is restricted to one category. The paper uses BM25 on Amazon and MAG (a fine-tuned
Contriever on PRIME); ``matcher="dense"`` uses the KB's embedding model instead. Passages tied to
no entity are not candidates: MoR retrieves graph nodes.

The initial semantic score (Ada-002 cosine in the paper) is the KB embedding model's cosine
between the question and an entity's best text; it selects the intermediate candidates and is
the reranker's fourth textual feature.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.text_index import words

DENSE_POOL = 2000  # dense matching scores this many nearest texts exactly; the rest on demand


@dataclass
class DocTable:
    """Which entity (and category) each indexed text belongs to."""

    rows_of: dict[str, list[int]]
    row_entity: list[str | None]
    row_type: np.ndarray
    has_entity: np.ndarray


_TABLES: dict[int, DocTable] = {}


GET_BATCH = 5_000  # ids per ``get_many`` call when the table is built (a server store also splits by message size)


def _entities(kb: KnowledgeBase, ids: set[str]) -> dict:
    """The entities of ``ids`` read in batches of ``GET_BATCH`` (not one store read per document)."""
    order, found = sorted(ids), {}
    for at in range(0, len(order), GET_BATCH):
        found.update(kb.graph.get_many(order[at : at + GET_BATCH]))
    return found


def doc_table(kb: KnowledgeBase) -> DocTable:
    """Build (once per opened KB) the row → entity → category maps."""
    table = _TABLES.get(id(kb))
    if table is None:
        rows_of: dict[str, list[int]] = {}
        owners, types = [], []
        ents = _entities(kb, {d.entity_id for d in kb.docs if d.entity_id is not None})
        for i, d in enumerate(kb.docs):
            ent = ents.get(d.entity_id) if d.entity_id is not None else None
            owners.append(ent.id if ent else None)
            types.append(ent.type if ent else "")
            if ent is not None:
                rows_of.setdefault(ent.id, []).append(i)
        table = _TABLES[id(kb)] = DocTable(
            rows_of, owners, np.asarray(types, dtype=object), np.asarray([o is not None for o in owners], dtype=bool)
        )
    return table


QUESTION_CACHE = 256  # texts kept per KB: questions, and the reranker's category sequences (shared)
_questions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_questions_lock = threading.Lock()


def question_vector(kb: KnowledgeBase, text: str) -> np.ndarray:
    """The KB's embedding of a question, cached: the last ``QUESTION_CACHE`` texts per KB are kept."""
    with _questions_lock:
        cache = _questions.setdefault(kb, OrderedDict())
        vec = cache.get(text)
        if vec is not None:
            cache.move_to_end(text)
            return vec
    vec = kb.embed(text)
    with _questions_lock:
        cache[text] = vec
        while len(cache) > QUESTION_CACHE:
            cache.popitem(last=False)
    return vec


def forget_questions(texts: Iterable[str]) -> None:
    """Drop ``texts`` from the question cache of every KB (a benchmark charging each step its embedding)."""
    drop = set(texts)
    with _questions_lock:
        for cache in _questions.values():
            for t in drop & set(cache):
                del cache[t]


def _vectors(kb: KnowledgeBase, rows: list[int]) -> np.ndarray:
    index = kb.dense.index
    try:
        return np.asarray(index.reconstruct_batch(np.asarray(rows, dtype=np.int64)), dtype=np.float32)
    except (AttributeError, RuntimeError):
        return np.vstack([index.reconstruct(int(r)) for r in rows]).astype(np.float32)


class LayerScores:
    """Similarity of one expanded query to every indexed text, and to entities (max over texts)."""

    def __init__(self, kb: KnowledgeBase, query: str, matcher: str = "bm25") -> None:
        """Score ``query`` with ``matcher`` (``bm25`` or ``dense``)."""
        self.kb, self.table, self.matcher = kb, doc_table(kb), matcher
        n = len(kb.docs)
        if matcher == "bm25":
            cols = [kb.bm25.vocab[t] for t in dict.fromkeys(words(query)) if t in kb.bm25.vocab]
            self.rows = (
                np.asarray(kb.bm25.weights[:, cols].sum(axis=1), dtype=np.float32).ravel()
                if cols
                else np.zeros(n, np.float32)
            )
        elif matcher == "dense":
            self.query_vec = kb.embed(query)
            self.rows = np.full(n, np.nan, np.float32)
            ids, scores = kb.dense.search(self.query_vec, min(DENSE_POOL, n))
            self.rows[ids] = scores
        else:
            raise ValueError(f"unknown text matcher {matcher!r}; use bm25 or dense")
        known = self.rows[~np.isnan(self.rows)]
        top = float(known.max()) if known.size else 0.0
        self.scale = top if matcher == "bm25" and top > 0 else 1.0

    def _fill(self, rows: list[int]) -> np.ndarray:
        missing = [r for r in rows if np.isnan(self.rows[r])]
        if missing:
            self.rows[missing] = _vectors(self.kb, missing) @ self.query_vec
        return self.rows[rows]

    def of(self, entity_id: str) -> float:
        """Score of an entity: its best text, normalised to [0, 1] for BM25 (0 without texts)."""
        rows = self.table.rows_of.get(entity_id, [])
        return float(self._fill(rows).max()) / self.scale if rows else 0.0

    def top(self, categories: Iterable[str] | None, k: int) -> list[tuple[str, float]]:
        """Top-``k`` entities of the given categories (all when None) with normalised scores."""
        mask = ~np.isnan(self.rows) & self.table.has_entity
        if categories is not None:
            mask &= np.isin(self.table.row_type, list(categories))
        if self.matcher == "bm25":
            mask &= self.rows > 0
        rows = np.nonzero(mask)[0]
        rows = rows[np.argsort(-self.rows[rows], kind="stable")]
        out: dict[str, float] = {}
        for r in rows.tolist():
            eid = self.table.row_entity[r]
            if eid not in out:
                out[eid] = float(self.rows[r]) / self.scale
                if len(out) >= k:
                    break
        return list(out.items())


def semantic_scores(kb: KnowledgeBase, query_vec: np.ndarray, entity_ids: Iterable[str]) -> dict[str, float]:
    """Cosine between the question vector and each entity's best text (0.0 without texts)."""
    table, ids = doc_table(kb), list(dict.fromkeys(entity_ids))
    owners, rows = [], []
    for eid in ids:
        for r in table.rows_of.get(eid, []):
            owners.append(eid)
            rows.append(r)
    best = dict.fromkeys(ids, 0.0)
    if rows:
        scores = _vectors(kb, rows) @ query_vec
        seen: set[str] = set()
        for eid, s in zip(owners, scores.tolist(), strict=True):
            best[eid] = s if eid not in seen else max(best[eid], s)
            seen.add(eid)
    return best


def best_text(kb: KnowledgeBase, query_vec: np.ndarray, entity_id: str) -> str:
    """The entity's text closest to the question vector (its name when it has none)."""
    rows = doc_table(kb).rows_of.get(entity_id, [])
    if not rows:
        return kb.name(entity_id)
    scores = _vectors(kb, rows) @ query_vec
    return kb.docs[rows[int(np.argmax(scores))]].text
