"""Embeddings of a changed KB: the vectors of texts the live build already holds are copied, not recomputed.

A change to a KB (add, update or delete of a document or file, :mod:`kb.kb_update`) rebuilds
the whole build, but most of its texts are unchanged. :func:`embed_reusing` reads the previous
build's texts (``docs.jsonl``) and vectors (``dense.faiss``, whose flat storage gives each row
back exactly) and embeds only the texts it does not hold, in resumable chunks
(:mod:`kb.embed_chunks`). A previous build embedded with another model is not used. When every
text is known, no embedding model is loaded at all (a delete).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np

from hybridrag.kb.embed_chunks import ChunkedVectors, embed_in_chunks


def previous_vectors(build: Path, spec: str) -> dict[str, np.ndarray]:
    """Text -> vector of a finished build embedded with ``spec`` ({} when it was another model or unreadable)."""
    import faiss

    from hybridrag.kb.text_index import load_docs

    try:
        manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
        if manifest.get("embeddings", {}).get("spec") != spec:
            return {}
        docs = load_docs(build / "docs.jsonl")
        index = faiss.read_index(str(build / "dense.faiss"))
    except (OSError, ValueError, RuntimeError):
        return {}
    if index.ntotal != len(docs):
        return {}
    vectors = index.reconstruct_n(0, index.ntotal)
    return {d.text: vectors[i] for i, d in enumerate(docs)}


def embed_reusing(
    embed: Callable[[list[str]], ChunkedVectors],
    texts: list[str],
    known: dict[str, np.ndarray],
) -> tuple[np.ndarray, ChunkedVectors | None]:
    """Vectors of ``texts``: from ``known`` where it has them, from ``embed(new_texts)`` for the rest.

    Returns the matrix in the order of ``texts`` and the chunked run of the new texts (None when
    there were none).
    """
    new = list(dict.fromkeys(t for t in texts if t not in known))
    run = embed(new) if new else None
    fresh = dict(zip(new, run.vectors, strict=True)) if run is not None else {}
    rows = [known[t] if t in known else fresh[t] for t in texts]
    return np.ascontiguousarray(np.stack(rows), dtype=np.float32), run


def embed_new(
    load: Callable, spec: str, folder: Path, progress: bool, on_chunk: Callable[[int], None]
) -> Callable[[list[str]], ChunkedVectors]:
    """An ``embed`` for :func:`embed_reusing`: ``load(spec)`` gives the model, only once it is called."""

    def run(texts: list[str]) -> ChunkedVectors:
        return embed_in_chunks(load(spec), spec, texts, folder, progress=progress, on_chunk=on_chunk)

    return run
