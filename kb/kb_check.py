"""Checks run when a KB build is opened: its manifest, and that its parts agree.

A KB whose parts disagree (a graph from one ingest beside the text index of another, a
truncated file) must not answer: every mismatch is a one-line :class:`KBError` naming the
part, what it holds and what the manifest says.
"""

from __future__ import annotations

import json
from pathlib import Path

from hybridrag.kb.kb_dir import FORMAT_VERSION, MANIFEST, BuildRef
from hybridrag.kb.model import KBError

RERUN = "re-run `hybridrag ingest`"


def read_manifest(root: Path, build: BuildRef) -> dict:
    """The build's manifest, its format version and build id checked."""
    path = build.path / MANIFEST
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KBError(f"incomplete KB {root}: {path} is missing; {RERUN}") from None
    except (OSError, ValueError) as exc:
        raise KBError(f"KB {root}: cannot read {MANIFEST} ({exc}); {RERUN}") from None
    if not isinstance(manifest, dict):
        raise KBError(f"KB {root}: {MANIFEST} is not a JSON object; {RERUN}")
    version = manifest.get("format_version")
    supported = 1 if build.legacy else FORMAT_VERSION
    if version != supported:
        raise KBError(f"KB format {version} is not supported (expected {supported}); {RERUN}")
    if not build.legacy and manifest.get("build_id") != build.path.name:
        raise KBError(
            f"inconsistent KB {root}: build {build.path.name} holds the manifest of build "
            f"{manifest.get('build_id')!r}; {RERUN}"
        )
    for key in ("counts", "embeddings"):
        if not isinstance(manifest.get(key), dict):
            raise KBError(f"KB {root}: {MANIFEST} has no {key!r}; {RERUN}")
    return manifest


def check_files(root: Path, build: BuildRef, manifest: dict) -> None:
    """Every part the manifest lists exists with the size it had when the build finished."""
    for name, size in (manifest.get("files") or {}).items():
        try:
            actual = (build.path / name).stat().st_size
        except FileNotFoundError:
            raise KBError(f"incomplete KB {root}: {name} is missing from build {build.path.name}; {RERUN}") from None
        if actual != size:
            raise KBError(f"inconsistent KB {root}: {name} has {actual} bytes, the manifest says {size}; {RERUN}")


def check_parts(root: Path, manifest: dict, docs: list, dense, bm25, graph) -> None:
    """Manifest counts vs docs.jsonl rows vs FAISS rows and dimension vs BM25 rows vs graph counts."""
    counts = manifest["counts"]
    n_docs = counts.get("docs")
    kinds = {"entity": 0, "passage": 0}
    for d in docs:
        kinds[d.kind] = kinds.get(d.kind, 0) + 1
    graph_counts = graph.counts()
    agree = [
        ("docs.jsonl rows", len(docs), n_docs),
        ("entity documents in docs.jsonl", kinds["entity"], counts.get("entities")),
        ("passages in docs.jsonl", kinds["passage"], counts.get("passages")),
        ("dense.faiss rows", int(dense.index.ntotal), n_docs),
        ("dense.faiss dimension", int(dense.index.d), manifest["embeddings"].get("dim")),
        ("bm25.npz rows", int(bm25.weights.shape[0]), n_docs),
        ("graph entities", int(graph_counts.get("entities", -1)), counts.get("entities")),
        ("graph triples", int(graph_counts.get("triples", -1)), counts.get("triples")),
    ]
    for what, actual, expected in agree:
        if actual != expected:
            raise KBError(
                f"inconsistent KB {root}: {what} = {actual}, the manifest says {expected}; "
                f"the parts come from different ingests or one was cut short; {RERUN}"
            )


def check_query_dim(root: Path, vec_dim: int, index_dim: int, spec: str) -> None:
    """A query vector must have the dimension of the dense index."""
    if vec_dim != index_dim:
        raise KBError(
            f"KB {root}: embeddings {spec!r} give {vec_dim}-dim vectors but the KB's index holds "
            f"{index_dim}-dim ones; {RERUN} with this model"
        )
