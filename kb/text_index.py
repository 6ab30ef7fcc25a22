"""Text indexes over entity documents and passages: dense (FAISS) and lexical (BM25)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from hybridrag.kb.jsonl import read_rows

# Exact search up to this many rows; HNSW (the paper's ChromaDB index type) beyond it.
HNSW_THRESHOLD = 20_000
# efSearch grows with the square root of the row count: HNSW_EF_SEARCH at HNSW_EF_ROWS rows, at most
# HNSW_EF_MAX. Measured (benchmarks/scale/ef_sweep.py, docs/benchmarks_scale.md): a fixed 128 lost recall@10
# with size (0.98 / 0.94 / 0.87 at 43k / 171k / 684k rows); this rule keeps it >= 0.96 at ~2 ms p50.
HNSW_EF_SEARCH = 128
HNSW_EF_ROWS = 40_000
HNSW_EF_MAX = 1024
WORD = re.compile(r"[\w']+")  # a word token: letters, digits, underscore and apostrophe


def words(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return WORD.findall(text.lower())


@dataclass(frozen=True)
class Doc:
    """One indexed row: an entity document or a passage, and the entity it is about."""

    kind: str  # "entity" | "passage"
    id: str
    entity_id: str | None
    text: str


def _save_docs(docs: list[Doc], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps([d.kind, d.id, d.entity_id, d.text], ensure_ascii=False) + "\n")


def load_docs(path: Path) -> list[Doc]:
    """Read the document table written at ingest."""
    return [Doc(*row) for row in read_rows(path)]


def ef_search_for(rows: int, k: int = 10) -> int:
    """HNSW efSearch for an index of ``rows`` vectors asked for ``k`` neighbours (the rule above)."""
    if rows < 0 or k < 0:
        raise ValueError(f"rows and k must be non-negative, got rows={rows}, k={k}")
    grown = math.ceil(HNSW_EF_SEARCH * math.sqrt(rows / HNSW_EF_ROWS))
    return max(k, HNSW_EF_SEARCH, min(HNSW_EF_MAX, grown))


def _top(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    idx = np.argpartition(-scores, k - 1)[:k]
    idx = idx[np.argsort(-scores[idx], kind="stable")]
    return idx, scores[idx]


class DenseIndex:
    """Cosine search with FAISS: exact inner product up to ``HNSW_THRESHOLD`` rows, HNSW above.

    An HNSW index searches with :func:`ef_search_for` of its row count (computed, never stored).
    """

    def __init__(self, index) -> None:
        """Wrap a FAISS index of L2-normalised vectors."""
        self.index = index
        self.ef_search = ef_search_for(int(index.ntotal)) if hasattr(index, "hnsw") else 0
        if self.ef_search:
            index.hnsw.efSearch = self.ef_search

    @classmethod
    def build(cls, vectors: np.ndarray) -> DenseIndex:
        """Index L2-normalised float32 ``vectors``."""
        import faiss

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        dim = vectors.shape[1]
        index: faiss.Index
        if len(vectors) > HNSW_THRESHOLD:
            index = faiss.IndexHNSWFlat(dim, 32, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 80
        else:
            index = faiss.IndexFlatIP(dim)
        index.add(vectors)
        return cls(index)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Return (row ids, cosine scores) of the ``k`` nearest rows."""
        q = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        if hasattr(self.index, "hnsw"):
            self.index.hnsw.efSearch = max(self.ef_search, k)
        scores, ids = self.index.search(q, min(k, self.index.ntotal))
        keep = ids[0] >= 0
        return ids[0][keep], scores[0][keep]

    def save(self, path: Path) -> None:
        """Write the FAISS index file."""
        import faiss

        faiss.write_index(self.index, str(path))

    @classmethod
    def load(cls, path: Path) -> DenseIndex:
        """Read a FAISS index file."""
        import faiss

        return cls(faiss.read_index(str(path)))


class BM25Index:
    """Okapi BM25 over a sparse document-term matrix of precomputed term weights."""

    def __init__(self, weights: sparse.csc_matrix, vocab: dict[str, int]) -> None:
        """Wrap a (docs x terms) CSC weight matrix and its vocabulary."""
        self.weights, self.vocab = weights, vocab

    @classmethod
    def build(cls, texts: list[str], k1: float = 1.5, b: float = 0.75) -> BM25Index:
        """Compute BM25 weights for ``texts``."""
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[int] = []
        lengths = np.zeros(len(texts), np.float32)
        for d, text in enumerate(texts):
            toks = words(text)
            lengths[d] = len(toks)
            counts: dict[int, int] = {}
            for t in toks:
                j = vocab.setdefault(t, len(vocab))
                counts[j] = counts.get(j, 0) + 1
            rows.extend([d] * len(counts))
            cols.extend(counts)
            tfs.extend(counts.values())
        n = max(len(texts), 1)
        rows_a, cols_a, tf = np.array(rows, np.int64), np.array(cols, np.int64), np.array(tfs, np.float32)
        df = np.bincount(cols_a, minlength=len(vocab)).astype(np.float32)
        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        avg = float(lengths.mean()) if len(texts) else 1.0
        norm = k1 * (1 - b + b * lengths[rows_a] / max(avg, 1e-9))
        w = idf[cols_a] * tf * (k1 + 1) / (tf + norm)
        mat = sparse.csc_matrix((w, (rows_a, cols_a)), shape=(len(texts), len(vocab)), dtype=np.float32)
        return cls(mat, vocab)

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Return (row ids, BM25 scores) of the ``k`` best rows with a positive score."""
        cols = [self.vocab[t] for t in dict.fromkeys(words(query)) if t in self.vocab]
        if not cols:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        scores = np.asarray(self.weights[:, cols].sum(axis=1)).ravel()
        idx, s = _top(scores, k)
        keep = s > 0
        return idx[keep], s[keep]

    def save(self, directory: Path) -> None:
        """Write ``bm25.npz`` and ``bm25_vocab.json``."""
        sparse.save_npz(directory / "bm25.npz", self.weights)
        (directory / "bm25_vocab.json").write_text(json.dumps(self.vocab), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> BM25Index:
        """Read an index written by :meth:`save`."""
        weights = sparse.load_npz(directory / "bm25.npz").tocsc()
        vocab = json.loads((directory / "bm25_vocab.json").read_text(encoding="utf-8"))
        return cls(weights, vocab)


save_docs = _save_docs
top_k = _top
