"""Documents → KB build: chunks become passages, an extracted graph joins the KB with its provenance.

The parts of a document ingest that need no language model: which documents to add, update or
skip (:func:`plan_documents`, on what the live build holds, :func:`kb.kb_contents.read_existing`),
and the new build (:func:`build_document_kb`) through :func:`kb.kb_contents.rebuild` (crash-safe
swap), with ``documents.jsonl``, ``provenance.jsonl`` and ``merges.jsonl`` attached to the build
and a ``documents`` section (chunking, documents, extraction usage, left-out items, merges) in its
manifest. An existing KB is extended: its entities, triples, passages and provenance are kept
(an updated document's own passages and triples leave). The whole command, extraction included,
is :func:`agents.extraction.ingest_documents`; deleting documents is :func:`kb.kb_update.delete`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from hybridrag.kb.documents import Chunk, DocumentError, SourceDocument, chunk_document
from hybridrag.kb.embeddings import DEFAULT_EMBEDDINGS
from hybridrag.kb.ingest import IngestReport
from hybridrag.kb.kb_contents import Existing, close_to, read_existing, rebuild
from hybridrag.kb.model import Passage
from hybridrag.kb.resolve import Resolved

__all__ = ["DocumentBatch", "Existing", "build_document_kb", "chunk_all", "plan_documents", "read_existing"]


@dataclass
class DocumentBatch:
    """The documents one ingest adds, chunked, and how."""

    documents: list[SourceDocument]
    chunked: dict[str, list[Chunk]]
    chunk_size: int
    chunk_overlap: int
    unchanged: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    retry: list[Chunk] = field(default_factory=list)  # chunks of documents in the KB whose extraction failed
    failed: list[str] = field(default_factory=list)  # chunks (new or retried) whose extraction failed now

    @property
    def chunks(self) -> list[Chunk]:
        """Every new chunk, document by document."""
        return [c for d in self.documents for c in self.chunked[d.key]]


def plan_documents(
    found: list[SourceDocument], existing: Existing, mode: str | None = None
) -> tuple[Existing, list[SourceDocument], list[str]]:
    """Which documents to add: (the KB to build on, the new or changed documents, the unchanged keys).

    ``mode`` None: documents not in the KB are added, unchanged ones skipped, changed ones refused;
    ``add``: any document the KB holds is refused; ``update``: every document must be in the KB,
    the changed ones replace theirs (their passages, and triples no other chunk or file states,
    leave the KB); ``replace``: a new KB of these documents only.
    """
    if mode == "replace":
        return Existing(), list(found), []
    known = {d["key"]: d for d in existing.documents}
    if mode == "add" and (held := [d for d in found if d.key in known]):
        raise DocumentError(
            f"{held[0].path}: the KB already holds a document {held[0].key!r}; use --update to replace it"
        )
    if mode == "update" and (missing := [d for d in found if d.key not in known]):
        near = close_to(missing[0].key, list(known), "documents")
        raise DocumentError(
            f"{missing[0].path}: the KB holds no document {missing[0].key!r} to update; use --add to add it{near}"
        )
    new = [d for d in found if d.key not in known or known[d.key]["sha256"] != d.sha256]
    same = [d.key for d in found if d not in new]
    changed = [d for d in new if d.key in known]
    if changed and mode != "update":
        raise DocumentError(
            f"{changed[0].path}: the KB already holds a different document {changed[0].key!r}; "
            f"pass --update to replace it"
        )
    if changed:
        gone = {d.key for d in changed}
        existing.documents = [d for d in existing.documents if d["key"] not in gone]
        existing.prune()
    return existing, new, same


def unextracted_chunks(existing: Existing, keys: list[str]) -> list[Chunk]:
    """Chunks of these documents (already in the KB) with no extraction yet, rebuilt from the KB's passages.

    That is all chunks of a document ingested without an extraction model, the failed ones of the others.
    """
    texts = {p.id: p.text for p in existing.passages}
    rows = {d["key"]: d for d in existing.documents}
    todo = []
    for key in keys:
        row = rows[key]
        ids = row.get("failed", []) if row.get("extracted") else [c["id"] for c in row["chunks"]]
        todo += [Chunk(cid, key, texts[cid]) for cid in ids if cid in texts]
    return todo


def chunk_all(docs: list[SourceDocument], size: int, overlap: int, progress: bool = True) -> dict[str, list[Chunk]]:
    """Each document's chunks, with a progress bar."""
    return {
        d.key: chunk_document(d, size, overlap) for d in tqdm(docs, desc="chunking", unit=" docs", disable=not progress)
    }


