"""Layout of a KB directory: finished builds behind an atomically swapped pointer.

A KB directory (the path given to ``hybridrag ingest --kb``) holds::

    current        -> builds/<id>             symlink: the live build (swapped with one rename)
    manifest.json  -> current/manifest.json   symlink, so ``kb/manifest.json`` names the live build
    builds/<id>/   one finished build: manifest.json, docs.jsonl, dense.faiss, bm25.*, graph.*
    builds/<id>.partial/  a build being written (never pointed at; removed by the next ingest)
    .ingest.lock   held by the ingest writing this directory
    kb-id          a random token naming this KB on graph servers (made by the first export to one)
    builds/<id>.partial/graph-target.json  the server graph a build being written exports to
    .ingest-work/  what a killed ingest leaves to resume from (stage marker, embedding chunks)
    .documents.lock  held by a change to the KB (kb.kb_update, a document ingest) from its read to its swap
    .staging/      a change's content in the formats ingest reads (removed when it ends, or by the next)

A build made by ``hybridrag ingest`` or a change also holds ``sources.jsonl`` (its input files,
:mod:`kb.kb_contents`) and, from documents, ``documents.jsonl``, ``provenance.jsonl`` and
``merges.jsonl`` (:mod:`kb.provenance`).

Readers resolve ``current`` once and read every part from that build, so a query during a
re-ingest sees the old build or the new one, never a mix. A directory with ``manifest.json``
as a regular file and the parts beside it is the first (format 1) layout, still readable.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from hybridrag.kb.model import KBError

FORMAT_VERSION = 2  # 2: builds behind the ``current`` pointer; 1: parts at the top (still read)
CURRENT, MANIFEST, BUILDS, WORK, LOCK = "current", "manifest.json", "builds", ".ingest-work", ".ingest.lock"
PARTIAL = ".partial"
KB_ID, TARGET = "kb-id", "graph-target.json"
LEGACY_PARTS = ("docs.jsonl", "dense.faiss", "bm25.npz", "bm25_vocab.json", "graph.npz", "entities.jsonl", "graph.json")
KEEP_PREVIOUS = 1  # finished builds kept besides the live one, for readers still opening them


@dataclass(frozen=True)
class BuildRef:
    """The live build of a KB directory: where its parts are and a token that changes per build."""

    path: Path
    token: str
    legacy: bool = False


def work_dir(root: Path) -> Path:
    """Folder of resumable ingest state (stage marker, embedding chunks)."""
    return Path(root) / WORK


def _stage_note(root: Path) -> str:
    """' (stopped during embeddings)' from the stage marker a killed ingest left, or ''."""
    try:
        stage = json.loads((work_dir(root) / "stage.json").read_text(encoding="utf-8"))["stage"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    return f" (the last ingest stopped or is still running at stage {stage!r})"


def _incomplete(root: Path) -> KBError:
    return KBError(
        f"incomplete KB {root}: no finished build{_stage_note(root)}; re-run `hybridrag ingest --kb {root} ...`"
    )


def resolve_build(root: str | Path) -> BuildRef:
    """Return the live build of ``root``; a one-line KBError when there is none."""
    root = Path(root)
    if not root.is_dir():
        raise KBError(f"KB directory not found: {root} (build one with `hybridrag ingest`)")
    pointer = root / CURRENT
    try:
        target = os.readlink(pointer)
    except FileNotFoundError:
        target = None
    except OSError as exc:
        raise KBError(
            f"broken KB {root}: {CURRENT} is not a build pointer ({exc.strerror}); re-run `hybridrag ingest`"
        ) from None
    if target is not None:
        path = root / target
        if not (path / MANIFEST).is_file():
            raise KBError(f"incomplete KB {root}: build {target} has no {MANIFEST}; re-run `hybridrag ingest`")
        return BuildRef(path, target)
    legacy = root / MANIFEST
    if legacy.is_file() and not legacy.is_symlink():
        st = legacy.stat()
        return BuildRef(root, f"legacy:{st.st_ino}:{st.st_mtime_ns}:{st.st_size}", legacy=True)
    if (root / WORK).exists() or (root / BUILDS).exists() or (root / LOCK).exists():
        raise _incomplete(root)
    raise KBError(f"{root} is not a KB: {MANIFEST} is missing (build one with `hybridrag ingest`)")


def build_token(root: str | Path) -> str:
    """A cheap token (one readlink) that changes whenever a new build goes live."""
    root = Path(root)
    try:
        return os.readlink(root / CURRENT)
    except OSError:
        return resolve_build(root).token


def has_build(root: str | Path) -> bool:
    """True when ``root`` has a finished build (a KB every command can open)."""
    try:
        resolve_build(root)
    except KBError:
        return False
    return True


def new_build_dir(root: Path) -> Path:
    """Create ``builds/<id>.partial`` for a new build (ids sort by creation time)."""
    now = time.time_ns()
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now // 10**9)) + f".{now // 1000 % 10**6:06d}"
    build_id = f"{stamp}-{secrets.token_hex(3)}"
    path = root / BUILDS / f"{build_id}{PARTIAL}"
    path.mkdir(parents=True)
    return path


def kb_id(root: Path) -> str:
    """The KB directory's id (32 hex characters), made on first use (call with the ingest lock held)."""
    path = Path(root) / KB_ID
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        token = ""
    if len(token) == 32 and all(c in "0123456789abcdef" for c in token):
        return token
    token = secrets.token_hex(16)
    tmp = path.with_name(f".{KB_ID}.{os.getpid()}")
    tmp.write_text(token + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return token


def record_target(build: Path, entry: dict) -> None:
    """Note in a build being written which server graph it exports to, before anything is sent."""
    path = build / TARGET
    path.write_text(json.dumps(entry), encoding="utf-8")
    _fsync(path)


def partial_target(build: Path) -> dict | None:
    """The server graph a partial build recorded with :func:`record_target`, or None."""
    try:
        entry = json.loads((build / TARGET).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None


def remove_partial_builds(root: Path) -> list[dict]:
    """Delete partial builds a killed ingest left (call with the ingest lock held).

    Returns the server graphs those builds were exporting to (for the caller to drop).
    """
    folder = root / BUILDS
    stale = [p for p in folder.iterdir() if p.name.endswith(PARTIAL)] if folder.is_dir() else []
    targets = []
    for p in stale:
        entry = partial_target(p)
        if entry is not None:
            targets.append(entry)
        shutil.rmtree(p, ignore_errors=True)
    return targets


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(folder: Path) -> None:
    """Flush every file of a build and the folder itself, so a power loss cannot empty them."""
    for p in folder.iterdir():
        if p.is_file():
            _fsync(p)
    _fsync(folder)


def _swap_symlink(link: Path, target: str) -> None:
    """Point ``link`` at ``target`` with one atomic rename (readers see the old or the new target)."""
    tmp = link.with_name(f".{link.name}.{os.getpid()}.{secrets.token_hex(3)}")
    os.symlink(target, tmp)
    os.replace(tmp, link)


def commit_build(root: Path, partial: Path) -> Path:
    """Make a finished partial build the live one; return its final folder.

    Order matters for readers: the build is complete and flushed before ``current`` names it;
    only then are the first-layout parts (if any) removed. Old builds stay until
    :func:`remove_old_builds`.
    """
    final = partial.with_name(partial.name.removesuffix(PARTIAL))
    _fsync_tree(partial)
    os.rename(partial, final)
    _fsync(final.parent)
    _swap_symlink(root / CURRENT, f"{BUILDS}/{final.name}")
    if not (root / MANIFEST).is_symlink():
        _swap_symlink(root / MANIFEST, f"{CURRENT}/{MANIFEST}")
    _fsync(root)
    for name in LEGACY_PARTS:
        (root / name).unlink(missing_ok=True)
    return final


def _graph_entry(build: Path) -> dict | None:
    try:
        return json.loads((build / MANIFEST).read_text(encoding="utf-8")).get("graph")
    except (OSError, ValueError, AttributeError):
        return None


def server_graphs(root: Path) -> frozenset[str]:
    """Names of the FalkorDB graphs the finished builds of ``root`` point at."""
    folder = Path(root) / BUILDS
    entries = [_graph_entry(p) for p in folder.iterdir() if p.is_dir()] if folder.is_dir() else []
    entries.append(_graph_entry(Path(root)))  # the first layout's manifest at the top
    return frozenset(e["graph"] for e in entries if isinstance(e, dict) and isinstance(e.get("graph"), str))


def remove_old_builds(root: Path, live: str) -> list[dict]:
    """Keep the live build and the :data:`KEEP_PREVIOUS` newest before it; delete the rest.

    Returns the manifest ``graph`` entries of deleted builds that no remaining build uses (a
    graph-server graph nothing points at any more).
    """
    done = sorted(
        p.name for p in (root / BUILDS).iterdir() if p.is_dir() and not p.name.endswith(PARTIAL) and p.name != live
    )
    cut = max(0, len(done) - KEEP_PREVIOUS)
    kept = [_graph_entry(root / BUILDS / name) for name in [live, *done[cut:]]]
    orphans = []
    for name in done[:cut]:
        entry = _graph_entry(root / BUILDS / name)
        shutil.rmtree(root / BUILDS / name, ignore_errors=True)
        if entry and entry.get("backend", "memory") != "memory" and entry not in kept and entry not in orphans:
            orphans.append(entry)
    return orphans
