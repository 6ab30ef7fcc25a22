"""What a KB's live build holds, part by part and file by file, and how a changed copy becomes a new build.

Every build made by a document ingest or by ``hybridrag ingest --add/--update`` (and any later
change) records where its content came from, beside the graph and indexes:

- ``documents.jsonl`` and ``provenance.jsonl`` (:mod:`kb.provenance`): documents, their chunks
  (the passages) and the chunks each extracted triple came from;
- ``sources.jsonl``: one row per input file of a triples ingest, ``{"key", "path", "kind",
  "sha256", "added", "items"}``: ``kind`` is ``triples`` (items ``[head, relation, tail]``),
  ``entities`` or ``passages`` (items: ids). The key is the file's name.

A build made before files were recorded (or by :func:`kb.ingest.ingest` called directly) holds
content no row names; :func:`read_existing` gathers it into rows keyed :data:`EARLIER`, so a
later change keeps it. :func:`rebuild` writes a changed :class:`Existing` as a new build through
:func:`kb.ingest.ingest` (the same crash-safe swap), reusing the vectors of every unchanged text.
"""

from __future__ import annotations

import difflib
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from hybridrag.kb.kb_dir import build_token, has_build, resolve_build
from hybridrag.kb.model import Entity, KBError, Passage, Triple
from hybridrag.kb.provenance import DOCUMENTS, MERGES, PROVENANCE, SOURCES, provenance_rows, read_jsonl, write_jsonl

EARLIER = "(earlier ingest)"  # the key of content a build holds but no document or file row names
STAGING = ".staging"  # a folder per run inside: <kb>/.staging/<random>/


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
    sources: list[dict] = field(default_factory=list)
    manifest: dict = field(default_factory=dict)
    type_map: dict[str, tuple[str, str]] = field(default_factory=dict)

    def chunk_ids(self) -> set[str]:
        """Ids of every chunk (passage) of the KB's documents."""
        return {c["id"] for d in self.documents for c in d["chunks"]}

    def given(self, kind: str) -> set:
        """Everything the file rows of ``kind`` give (triples as :class:`Triple`, else ids)."""
        rows = [s["items"] for s in self.sources if s["kind"] == kind]
        if kind == "triples":
            return {Triple(*item) for items in rows for item in items}
        return {i for items in rows for i in items}

    def prune(self) -> None:
        """Drop what no document chunk and no file row gives any more.

        A triple stays while a file gives it or a chunk states it; a passage while it is a
        chunk or a file gives it; an entity while a triple or passage names it or a file gives it.
        """
        chunks = self.chunk_ids()
        prov = {t: [c for c in cs if c in chunks] for t, cs in self.provenance.items()}
        self.provenance = {t: cs for t, cs in prov.items() if cs}
        triples = self.given("triples")
        self.triples = [t for t in self.triples if t in triples or t in self.provenance]
        passages = self.given("passages") | chunks
        self.passages = [p for p in self.passages if p.id in passages]
        used = {x for t in self.triples for x in (t.head, t.tail)} | {p.entity_id for p in self.passages}
        used |= self.given("entities")
        self.entities = [e for e in self.entities if e.id in used]


def close_to(name: str, known: Iterable[str], what: str) -> str:
    """`` (close: a, b)`` from the keys nearest ``name``, else the first keys the KB holds, for an error."""
    known = list(known)
    near = difflib.get_close_matches(name, known, n=5, cutoff=0.5)
    if near:
        return f"; close {what}: {', '.join(near)}"
    shown = sorted(known)[:5]
    return f"; the KB holds: {', '.join(shown)}{' ...' if len(known) > 5 else ''}" if shown else f"; it holds no {what}"


def _earlier_rows(ex: Existing) -> list[dict]:
    """Rows for what the build holds that no document or file row names (a build from before)."""
    triples = ex.given("triples")
    chunks = ex.chunk_ids()
    passages = ex.given("passages") | chunks
    used = {x for t in ex.triples for x in (t.head, t.tail)} | {p.entity_id for p in ex.passages}
    entities = ex.given("entities")
    items = {
        "triples": [[t.head, t.type, t.tail] for t in ex.triples if t not in triples and t not in ex.provenance],
        "entities": [e.id for e in ex.entities if e.id not in entities and (e.text or e.id not in used)],
        "passages": [p.id for p in ex.passages if p.id not in passages],
    }
    return [
        {"key": EARLIER, "path": "", "kind": kind, "sha256": "", "added": ex.manifest.get("created", ""), "items": it}
        for kind, it in items.items()
        if it
    ]


