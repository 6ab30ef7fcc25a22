"""An opened knowledge base: graph store, text indexes, embeddings and entity linker."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from kb.embeddings import embed_query, get_embeddings
from kb.ingest import FORMAT_VERSION
from kb.model import Entity, KBError, UnknownEntityError
from kb.store import GraphStore
from kb.text_index import BM25Index, DenseIndex, Doc, load_docs


@dataclass(frozen=True)
class Hit:
    """One text-search result."""

    doc: Doc
    score: float


class KnowledgeBase:
    """Everything a method needs to retrieve from one KB directory."""

    def __init__(self, directory: Path, embeddings: str | None = None) -> None:
        """Open ``directory``; refuse one built with a different embedding model."""
        self.directory = Path(directory)
        manifest_path = self.directory / "manifest.json"
        if not self.directory.is_dir():
            raise KBError(f"KB directory not found: {self.directory} (build one with `hybridrag ingest`)")
        if not manifest_path.exists():
            raise KBError(f"{self.directory} is not a KB: manifest.json is missing")
        self.manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        if self.manifest.get("format_version") != FORMAT_VERSION:
            raise KBError(f"KB format {self.manifest.get('format_version')} is not supported "
                          f"(expected {FORMAT_VERSION}); re-run `hybridrag ingest`")
        built_with = self.manifest["embeddings"]["spec"]
        if embeddings and embeddings != built_with:
            raise KBError(f"KB {self.directory} was built with embeddings {built_with!r}, "
                          f"not {embeddings!r}; re-ingest or use the same model")
        self.embeddings_spec = built_with
        self.graph: GraphStore = self._open_graph()
        self.docs: list[Doc] = load_docs(self.directory / "docs.jsonl")
        self.dense = DenseIndex.load(self.directory / "dense.faiss")
        self.bm25 = BM25Index.load(self.directory)
        self._emb: Embeddings | None = None

    def _open_graph(self) -> GraphStore:
        from kb.graph_backends import open_graph

        return open_graph(self.manifest.get("graph", {"backend": "memory"}), self.directory)

    @property
    def embeddings(self) -> Embeddings:
        """The embedding model the KB was built with (loaded on first use)."""
        if self._emb is None:
            self._emb = get_embeddings(self.embeddings_spec)
        return self._emb

    def embed(self, text: str) -> np.ndarray:
        """Normalised query vector."""
        return embed_query(self.embeddings, text)

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
        """Entity documents and passages about any of ``entity_ids``."""
        return [d for d in self.docs if d.entity_id in entity_ids]

    def link(self, mention: str, k: int = 1, min_score: float = 0.5) -> list[Entity]:
        """Link a mention: exact id/name/alias (case-insensitive), then dense name match."""
        exact = self.graph.lookup(mention)
        if exact:
            return exact[:k] if k else exact
        hits = self.dense_search(mention, k=k, kind="entity")
        out = [self.graph.get(h.doc.id) for h in hits if h.score >= min_score]
        return [e for e in out if e is not None]

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
_LOCK = threading.Lock()


def open_kb(directory: str | Path, embeddings: str | None = None) -> KnowledgeBase:
    """Open a KB once per process and cache it."""
    key = (str(Path(directory).resolve()), embeddings)
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = KnowledgeBase(Path(directory), embeddings)
        return _CACHE[key]
