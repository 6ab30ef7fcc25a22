"""Vectors of a KB's own texts, encoded once per KB build and kept in the cache folder.

Some retrieval steps embed texts that come from the KB itself and recur across questions:
HydraRAG's document sentences (every question embeds the sentences of its topic's passages),
SSRAG's text facts (a passage sentence without its entity names). Encoding them at query time
cost most of those modules' latency on MetaQA-hybrid (docs/benchmarks_modules.md). A table
holds such texts' vectors, encoded in bulk with the KB's own embedding model; a lookup returns
the vectors it holds and the caller encodes the rest as before, so a missing or stale table
only costs speed.

Tables live in ``<cache>/derived/<KB folder>-<build token>/<name>.npz`` (``texts`` and
``vectors``, float32, normalised like every query-time encode): a new KB build gets new
tables. The vectors are the model's: the same texts encoded in another batch differ from a
query-time encode only by float rounding (about 1e-7).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.embeddings import embed_matrix
from hybridrag.kb.sample import cache_root

BUILD_BATCH = 1024  # texts per bulk encode while building

_loaded: dict[Path, tuple[dict[str, int], np.ndarray] | None] = {}
_lock = threading.Lock()


def table_path(kb: KnowledgeBase, name: str) -> Path:
    """Where the table ``name`` of ``kb``'s current build lives."""
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"a vector table name is letters, digits, '-' and '_', not {name!r}")
    build = "".join(c if c.isalnum() or c in ".-" else "_" for c in str(kb.build_token))
    return cache_root() / "derived" / f"{kb.directory.name}-{build}" / f"{name}.npz"


def _load(path: Path) -> tuple[dict[str, int], np.ndarray] | None:
    with _lock:
        if path in _loaded:
            return _loaded[path]
    found = None
    if path.exists():
        with np.load(path, allow_pickle=False) as data:
            texts, vecs = data["texts"], np.ascontiguousarray(data["vectors"], dtype=np.float32)
        found = ({str(t): i for i, t in enumerate(texts)}, vecs)
    with _lock:
        _loaded[path] = found
    return found


def lookup(kb: KnowledgeBase, name: str, texts: Iterable[str]) -> dict[str, np.ndarray]:
    """The vectors table ``name`` holds for ``texts`` (none when the table was not built)."""
    table = _load(table_path(kb, name))
    if table is None:
        return {}
    rows, vecs = table
    return {t: vecs[rows[t]] for t in texts if t in rows}


def build(kb: KnowledgeBase, name: str, texts: Iterable[str], progress: bool = False) -> Path:
    """Encode the distinct ``texts`` with the KB's model and write the table ``name`` (replacing it)."""
    unique = sorted(set(texts))
    path = table_path(kb, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    dim = kb.dense.index.d
    vecs = np.zeros((len(unique), dim), dtype=np.float32)
    for at in range(0, len(unique), BUILD_BATCH):
        vecs[at : at + BUILD_BATCH] = embed_matrix(kb.embeddings, unique[at : at + BUILD_BATCH])
        if progress:
            print(f"{name}: {min(at + BUILD_BATCH, len(unique))}/{len(unique)}", flush=True)  # noqa: T201
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, texts=np.asarray(unique, dtype=str), vectors=vecs)
    tmp.replace(path)
    with _lock:
        _loaded.pop(path, None)
    return path


def exists(kb: KnowledgeBase, name: str) -> bool:
    """Whether the table ``name`` was built for ``kb``'s current build."""
    return table_path(kb, name).exists()


_json: dict[Path, dict | None] = {}


def save_json(kb: KnowledgeBase, name: str, data: dict) -> Path:
    """Keep a JSON object derived from ``kb``'s texts beside its vector tables (e.g. parsed parts)."""
    path = table_path(kb, name).with_suffix(".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.json")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    with _lock:
        _json.pop(path, None)
    return path


def load_json(kb: KnowledgeBase, name: str) -> dict | None:
    """The object :func:`save_json` kept for ``kb``'s current build (None when there is none), read once."""
    path = table_path(kb, name).with_suffix(".json")
    with _lock:
        if path in _json:
            return _json[path]
    found = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    with _lock:
        _json[path] = found
    return found