def read_existing(root: Path) -> Existing:
    """Entities, triples, passages, documents and file rows of the live build (nothing when there is none)."""
    if not has_build(root):
        return Existing()
    import json

    from hybridrag.kb.memory_store import InMemoryGraphStore
    from hybridrag.kb.text_index import load_docs

    token = build_token(root)
    build = resolve_build(root)
    store = InMemoryGraphStore.load(build.path)
    ents = store.entities
    triples = [
        Triple(ents[h].id, store.relation_names[r], ents[t].id)
        for h, r, t in zip(store.heads.tolist(), store.rels.tolist(), store.tails.tolist(), strict=True)
    ]
    passages = [Passage(d.id, d.text, d.entity_id) for d in load_docs(build.path / "docs.jsonl") if d.kind == "passage"]
    prov = {Triple(r["head"], r["relation"], r["tail"]): list(r["chunks"]) for r in read_jsonl(build.path / PROVENANCE)}
    manifest = json.loads((build.path / "manifest.json").read_text(encoding="utf-8"))
    types = {
        name: (rt.head_types[0], rt.tail_types[0])
        for name, rt in store.schema().relation_types.items()
        if rt.head_types and rt.tail_types
    }
    ex = Existing(
        list(ents),
        triples,
        passages,
        read_jsonl(build.path / DOCUMENTS),
        prov,
        read_jsonl(build.path / MERGES),
        token,
        read_jsonl(build.path / SOURCES),
        manifest,
        types,
    )
    ex.sources += _earlier_rows(ex)
    return ex


def _stage(root: Path, ex: Existing) -> Path:
    """Write the KB's content in the formats :func:`kb.ingest.ingest` reads, in a folder of this run's own."""
    import tempfile

    shutil.rmtree(root / STAGING, ignore_errors=True)  # a killed change's (the update lock is held)
    (root / STAGING).mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(dir=root / STAGING))
    write_jsonl(
        folder / "entities.jsonl",
        ({"id": e.id, "name": e.name, "type": e.type, "text": e.text, "aliases": list(e.aliases)} for e in ex.entities),
    )
    write_jsonl(folder / "triples.jsonl", ({"head": t.head, "relation": t.type, "tail": t.tail} for t in ex.triples))
    write_jsonl(
        folder / "passages.jsonl", ({"id": p.id, "text": p.text, "entity_id": p.entity_id} for p in ex.passages)
    )
    return folder


def _graph_options(ex: Existing, neo4j_uri: str | None, falkordb_uri: str | None) -> dict:
    """The graph server of a change: the one given, else the one the live build uses (its ``?graph=`` name too)."""
    graph = ex.manifest.get("graph") or {}
    if neo4j_uri or falkordb_uri or graph.get("backend") not in ("neo4j", "falkordb"):
        return {"neo4j_uri": neo4j_uri, "falkordb_uri": falkordb_uri}
    if graph["backend"] == "neo4j":
        return {"neo4j_uri": graph["uri"], "falkordb_uri": None}
    prefix = str(graph.get("graph", "")).removesuffix(f".{ex.manifest.get('build_id', '')}")
    named = prefix and prefix != graph.get("graph") and not prefix.startswith("hybridrag_")
    return {"neo4j_uri": None, "falkordb_uri": f"{graph['uri']}?graph={prefix}" if named else graph["uri"]}


def _options(root: Path, ex: Existing, options: dict) -> dict:
    """The ingest options of a change: the KB's embedding model (another is refused) and graph server."""
    from hybridrag.kb.embeddings import DEFAULT_EMBEDDINGS

    spec = ex.manifest.get("embeddings", {}).get("spec")
    chosen = options.get("embeddings") or spec or DEFAULT_EMBEDDINGS
    if spec and chosen != spec:
        raise KBError(f"{root} was embedded with {spec!r}, not {chosen!r}: pass --embeddings {spec}")
    graph = _graph_options(ex, options.get("neo4j_uri"), options.get("falkordb_uri"))
    return {**options, "embeddings": chosen, **graph}


def rebuild(root: Path, ex: Existing, manifest_extra: dict | None = None, **options):
    """Make ``ex`` the KB's new live build; the :class:`kb.ingest.IngestReport`.

    Refused when another ingest made a build live since ``ex`` was read, or when it asks for
    another embedding model than the KB's. ``options`` go to :func:`kb.ingest.ingest`
    (embeddings, neo4j_uri, falkordb_uri, progress, wait); without a server URI the graph goes
    where the live build's is. The vectors of texts the live build already embedded are copied.
    Call with the update lock held (:data:`kb.ingest_state.UPDATE_LOCK`).
    """
    from hybridrag.kb.ingest import ingest

    if ex.token is not None and build_token(root) != ex.token:
        raise KBError(f"{root} was rebuilt by another ingest during this one; re-run it")
    options = _options(root, ex, options)
    names = {e.id: e.name for e in ex.entities}

    def attach(build: Path) -> dict:
        write_jsonl(build / DOCUMENTS, ex.documents)
        write_jsonl(build / PROVENANCE, provenance_rows(ex.provenance, names))
        write_jsonl(build / MERGES, ex.merges)
        write_jsonl(build / SOURCES, ex.sources)
        return dict(manifest_extra or {})

    previous = resolve_build(root).path if ex.token is not None else None
    staged = _stage(root, ex)
    try:
        return ingest(
            root,
            [staged / "triples.jsonl"],
            entities=staged / "entities.jsonl",
            passages=staged / "passages.jsonl",
            type_map=ex.type_map or None,
            attach=attach,
            reuse_vectors=previous,
            **options,
        )
    finally:
        shutil.rmtree(staged, ignore_errors=True)