def build_document_kb(
    root: Path,
    existing: Existing,
    batch: DocumentBatch,
    resolved: Resolved | None = None,
    extraction: dict | None = None,
    *,
    embeddings: str = DEFAULT_EMBEDDINGS,
    neo4j_uri: str | None = None,
    falkordb_uri: str | None = None,
    progress: bool = True,
    wait: float = 0,
) -> IngestReport:
    """Build the KB: what ``existing`` held plus the batch's passages and the resolved graph.

    Refused when another ingest made a new build live since ``existing`` was read.
    """
    resolved = resolved or Resolved([], [], {})
    chunks = batch.chunks
    clash = sorted({c.id for c in chunks} & {p.id for p in existing.passages})
    if clash:
        raise DocumentError(
            f"the KB already has passages with the ids of new chunks (e.g. {clash[0]!r}); rename the document"
        )
    updated = {e.id: e for e in resolved.entities}
    entities = [updated.pop(e.id, e) for e in existing.entities] + list(updated.values())
    triples = list(dict.fromkeys([*existing.triples, *resolved.triples]))
    provenance = {t: list(c) for t, c in existing.provenance.items()}
    for t, cs in resolved.provenance.items():
        provenance[t] = list(dict.fromkeys([*provenance.get(t, []), *cs]))
    passages = [*existing.passages, *(Passage(c.id, c.text, None) for c in chunks)]
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    failed = set(batch.failed)
    retried = {c.id for c in batch.retry}
    doc_rows = [_after_retry(d, retried, failed) for d in existing.documents]
    doc_rows += [
        {
            "key": d.key,
            "path": str(d.path.resolve()),
            "kind": d.kind,
            "sha256": d.sha256,
            "chunks": [_where(c) for c in batch.chunked[d.key]],
            "added": stamp,
            "extracted": bool(extraction),
            "failed": [c.id for c in batch.chunked[d.key] if c.id in failed],
        }
        for d in batch.documents
    ]
    merges = [*existing.merges, *({**m, "added": stamp} for m in resolved.merges)]
    section = {
        "documents": {
            "count": len(doc_rows),
            "chunks": sum(len(d["chunks"]) for d in doc_rows),
            "chunk_size": batch.chunk_size,
            "chunk_overlap": batch.chunk_overlap,
            "added": [d.key for d in batch.documents],
            "unchanged": batch.unchanged,
            "retried_chunks": sorted(retried),
            "warnings": batch.warnings,
            "extraction": extraction or {},
        }
    }
    after = Existing(
        entities, triples, passages, doc_rows, provenance, merges, existing.token, existing.sources, existing.manifest
    )
    after.type_map = existing.type_map
    return rebuild(
        root,
        after,
        section,
        embeddings=embeddings,
        neo4j_uri=neo4j_uri,
        falkordb_uri=falkordb_uri,
        progress=progress,
        wait=wait,
    )


def _after_retry(row: dict, retried: set[str], failed: set[str]) -> dict:
    """A document row once its chunks in ``retried`` were asked again (``failed``: those that failed again)."""
    ids = [c["id"] for c in row["chunks"]]
    if not retried.intersection(ids):
        return row
    before = set(row.get("failed", [])) if row.get("extracted") else set(ids)
    return {**row, "extracted": True, "failed": [c for c in ids if c in before and (c not in retried or c in failed)]}


def _where(chunk: Chunk) -> dict:
    """A chunk's place in its document (``page`` for PDF, ``start`` character offset)."""
    return {"id": chunk.id, "page": chunk.page, "start": chunk.start}
