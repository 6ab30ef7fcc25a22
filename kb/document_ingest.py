"""Documents → KB build: chunks become passages, an extracted graph joins the KB with its provenance.

The parts of a document ingest that need no language model: what the live build already holds
(:func:`read_existing`), which documents are new (:func:`new_documents`), and the new build
(:func:`build_document_kb`) through :func:`kb.ingest.ingest` (crash-safe swap), with
``documents.jsonl``, ``provenance.jsonl`` and ``merges.jsonl`` attached to the build and a
``documents`` section (chunking, documents, extraction usage, left-out items, merges) in its
manifest. An existing KB is extended: its entities, triples, passages and provenance are kept.
The whole command, extraction included, is :func:`agents.extraction.ingest_documents`.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from hybridrag.kb.documents import Chunk, DocumentError, SourceDocument, chunk_document
from hybridrag.kb.embeddings import DEFAULT_EMBEDDINGS
from hybridrag.kb.ingest import IngestReport, ingest
from hybridrag.kb.kb_dir import build_token, has_build, resolve_build
from hybridrag.kb.model import Entity, KBError, Passage, Triple
from hybridrag.kb.provenance import DOCUMENTS, MERGES, PROVENANCE, provenance_rows, read_jsonl, write_jsonl
from hybridrag.kb.resolve import Resolved

STAGING = ".documents-work"


@dataclass
class Existing:
    """What the live build of a KB holds (empty for a new KB)."""

    entities: list[Entity] = field(default_factory=list)
    triples: list[Triple] = field(default_factory=list)
    passages: list[Passage] = field(default_factory=list)
    documents: list[dict] = field(default_factory=list)
    provenance: dict[Triple, list[str]] = field(default_factory=dict)
    merges: list[dict] = field(default_factory=list)
    token: str | None = None


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


def read_existing(root: Path) -> Existing:
    """Entities, triples, passages and document records of the live build (nothing when there is none)."""
    if not has_build(root):
        return Existing()
    from hybridrag.kb.memory_store import InMemoryGraphStore
    from hybridrag.kb.text_index import load_docs

    build = resolve_build(root)
    store = InMemoryGraphStore.load(build.path)
    ents = store.entities
    triples = [
        Triple(ents[h].id, store.relation_names[r], ents[t].id)
        for h, r, t in zip(store.heads.tolist(), store.rels.tolist(), store.tails.tolist(), strict=True)
    ]
    passages = [Passage(d.id, d.text, d.entity_id) for d in load_docs(build.path / "docs.jsonl") if d.kind == "passage"]
    prov = {Triple(r["head"], r["relation"], r["tail"]): list(r["chunks"]) for r in read_jsonl(build.path / PROVENANCE)}
    return Existing(
        list(ents),
        triples,
        passages,
        read_jsonl(build.path / DOCUMENTS),
        prov,
        read_jsonl(build.path / MERGES),
        build_token(root),
    )


def new_documents(found: list[SourceDocument], existing: Existing) -> tuple[list[SourceDocument], list[str]]:
    """Documents not in the KB yet; unchanged ones are skipped, changed ones refused."""
    known = {d["key"]: d["sha256"] for d in existing.documents}
    new, same = [], []
    for doc in found:
        if doc.key not in known:
            new.append(doc)
        elif known[doc.key] == doc.sha256:
            same.append(doc.key)
        else:
            raise DocumentError(
                f"{doc.path}: the KB already holds a different document {doc.key!r}; "
                f"rename the file to add it, or build a new KB to replace it"
            )
    return new, same


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
    if existing.token is not None and build_token(root) != existing.token:
        raise KBError(f"{root} was rebuilt by another ingest during this one; re-run (extractions are cached)")
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
    names = {e.id: e.name for e in entities}

    def attach(build: Path) -> dict:
        write_jsonl(build / DOCUMENTS, doc_rows)
        write_jsonl(build / PROVENANCE, provenance_rows(provenance, names))
        write_jsonl(build / MERGES, merges)
        return {
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

    staged = _stage(root, entities, triples, passages)
    report = ingest(
        root,
        [staged / "triples.jsonl"],
        entities=staged / "entities.jsonl",
        passages=staged / "passages.jsonl",
        embeddings=embeddings,
        neo4j_uri=neo4j_uri,
        falkordb_uri=falkordb_uri,
        progress=progress,
        wait=wait,
        attach=attach,
    )
    shutil.rmtree(staged, ignore_errors=True)
    return report


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


def _stage(root: Path, entities: list[Entity], triples: list[Triple], passages: list[Passage]) -> Path:
    """Write the merged inputs in the formats :func:`kb.ingest.ingest` reads."""
    folder = root / STAGING
    folder.mkdir(exist_ok=True)
    write_jsonl(
        folder / "entities.jsonl",
        ({"id": e.id, "name": e.name, "type": e.type, "text": e.text, "aliases": list(e.aliases)} for e in entities),
    )
    write_jsonl(folder / "triples.jsonl", ({"head": t.head, "relation": t.type, "tail": t.tail} for t in triples))
    write_jsonl(folder / "passages.jsonl", ({"id": p.id, "text": p.text, "entity_id": p.entity_id} for p in passages))
    return folder
