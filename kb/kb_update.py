"""Change a KB without losing the rest: add, update or delete triple/entity/passage files and documents.

``hybridrag ingest`` into a directory that already holds a KB needs a mode: ``add`` (files the
KB does not hold yet), ``update`` (files it holds, by file name, replaced by their new content)
or ``replace`` (a new KB of these files only); without one it is refused, so a KB is never
replaced by accident. ``hybridrag kb delete`` removes documents (by id) or files (by path or
name). Each change reads the live build (:func:`kb.kb_contents.read_existing`), drops what only
the removed files gave (passages, triples no other file or chunk states, entities nothing names
any more), adds the new files, and makes the result live as one new build
(:func:`kb.kb_contents.rebuild`: the crash-safe swap, unchanged texts' vectors copied, a
graph-server KB exported to the server its live build uses), all under the directory's update
lock. Documents are added and updated through :func:`agents.extraction.ingest_documents`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hybridrag.kb.documents import file_digest
from hybridrag.kb.ingest import IngestReport
from hybridrag.kb.ingest_inputs import parse_inputs
from hybridrag.kb.ingest_state import UPDATE_LOCK, ingest_lock
from hybridrag.kb.kb_contents import Existing, close_to, read_existing, rebuild
from hybridrag.kb.kb_dir import has_build
from hybridrag.kb.model import Entity, KBError

MODES = ("add", "update", "replace")


@dataclass
class ChangeReport:
    """What one change did to a KB (file or document keys) and the new build's report."""

    directory: Path
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    removed: dict[str, int] = field(default_factory=dict)
    build: IngestReport | None = None


def _row(path: Path, kind: str, warnings: list[str]) -> tuple[dict, list[Any]]:
    """A ``sources.jsonl`` row for one input file and what it gives (triples, entities or passages)."""
    items: list[Any]
    payload: list[Any]
    if kind == "triples":
        inputs = parse_inputs([path], progress=False)
        items, payload = [[t.head, t.type, t.tail] for t in dict.fromkeys(inputs.triples)], inputs.triples
    elif kind == "entities":
        inputs = parse_inputs([], entities=path, progress=False)
        items, payload = list(inputs.entities), list(inputs.entities.values())
    else:
        inputs = parse_inputs([], passages=path, progress=False)
        items, payload = [p.id for p in inputs.passages], inputs.passages
    warnings += inputs.warnings
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    row = {"key": path.name, "path": str(path.resolve()), "kind": kind, "sha256": file_digest(path), "added": stamp}
    return {**row, "items": items}, payload


def _plan(ex: Existing, files: list[tuple[Path, str]], mode: str | None, report: ChangeReport) -> list:
    """Check the files against the KB (``add``: new ones only; ``update``: held ones); drop replaced rows."""
    held = {s["key"]: s for s in ex.sources}
    names = [p.name for p, _ in files]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise KBError(f"two input files share the name {twice[0]!r}; the KB knows files by name: rename one")
    todo = []
    for path, kind in files:
        row = held.get(path.name)
        if row is not None and mode == "add":
            raise KBError(
                f"{path}: the KB already holds a file {path.name!r} (added {row['added']}); use --update to replace it"
            )
        if row is None and mode == "update":
            near = close_to(path.name, held, "files")
            raise KBError(f"{path}: the KB holds no file {path.name!r} to update; use --add to add it{near}")
        if row is not None and row["kind"] != kind:
            raise KBError(f"{path}: the KB holds {path.name!r} as a {row['kind']} file, not a {kind} file")
        if row is not None and row["sha256"] == file_digest(path):
            report.unchanged.append(path.name)
            continue
        (report.updated if row is not None else report.added).append(path.name)
        if row is not None:
            _drop_rows(ex, [row])
        todo.append((path, kind))
    return todo


def _drop_rows(ex: Existing, rows: list[dict]) -> None:
    """Remove file rows; an entity only a removed entities file described keeps its id and type, not its text."""
    ex.sources = [s for s in ex.sources if s not in rows]
    gone = {i for r in rows if r["kind"] == "entities" for i in r["items"]} - ex.given("entities")
    ex.entities = [Entity(e.id, e.id, e.type) if e.id in gone else e for e in ex.entities]


def _add(ex: Existing, files: list[tuple[Path, str]], warnings: list[str]) -> None:
    """Add each file's row and content to ``ex`` (a file's entity rows win over the KB's)."""
    for path, kind in files:
        row, payload = _row(path, kind, warnings)
        ex.sources.append(row)
        if kind == "triples":
            ex.triples = list(dict.fromkeys([*ex.triples, *payload]))
        elif kind == "entities":
            given = {e.id: e for e in payload}
            ex.entities = [given.pop(e.id, e) for e in ex.entities] + list(given.values())
        else:
            clash = sorted({p.id for p in payload} & {p.id for p in ex.passages})
            if clash:
                raise KBError(f"{path}: the KB already has a passage {clash[0]!r} from another file or document")
            ex.passages += payload


def _files(triples: Sequence, entities, passages) -> list[tuple[Path, str]]:
    files = [(Path(t), "triples") for t in triples]
    files += [(Path(entities), "entities")] if entities else []
    return files + ([(Path(passages), "passages")] if passages else [])


