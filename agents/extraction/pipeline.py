"""``hybridrag ingest --documents``: documents → chunks → (LLM extraction → entity resolution) → KB build.

Steps: find the documents (:mod:`kb.documents`), keep those the KB does not hold yet, chunk
them; with ``extract_llm``, extract entities and relations per chunk
(:mod:`agents.extraction.extractor`, replies cached under ``<kb>/.extract-cache``; with
``extract_llm="rules"`` by the sentence patterns of :mod:`agents.extraction.patterns`, no model) and resolve
entities against each other and the KB's (:mod:`kb.resolve`); then build
(:func:`kb.document_ingest.build_document_kb`). A document already in the KB is skipped when
unchanged (with an extraction model, its chunks not extracted yet, or that failed, are asked) and
refused when its content changed (``mode="update"`` replaces it). Document ingests into one
directory run one at a time (``<kb>/.documents.lock``).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock, Timeout
from langchain_core.language_models import BaseChatModel

from hybridrag.agents.extraction.extractor import MAX_WORKERS, ExtractionRun, extract_chunks
from hybridrag.agents.extraction.patterns import pattern_extraction
from hybridrag.agents.llm.models import load_chat_model
from hybridrag.kb.document_ingest import (
    DocumentBatch,
    Existing,
    build_document_kb,
    chunk_all,
    plan_documents,
    read_existing,
    unextracted_chunks,
)
from hybridrag.kb.documents import CHUNK_OVERLAP, CHUNK_SIZE, Chunk, check_chunking, find_documents
from hybridrag.kb.embeddings import DEFAULT_EMBEDDINGS
from hybridrag.kb.extract import clean
from hybridrag.kb.extract_cache import ExtractionCache
from hybridrag.kb.extract_schema import GraphSchema, load_schema
from hybridrag.kb.model import KBError
from hybridrag.kb.resolve import Resolved, resolve
from hybridrag.prompts.extract import VERSION

log = logging.getLogger(__name__)
LOCK, CACHE = ".documents.lock", ".extract-cache"


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
    retried: int = 0  # chunks of documents already in the KB asked again (their extraction had failed)


RULES = "rules"  # --extract-llm rules: the sentence patterns of agents.extraction.patterns, no model


@dataclass
class Extractor:
    """The extraction model (None: the rules) and how it is asked (checked before any document is read)."""

    model: BaseChatModel | None
    name: str
    base_url: str
    method: str
    schema: GraphSchema

    @classmethod
    def load(cls, spec, base_url: str, method: str, schema_path) -> Extractor:
        """Resolve the model spec (or object; ``rules`` is none) and read the schema file; one-line errors."""
        schema = load_schema(schema_path)
        if spec == RULES:
            return cls(None, RULES, "", RULES, schema)
        model = load_chat_model(spec, base_url)
        name = spec if isinstance(spec, str) else getattr(model, "model_name", None) or type(model).__name__
        return cls(model, name, base_url, method, schema)


def _extract(
    root: Path, chunks: list[Chunk], existing: Existing, ex: Extractor, threshold: float, progress: bool, workers: int
):
    """Extraction and resolution; returns (resolved graph, manifest section)."""
    schema, method, name = ex.schema, ex.method, ex.name
    if ex.model is None:  # rules: a second or so for hundreds of chunks, nothing to cache
        run = ExtractionRun([clean(c, pattern_extraction(c.text), schema) for c in chunks], {})
    else:
        cache = ExtractionCache(root / CACHE, f"{name}@{ex.base_url}", method, schema, VERSION)
        run = extract_chunks(chunks, ex.model, cache, schema, method, progress, workers)
    resolved = resolve(run.facts, existing.entities, threshold)
    dropped: Counter = sum((f.dropped for f in run.facts), Counter())
    known = {e.id for e in existing.entities}
    section = {
        "llm": name,
        "structured_method": method,
        "schema": None if schema.is_empty() else schema.to_dict(),
        "chunks_extracted": len(chunks) - run.reused - len(run.failed),
        "chunks_from_cache": run.reused,
        "chunks_failed": run.failed,
        "usage": run.usage,
        "usage_of_cached_replies": run.usage_cached,
        "workers": workers,
        "left_out": dict(dropped),
        "entities_new": sum(1 for e in resolved.entities if e.id not in known),
        "triples": len(resolved.triples),
        "merges": dict(Counter(m["reason"] for m in resolved.merges)),
        "merge_threshold": threshold,
    }
    return resolved, section


def ingest_documents(
    directory: str | Path,
    documents: Sequence[str | Path],
    *,
    chunk_size: int = CHUNK_SIZE,
    chunk_overlap: int = CHUNK_OVERLAP,
    extract_llm=None,
    llm_base_url: str = "",
    schema: str | Path | None = None,
    structured_method: str = "function_calling",
    merge_threshold: float = 0.92,
    embeddings: str = DEFAULT_EMBEDDINGS,
    neo4j_uri: str | None = None,
    falkordb_uri: str | None = None,
    progress: bool = True,
    wait: float = 0,
    workers: int = 1,
    mode: str | None = None,
) -> DocumentIngestReport:
    """Add documents to the KB in ``directory`` (created when absent); see the module docstring.

    ``mode``: None, ``add``, ``update`` or ``replace`` (:func:`kb.document_ingest.plan_documents`).

    ``extract_llm`` is a model spec (or a chat model object), or ``"rules"`` for the sentence
    patterns of :mod:`agents.extraction.patterns` (no model, offline); ``workers`` extraction calls run at a
    time (1 to 16; a local llama.cpp model still runs one at a time).
    """
    check_chunking(chunk_size, chunk_overlap)
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"--extract-workers must be from 1 to {MAX_WORKERS}, not {workers}")
    if schema is not None and extract_llm is None:
        raise KBError("--schema constrains graph extraction: give --extract-llm too")
    if not 0.5 <= merge_threshold <= 1.0:
        raise ValueError(f"--merge-threshold must be from 0.5 to 1.0, not {merge_threshold}")
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise KBError(f"--kb {root} is a file, not a directory")
    found, warnings = find_documents(documents)
    extractor = None if extract_llm is None else Extractor.load(extract_llm, llm_base_url, structured_method, schema)
    root.mkdir(parents=True, exist_ok=True)
    try:
        with FileLock(str(root / LOCK), timeout=wait):
            existing = read_existing(root)
            existing, new, same = plan_documents(found, existing, mode)
            batch = DocumentBatch(new, {}, chunk_size, chunk_overlap, same, warnings)
            if extractor is not None:  # chunks of known documents not extracted yet (or failed): ask now
                batch.retry = unextracted_chunks(existing, same)
            if not new and not batch.retry:
                for w in warnings:
                    log.warning(w)
                return DocumentIngestReport(root, [], same, 0, warnings=warnings)
            batch.chunked = chunk_all(new, chunk_size, chunk_overlap, progress)
            return _build(
                root,
                existing,
                batch,
                extractor,
                merge_threshold,
                workers,
                dict(
                    embeddings=embeddings, neo4j_uri=neo4j_uri, falkordb_uri=falkordb_uri, progress=progress, wait=wait
                ),
            )
    except Timeout:
        raise KBError(f"another document ingest is writing {root}; wait for it or pass --wait SECONDS") from None


def _build(
    root: Path,
    existing: Existing,
    batch: DocumentBatch,
    extractor: Extractor | None,
    threshold: float,
    workers: int,
    options: dict,
) -> DocumentIngestReport:
    """Extract (when asked), resolve, build; the report of the new build."""
    resolved, section = Resolved([], [], {}), {}
    if extractor is not None:
        resolved, section = _extract(
            root, [*batch.chunks, *batch.retry], existing, extractor, threshold, options["progress"], workers
        )
        batch.failed = section["chunks_failed"]
        if section["chunks_failed"]:
            batch.warnings.append(
                f"{len(section['chunks_failed'])} chunks gave no readable extraction and add no "
                f"facts (e.g. {', '.join(section['chunks_failed'][:3])}); re-run to ask again"
            )
    built = build_document_kb(root, existing, batch, resolved, section, **options)
    for w in batch.warnings:  # the build's own warnings were logged by the ingest
        log.warning(w)
    return DocumentIngestReport(
        root,
        [d.key for d in batch.documents],
        batch.unchanged,
        len(batch.chunks),
        built.counts,
        section,
        [*batch.warnings, *built.warnings],
        len(batch.retry),
    )
