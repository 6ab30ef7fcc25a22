"""An opened knowledge base: graph store, text indexes, embeddings and entity linker."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np
from langchain_core.embeddings import Embeddings

from hybridrag.kb.embeddings import embed_matrix, embed_query, get_embeddings
from hybridrag.kb.kb_check import check_files, check_parts, check_query_dim, read_manifest
from hybridrag.kb.kb_dir import build_token, resolve_build
from hybridrag.kb.model import Entity, KBError, UnknownEntityError
from hybridrag.kb.store import GraphStore
from hybridrag.kb.text_index import BM25Index, DenseIndex, Doc, load_docs

T = TypeVar("T")


@dataclass(frozen=True)
class Hit:
    """One text-search result."""

    doc: Doc
    score: float


class KnowledgeBase:
    """Everything a method needs to retrieve from one KB directory."""

    def __init__(self, directory: Path, embeddings: str | None = None) -> None:
        """Open the live build of ``directory``.

        Refuses a KB whose parts disagree or that was built with a different embedding model.
        """
        self.directory = Path(directory)
        build = resolve_build(self.directory)
        self.build_dir, self.build_token = build.path, build.token
        self.manifest = read_manifest(self.directory, build)
        built_with = self.manifest["embeddings"].get("spec")
        if embeddings and embeddings != built_with:
            raise KBError(
                f"KB {self.directory} was built with embeddings {built_with!r}, "
                f"not {embeddings!r}; re-ingest or use the same model"
            )
        self.embeddings_spec = built_with
        check_files(self.directory, build, self.manifest)
        self.graph: GraphStore = self._open_graph()
        self.docs: list[Doc] = self._part("docs.jsonl", load_docs)
        self.dense = self._part("dense.faiss", DenseIndex.load)
        self.bm25 = self._part("bm25.npz", lambda _: BM25Index.load(self.build_dir))
        check_parts(self.directory, self.manifest, self.docs, self.dense, self.bm25, self.graph)
        self._emb: Embeddings | None = None
        self._by_owner: dict[str, list[int]] | None = None

    def _part(self, name: str, load: Callable[[Path], T]) -> T:
        """Load one part of the build; an unreadable part is a one-line KBError naming it."""
        try:
            return load(self.build_dir / name)
        except KBError:
            raise
        except FileNotFoundError as exc:
            raise KBError(
                f"incomplete KB {self.directory}: {Path(exc.filename or name).name} is missing "
                f"from {self.build_dir}; re-run `hybridrag ingest`"
            ) from None
        except Exception as exc:  # noqa: BLE001 - any damage to a part means: rebuild
            raise KBError(
                f"KB {self.directory}: cannot read {name} ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else ''}); re-run `hybridrag ingest`"
            ) from None

    def _open_graph(self) -> GraphStore:
        from hybridrag.kb.graph_backends import open_graph

        cfg = self.manifest.get("graph", {"backend": "memory"})
        if cfg.get("backend", "memory") == "memory":
            return self._part("graph.npz", lambda _: open_graph(cfg, self.build_dir))
        return open_graph(cfg, self.build_dir)

    @property
    def embeddings(self) -> Embeddings:
        """The embedding model the KB was built with (loaded on first use)."""
        if self._emb is None:
            self._emb = get_embeddings(self.embeddings_spec)
        return self._emb

    def embed(self, text: str) -> np.ndarray:
        """Normalised query vector (of the dense index's dimension, or a KBError)."""
        vec = embed_query(self.embeddings, text)
        if vec.shape[-1] != self.dense.index.d:
            check_query_dim(self.directory, int(vec.shape[-1]), int(self.dense.index.d), self.embeddings_spec)
        return vec

    def dense_search(self, query: str | np.ndarray, k: int = 10, kind: str | None = None) -> list[Hit]:
        """Cosine search over entity documents and passages (optionally one kind)."""
        vec = self.embed(query) if isinstance(query, str) else query
        want = k if kind is None else max(4 * k, 50)
        ids, scores = self.dense.search(vec, want)
        hits = [Hit(self.docs[i], float(s)) for i, s in zip(ids, scores, strict=True)]
        return [h for h in hits if kind is None or h.doc.kind == kind][:k]

    def lexical_search(self, query: str, k: int = 10, kind: str | None = None) -> list[Hit]:
        """BM25 search over entity documents and passages."""
        ids, scores = self.bm25.search(query, k if kind is None else max(4 * k, 50))
        hits = [Hit(self.docs[i], float(s)) for i, s in zip(ids, scores, strict=True)]
        return [h for h in hits if kind is None or h.doc.kind == kind][:k]

    def passages_of(self, entity_ids: set[str]) -> list[Doc]:
        """Entity documents and passages about any of ``entity_ids``, in table order.

        An index built on first use makes this proportional to the answer, not to the KB.
        """
        if self._by_owner is None:
            by_owner: dict[str, list[int]] = {}
            for i, d in enumerate(self.docs):
                if d.entity_id is not None:
                    by_owner.setdefault(d.entity_id, []).append(i)
            self._by_owner = by_owner
        rows = sorted(i for e in entity_ids for i in self._by_owner.get(e, ()))
        return [self.docs[i] for i in rows]

    def link(self, mention: str, k: int = 1, min_score: float = 0.5) -> list[Entity]:
        """Link a mention: exact id/name/alias (case-insensitive), then dense name match."""
        exact = self.graph.lookup(mention)
        if exact:
            return exact[:k] if k else exact
        hits = self.dense_search(mention, k=k, kind="entity")
        out = [self.graph.get(h.doc.id) for h in hits if h.score >= min_score]
        return [e for e in out if e is not None]

    def embed_many(self, texts: list[str]) -> np.ndarray:
        """Normalised query vectors of ``texts`` in one embedding call (a row per text)."""
        mat = embed_matrix(self.embeddings, texts)
        if mat.shape[-1] != self.dense.index.d:
            check_query_dim(self.directory, int(mat.shape[-1]), int(self.dense.index.d), self.embeddings_spec)
        return mat

    def dense_link_many(self, mentions: list[str], k: int = 1, min_score: float = 0.5) -> list[list[Entity]]:
        """The dense step of :meth:`link` for many mentions at once: one embedding call, one vector search.

        Returns, per mention, the entities of its ``k`` best entity documents scoring ``min_score``.
        """
        return [[e for e, s in hits if s >= min_score] for hits in self.dense_scored_many(mentions, k)]

    def dense_scored_many(self, mentions: list[str], k: int = 1) -> list[list[tuple[Entity, float]]]:
        """Per mention, the entities of its ``k`` best entity documents with their cosine scores (one search)."""
        if not mentions:
            return []
        index, want = self.dense.index, max(4 * k, 50)  # as dense_search(kind="entity") asks
        if hasattr(index, "hnsw"):
            index.hnsw.efSearch = max(self.dense.ef_search, want)
        scores, rows = index.search(
            np.ascontiguousarray(self.embed_many(mentions), dtype=np.float32), min(want, index.ntotal)
        )
        picked = []
        for row_ids, row_scores in zip(rows, scores, strict=True):
            hits = [(self.docs[i], float(s)) for i, s in zip(row_ids, row_scores, strict=True) if i >= 0]
            picked.append([(d.id, s) for d, s in hits if d.kind == "entity"][:k])
        found = self.graph.get_many({i for ids in picked for i, _ in ids})
        return [[(found[i], s) for i, s in ids if i in found] for ids in picked]

    def require(self, mention: str) -> Entity:
        """Link a mention or raise :class:`UnknownEntityError` naming it."""
        found = self.link(mention)
        if not found:
            raise UnknownEntityError(f"unknown entity: {mention!r} is not in the KB {self.directory}")
        return found[0]

    def names(self, ids) -> dict[str, str]:
        """Display names of many entity ids in one store call (ids themselves when unknown)."""
        ids = list(ids)
        found = self.graph.get_many(ids)
        return {i: found[i].name if i in found else i for i in ids}

    def name(self, entity_id: str) -> str:
        """Display name of an entity id (the id itself when unknown)."""
        e = self.graph.get(entity_id)
        return e.name if e else entity_id


_CACHE: dict[tuple[str, str | None], KnowledgeBase] = {}
_KEY_LOCKS: dict[tuple[str, str | None], threading.Lock] = {}
_LOCK = threading.Lock()
OPEN_ATTEMPTS = 3


def _open_fresh(root: Path, embeddings: str | None) -> KnowledgeBase:
    """Open the live build; retry when a re-ingest swapped builds while this was reading."""
    for attempt in range(OPEN_ATTEMPTS):
        before = build_token(root)
        try:
            return KnowledgeBase(root, embeddings)
        except KBError:
            if attempt == OPEN_ATTEMPTS - 1 or build_token(root) == before:
                raise
    raise AssertionError("unreachable")


_PINS: ContextVar[dict | None] = ContextVar("hybridrag_kb_pins", default=None)


@contextmanager
def same_kb_build() -> Iterator[None]:
    """Within this block, ``open_kb`` returns the build it returned first for each KB.

    Wrap one request (one graph run) in it so that all its nodes read one build even if a
    re-ingest swaps builds halfway; contextvars carry the pins into LangGraph's worker threads.
    """
    token = _PINS.set({})
    try:
        yield
    finally:
        _PINS.reset(token)


def open_kb(directory: str | Path, embeddings: str | None = None) -> KnowledgeBase:
    """Open a KB once per process and cache it; reopen it when a re-ingest made a new build live.

    Each call costs one ``readlink`` (the build pointer): a running server answers from the
    new build after ``hybridrag ingest`` finishes, without a restart (see :func:`same_kb_build`).
    """
    root = Path(directory).resolve()
    key = (str(root), embeddings)
    pins = _PINS.get()
    if pins is not None and key in pins:
        return pins[key]
    with _LOCK:
        key_lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with key_lock:
        kb = _CACHE.get(key)
        if kb is None or kb.build_token != build_token(root):
            kb = _CACHE[key] = _open_fresh(root, embeddings)
    if pins is not None:
        pins[key] = kb
    return kb