def _contents(ex: Existing) -> dict[str, set]:
    """The triples, passage ids and entity ids ``ex`` holds (entities named only by triples too)."""
    ents = {e.id for e in ex.entities} | {x for t in ex.triples for x in (t.head, t.tail)}
    return {"triples": set(ex.triples), "passages": {p.id for p in ex.passages}, "entities": ents}


def _commit(root: Path, ex: Existing, before: dict, report: ChangeReport, options: dict) -> ChangeReport:
    """Build ``ex`` (refused when nothing would be left) and fill the report."""
    after = _contents(ex)
    if not after["entities"] and not after["passages"]:
        if report.deleted:
            raise KBError(f"that would leave {root} empty (no entities, no passages); delete the directory instead")
        raise KBError("no triples and no entities found in the input files (and no passages)")
    report.removed = {k: len(before[k] - after[k]) for k in before}
    change = {k: getattr(report, k) for k in ("added", "updated", "deleted", "unchanged")}
    extra: dict = {"change": change}
    if ex.documents:  # the document section of the last document ingest, its counts brought up to date
        chunks = sum(len(d["chunks"]) for d in ex.documents)
        extra["documents"] = {**ex.manifest.get("documents", {}), "count": len(ex.documents), "chunks": chunks}
    report.build = rebuild(root, ex, extra, **options)
    return report


def change_files(
    directory: str | Path,
    mode: str | None,
    triples: Sequence[str | Path] = (),
    entities: str | Path | None = None,
    passages: str | Path | None = None,
    type_map: str | Path | dict | None = None,
    **options,
) -> ChangeReport:
    """Ingest triple/entity/passage files into a new KB, or into an existing one with ``mode``.

    ``options``: embeddings, neo4j_uri, falkordb_uri, progress, wait (:func:`kb.ingest.ingest`).
    Without a mode, a directory that holds a KB is refused; ``update`` of a new directory too.
    """
    root = Path(directory)
    if mode not in (None, *MODES):
        raise ValueError(f"unknown ingest mode {mode!r}: use one of {', '.join(MODES)}")
    files = _files(triples, entities, passages)
    if not files:
        raise KBError(
            "nothing to ingest: no triples and no entities given (--triples, --entities, --passages, --documents)"
        )
    exists = has_build(root)
    if exists and mode is None:
        raise KBError(
            f"{root} already holds a KB: pass --add to add these files to it, --update to replace the files "
            f"of the same name it holds, or --replace to rebuild it from these files only"
        )
    if not exists and mode == "update":
        raise KBError(f"{root} holds no KB to update; build it first (without --update)")
    report, warnings = ChangeReport(root), list[str]()
    with ingest_lock(root, options.get("wait", 0), UPDATE_LOCK):
        ex = read_existing(root) if exists and mode != "replace" else Existing()
        before = _contents(ex)
        todo = _plan(ex, files, mode, report)
        if not todo:
            return report
        ex.prune()
        _add(ex, todo, warnings)
        if type_map is not None:
            from hybridrag.kb.loaders import read_type_map

            given = type_map if isinstance(type_map, dict) else read_type_map(Path(type_map))
            ex.type_map = {**ex.type_map, **given}
        ex.prune()
        _commit(root, ex, before, report, options)
    report.build.warnings[:0] = warnings  # type: ignore[union-attr]
    return report


def _match(ex: Existing, documents: Sequence[str], sources: Sequence[str | Path], root: Path) -> tuple[list, list]:
    """The document rows and file rows named; an unknown one is a KBError naming it and close ids."""
    docs = {d["key"]: d for d in ex.documents}
    rows, drows = [], []
    for key in documents:
        if key not in docs:
            raise KBError(f"no document {key!r} in KB {root}{close_to(key, docs, 'documents')}")
        drows.append(docs[key])
    for src in sources:
        full, name = str(Path(src).resolve()), Path(src).name
        found = [s for s in ex.sources if s["path"] == full or s["key"] in (str(src), name)]
        found += [d for d in ex.documents if d["path"] == full or d["key"] == str(src)]
        if not found:
            known = [s["key"] for s in ex.sources] + list(docs)
            raise KBError(f"no file {str(src)!r} in KB {root}{close_to(name, known, 'files')}")
        rows += [s for s in found if s in ex.sources and s not in rows]
        drows += [d for d in found if d in ex.documents and d not in drows]
    return drows, rows


def delete(
    directory: str | Path, documents: Sequence[str] = (), sources: Sequence[str | Path] = (), **options
) -> ChangeReport:
    """Delete documents (by id) and files (by path or name) from a KB, as one new build.

    ``options``: neo4j_uri, falkordb_uri, progress, wait (:func:`kb.ingest.ingest`).
    """
    root = Path(directory)
    if not documents and not sources:
        raise KBError("nothing to delete: give --document ID or --source FILE")
    if not has_build(root):
        from hybridrag.kb.kb_dir import resolve_build

        resolve_build(root)  # its one-line error: not found, not a KB, incomplete
    report = ChangeReport(root)
    with ingest_lock(root, options.get("wait", 0), UPDATE_LOCK):
        ex = read_existing(root)
        before = _contents(ex)
        drows, rows = _match(ex, documents, sources, root)
        ex.documents = [d for d in ex.documents if d not in drows]
        _drop_rows(ex, rows)
        report.deleted = [d["key"] for d in drows] + [s["key"] for s in rows]
        ex.prune()
        return _commit(root, ex, before, report, options)
