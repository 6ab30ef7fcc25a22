"""Embeddings at ingest, in chunks saved as they finish, so a killed ingest resumes.

Each chunk of texts is embedded once and written to ``<folder>/<key>.npy`` (atomically: a
temporary file, then a rename), where the key hashes the embedding spec and the chunk's
texts. A re-run of the same ingest finds the chunks a killed run finished and embeds only the
rest; a chunk file that does not load as the right shape is embedded again.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings
from tqdm import tqdm

from hybridrag.kb.embeddings import embed_matrix
from hybridrag.kb.model import KBError

CHUNK_ENV = "HYBRIDRAG_EMBED_CHUNK"
DEFAULT_CHUNK = 1024


@dataclass(frozen=True)
class ChunkedVectors:
    """Embedded texts and how many chunks came from an earlier, interrupted run."""

    vectors: np.ndarray
    chunks: int
    reused: int


def chunk_size() -> int:
    """Texts per chunk: ``$HYBRIDRAG_EMBED_CHUNK`` or :data:`DEFAULT_CHUNK`."""
    raw = os.environ.get(CHUNK_ENV, "")
    try:
        size = int(raw) if raw else DEFAULT_CHUNK
    except ValueError:
        raise KBError(f"{CHUNK_ENV} must be a positive integer, got {raw!r}") from None
    if size < 1:
        raise KBError(f"{CHUNK_ENV} must be a positive integer, got {raw!r}")
    return size


def chunk_key(spec: str, texts: list[str]) -> str:
    """Hash of the embedding spec and the texts of one chunk (their order included)."""
    h = hashlib.sha256(spec.encode("utf-8") + b"\x00")
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass") + b"\x1e")
    return h.hexdigest()[:32]


def _load(path: Path, rows: int) -> np.ndarray | None:
    """A saved chunk, or None when it is missing or not a finite ``rows`` x dim float32 matrix."""
    try:
        mat = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError):
        return None
    ok = mat.ndim == 2 and mat.shape[0] == rows and mat.dtype == np.float32 and np.isfinite(mat).all()
    return mat if ok else None


def _save(path: Path, mat: np.ndarray) -> None:
    tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp")  # not *.npy: only whole chunks match that
    with open(tmp, "wb") as f:
        np.save(f, mat, allow_pickle=False)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def embed_in_chunks(
    emb: Embeddings,
    spec: str,
    texts: list[str],
    folder: Path,
    size: int | None = None,
    progress: bool = False,
    on_chunk: Callable[[int], None] | None = None,
) -> ChunkedVectors:
    """Embed ``texts`` chunk by chunk, reusing chunks saved in ``folder`` by an earlier run.

    ``on_chunk(done)`` is called after each chunk with the number of chunks done so far.
    """
    if not texts:
        raise KBError("nothing to embed: no entities and no passages")
    folder.mkdir(parents=True, exist_ok=True)
    size = size or chunk_size()
    parts: list[np.ndarray] = []
    reused = 0
    with tqdm(total=len(texts), desc="embeddings", unit=" texts", disable=not progress) as bar:
        for start in range(0, len(texts), size):
            batch = texts[start : start + size]
            path = folder / f"{chunk_key(spec, batch)}.npy"
            mat = _load(path, len(batch))
            if mat is None:
                mat = np.ascontiguousarray(embed_matrix(emb, batch), dtype=np.float32)
                _save(path, mat)
            else:
                reused += 1
            parts.append(mat)
            bar.update(len(batch))
            if on_chunk:
                on_chunk(len(parts))
    dims = {p.shape[1] for p in parts}
    if len(dims) != 1:
        raise KBError(
            f"embedding chunks disagree on the vector size ({sorted(dims)}); delete {folder} and re-run ingest"
        )
    return ChunkedVectors(np.concatenate(parts), len(parts), reused)
