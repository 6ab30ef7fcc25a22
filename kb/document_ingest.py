"""Documents → hybrid KB: chunks become passages and, with an extraction model, a graph with provenance.

Steps: find and chunk the documents (:mod:`kb.documents`); with ``extract_llm``, extract
entities and relations per chunk (:mod:`kb.extract`, cached under ``<kb>/.extract-cache``) and
resolve entities (:mod:`kb.resolve`); then build through :func:`kb.ingest.ingest` (crash-safe
swap), attaching ``documents.jsonl``, ``provenance.jsonl`` and ``merges.jsonl`` to the build and
a ``documents`` section (chunking, counts, extraction usage, left-out items, merges) to its
manifest. An existing KB is extended: its entities, triples, passages and provenance are kept
and the new documents added; a document already in it is skipped when unchanged and refused
when its content changed. Document ingests into one directory run one at a time.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout
from tqdm import tqdm

from kb.documents import Chunk, DocumentError, SourceDocument, check_chunking, chunk_document, find_documents
from kb.embeddings import DEFAULT_EMBEDDINGS
from kb.extract_schema import load_schema
from kb.kb_dir import build_token, has_build, resolve_build
from kb.model import Entity, KBError, Passage, Triple
from kb.provenance import DOCUMENTS, MERGES, PROVENANCE, provenance_rows, read_jsonl, write_jsonl

log = logging.getLogger(__name__)
LOCK, STAGING, CACHE = ".documents.lock", ".documents-work", ".extract-cache"


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
class DocumentIngestReport:
    """What a document ingest added and where the numbers are."""

    directory: Path
    added: list[str]
    unchanged: list[str]
    chunks: int
    counts: dict[str, int] = field(default_factory=dict)
    extraction: dict = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def read_existing(root: Path) -> Existing:
    """Entities, triples, passages and document records of the live build (nothing when there is none)."""
    if not has_build(root):
        return Existing()
    from kb.memory_store import InMemoryGraphStore
    from kb.text_index import load_docs

    build = resolve_build(root)
    store = InMemoryGraphStore.load(build.path)
    ents = store.entities
    triples = [Triple(ents[h].id, store.relation_names[r], ents[t].id)
               for h, r, t in zip(store.heads.tolist(), store.rels.tolist(), store.tails.tolist(), strict=True)]
    passages = [Passage(d.id, d.text, d.entity_id) for d in load_docs(build.path / "docs.jsonl") if d.kind == "passage"]
    prov = {Triple(r["head"], r["relation"], r["tail"]): list(r["chunks"]) for r in read_jsonl(build.path / PROVENANCE)}
    return Existing(list(ents), triples, passages, read_jsonl(build.path / DOCUMENTS), prov,
                    read_jsonl(build.path / MERGES), build_token(root))


def _new_documents(found: list[SourceDocument], existing: Existing) -> tuple[list[SourceDocument], list[str]]:
    """Documents not in the KB yet; unchanged ones are skipped, changed ones refused."""
    known = {d["key"]: d["sha256"] for d in existing.documents}
    new, same = [], []
    for doc in found:
        if doc.key not in known:
            new.append(doc)
        elif known[doc.key] == doc.sha256:
            same.append(doc.key)
        else:
            raise DocumentError(f"{doc.path}: the KB already holds a different document {doc.key!r}; "
                                f"rename the file to add it, or build a new KB to replace it")
    return new, same


def _chunk_all(docs: list[SourceDocument], size: int, overlap: int, progress: bool) -> dict[str, list[Chunk]]:
    return {d.key: chunk_document(d, size, overlap) for d in tqdm(docs, desc="chunking", unit=" docs",
                                                                   disable=not progress)}


def _extract(root: Path, chunks: list[Chunk], existing: Existing, spec, base_url: str, schema_path,
             method: str, threshold: float, progress: bool, workers: int):
    """Extraction and resolution; returns (resolved graph, manifest section)."""
    from agents.llm.models import load_chat_model
    from kb.extract import extract_chunks
    from kb.extract_cache import ExtractionCache
    from kb.resolve import resolve

    schema = load_schema(schema_path)
    model = load_chat_model(spec, base_url)
    name = spec if isinstance(spec, str) else getattr(model, "model_name", None) or type(model).__name__
    cache = ExtractionCache(root / CACHE, f"{name}@{base_url}", method, schema)
    run = extract_chunks(chunks, model, cache, schema, method, progress, workers)
    resolved = resolve(run.facts, existing.entities, threshold)
    dropped = sum((f.dropped for f in run.facts), Counter())
    section = {"llm": name, "structured_method": method, "schema": None if schema.is_empty() else schema.to_dict(),
               "chunks_extracted": len(chunks) - run.reused - len(run.failed), "chunks_from_cache": run.reused,
               "chunks_failed": run.failed, "usage": run.usage, "usage_of_cached_replies": run.usage_cached,
               "workers": workers, "left_out": dict(dropped),
               "entities_new": sum(1 for e in resolved.entities if e.id not in {x.id for x in existing.entities}),
               "triples": len(resolved.triples), "merges": dict(Counter(m["reason"] for m in resolved.merges)),
               "merge_threshold": threshold}
    return resolved, section


def ingest_documents(directory: str | Path, documents: Sequence[str | Path], *, chunk_size: int = 1000,
                     chunk_overlap: int = 150, extract_llm=None, llm_base_url: str = "",
                     schema: str | Path | None = None, structured_method: str = "function_calling",
                     merge_threshold: float = 0.92, embeddings: str = DEFAULT_EMBEDDINGS,
                     neo4j_uri: str | None = None, falkordb_uri: str | None = None, progress: bool = True,
                     wait: float = 0, workers: int = 1) -> DocumentIngestReport:
    """Add documents to the KB in ``directory`` (created when absent); see the module docstring.

    ``workers`` extraction calls run at a time (1 to 16; a local llama.cpp model still runs one at a time).
    """
    check_chunking(chunk_size, chunk_overlap)
    if not 1 <= workers <= 16:
        raise ValueError(f"--extract-workers must be from 1 to 16, not {workers}")
    if schema is not None and extract_llm is None:
        raise KBError("--schema constrains graph extraction: give --extract-llm too")
    if not 0.5 <= merge_threshold <= 1.0:
        raise ValueError(f"--merge-threshold must be from 0.5 to 1.0, not {merge_threshold}")
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise KBError(f"--kb {root} is a file, not a directory")
    found, warnings = find_documents(documents)
    root.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(root / LOCK), timeout=wait):
            return _ingest_locked(root, found, warnings, chunk_size, chunk_overlap, extract_llm, llm_base_url,
                                  schema, structured_method, merge_threshold, embeddings, neo4j_uri,
                                  falkordb_uri, progress, wait, workers)
    except Timeout:
        raise KBError(f"another document ingest is writing {root}; wait for it or pass --wait SECONDS") from None


def _ingest_locked(root, found, warnings, chunk_size, chunk_overlap, extract_llm, llm_base_url, schema,
                   structured_method, merge_threshold, embeddings, neo4j_uri, falkordb_uri, progress,
                   wait, workers) -> DocumentIngestReport:
    from kb.ingest import ingest
    from kb.resolve import Resolved

    existing = read_existing(root)
    new_docs, same = _new_documents(found, existing)
    report = DocumentIngestReport(root, [d.key for d in new_docs], same, 0, warnings=list(warnings))
    if not new_docs:
        for w in warnings:
            log.warning(w)
        return report
    chunked = _chunk_all(new_docs, chunk_size, chunk_overlap, progress)
    chunks = [c for doc in new_docs for c in chunked[doc.key]]
    clash = sorted({c.id for c in chunks} & {p.id for p in existing.passages})
    if clash:
        raise DocumentError(f"the KB already has passages with the ids of new chunks (e.g. {clash[0]!r}); "
                            f"rename the document")
    report.chunks = len(chunks)
    resolved, section = Resolved([], [], {}), {}
    if extract_llm is not None:
        resolved, section = _extract(root, chunks, existing, extract_llm, llm_base_url, schema,
                                     structured_method, merge_threshold, progress, workers)
        if section["chunks_failed"]:
            warnings.append(f"{len(section['chunks_failed'])} chunks gave no readable extraction and add no facts "
                            f"(e.g. {', '.join(section['chunks_failed'][:3])}); re-run to ask again")
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
    doc_rows = [*existing.documents, *({"key": d.key, "path": str(d.path.resolve()), "kind": d.kind,
                                        "sha256": d.sha256, "chunks": [_where(c) for c in chunked[d.key]],
                                        "added": stamp} for d in new_docs)]
    merges = [*existing.merges, *({**m, "added": stamp} for m in resolved.merges)]
    names = {e.id: e.name for e in entities}

    def attach(build: Path) -> dict:
        write_jsonl(build / DOCUMENTS, doc_rows)
        write_jsonl(build / PROVENANCE, provenance_rows(provenance, names))
        write_jsonl(build / MERGES, merges)
        return {"documents": {"count": len(doc_rows), "chunks": sum(len(d["chunks"]) for d in doc_rows),
                              "chunk_size": chunk_size, "chunk_overlap": chunk_overlap,
                              "added": report.added, "unchanged": same, "warnings": warnings,
                              "extraction": section}}

    staged = _stage(root, entities, triples, passages)
    built = ingest(root, [staged / "triples.jsonl"], entities=staged / "entities.jsonl",
                   passages=staged / "passages.jsonl", embeddings=embeddings, neo4j_uri=neo4j_uri,
                   falkordb_uri=falkordb_uri, progress=progress, wait=wait, attach=attach)
    shutil.rmtree(staged, ignore_errors=True)
    for w in warnings:  # the build's own warnings were logged by the ingest
        log.warning(w)
    report.counts, report.extraction = built.counts, section
    report.warnings = [*warnings, *built.warnings]
    return report


def _where(chunk: Chunk) -> dict:
    """A chunk's place in its document (``page`` for PDF, ``start`` character offset)."""
    return {"id": chunk.id, "page": chunk.page, "start": chunk.start}


def _stage(root: Path, entities: list[Entity], triples: list[Triple], passages: list[Passage]) -> Path:
    """Write the merged inputs in the formats :func:`kb.ingest.ingest` reads."""
    folder = root / STAGING
    folder.mkdir(exist_ok=True)
    write_jsonl(folder / "entities.jsonl", ({"id": e.id, "name": e.name, "type": e.type, "text": e.text,
                                             "aliases": list(e.aliases)} for e in entities))
    write_jsonl(folder / "triples.jsonl", ({"head": t.head, "relation": t.type, "tail": t.tail} for t in triples))
    write_jsonl(folder / "passages.jsonl", ({"id": p.id, "text": p.text, "entity_id": p.entity_id}
                                            for p in passages))
    return folder
