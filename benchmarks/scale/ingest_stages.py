"""Child stages that build the synthetic KBs: graph-only ingest, the full ingest, and a killed-then-resumed ingest.

Each runs in a fresh interpreter (``python -m benchmarks scale --stage ...``) so its peak RSS
(``ru_maxrss``) is its own. The full ingest is the real :func:`kb.ingest.ingest`; its FAISS and
BM25 builds are timed by wrapping the two index classes, nothing else is replaced. At a factor
whose names are not embedded for real (``--embed-factors``), the embedding stage is replaced by
*replicated vectors*: copy ``c`` of an entity gets the 1× KB's real MiniLM vector of the original
name plus seeded Gaussian noise (copy 1 keeps the exact vector), so the index build and every
search over it are real, but no encode time is measured at that factor.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from benchmarks.scale.synth import SUFFIX, original_name
from hybridrag.evals.timing import clocks, since
from hybridrag.kb.sample import TYPE_MAP


def graph_ingest(kb_txt: Path, scratch: Path, repeats: int = 3) -> dict:
    """Parse, assemble and save the graph only (``build_graph``), ``repeats`` times in this process.

    ``seconds`` / ``cpu_s`` are the fastest run's wall and CPU time (the machine is shared: the
    minimum is the run least slowed by other jobs); every run's times are kept too.
    """
    import shutil

    from hybridrag.kb.ingest import build_graph

    walls, cpus = [], []
    for _ in range(repeats):
        shutil.rmtree(scratch, ignore_errors=True)
        start = clocks()
        store = build_graph(scratch, [kb_txt], type_map=TYPE_MAP, progress=False)
        took = since(start)
        walls.append(took["seconds"])
        cpus.append(took["cpu_s"])
        counts = store.counts()
        del store
    shutil.rmtree(scratch, ignore_errors=True)
    return {"seconds": min(walls), "cpu_s": min(cpus), "runs_s": walls, "runs_cpu_s": cpus, **counts}


def _timed_index_classes(timings: dict[str, float]) -> None:
    """Make ``kb.ingest`` time each FAISS and BM25 build into ``timings``."""
    import hybridrag.kb.ingest as ki

    dense_cls, bm25_cls = ki.DenseIndex, ki.BM25Index

    class TimedDense(dense_cls):
        @classmethod
        def build(cls, vectors):
            t = time.perf_counter()
            out = dense_cls.build(vectors)
            timings["faiss_build"] = time.perf_counter() - t
            timings["faiss_type"] = type(out.index).__name__
            return out

    class TimedBM25(bm25_cls):
        @classmethod
        def build(cls, texts, *a, **kw):
            t = time.perf_counter()
            out = bm25_cls.build(texts, *a, **kw)
            timings["bm25_build"] = time.perf_counter() - t
            return out

    ki.DenseIndex, ki.BM25Index = TimedDense, TimedBM25


def base_vectors(base_kb: Path) -> tuple[dict[str, int], np.ndarray]:
    """Row of each entity name and the real vectors of the 1× KB ``base_kb``."""
    import faiss

    from hybridrag.kb.kb_dir import resolve_build
    from hybridrag.kb.text_index import load_docs

    build = resolve_build(base_kb).path
    docs = load_docs(build / "docs.jsonl")
    index = faiss.read_index(str(build / "dense.faiss"))
    storage = faiss.downcast_index(index.storage) if hasattr(index, "storage") else index
    vecs = storage.reconstruct_n(0, storage.ntotal).astype(np.float32)
    return {d.text: i for i, d in enumerate(docs) if d.kind == "entity"}, vecs


def replicated_vectors(texts: list[str], rows: dict[str, int], vecs: np.ndarray, sigma: float) -> np.ndarray:
    """Vector per copy name: the original's vector, plus noise seeded by the copy number, renormalised."""
    out = np.empty((len(texts), vecs.shape[1]), np.float32)
    copies = np.ones(len(texts), np.int64)
    for i, t in enumerate(texts):
        m = SUFFIX.search(t)
        copies[i] = int(m.group(1)) if m else 1
        out[i] = vecs[rows[original_name(t)]]
    for c in np.unique(copies[copies > 1]):
        sel = np.flatnonzero(copies == c)
        noise = np.random.default_rng(int(c)).normal(0.0, sigma, (len(sel), out.shape[1])).astype(np.float32)
        out[sel] += noise
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def copy_cosine(base_kb: Path, pairs: int = 1000, seed: int = 0) -> float:
    """Mean cosine between the real vector of a name and of its copy ``name #2``.

    Over ``pairs`` names of the 1× KB ``base_kb`` (a seeded sample), both encoded now with the KB's model.
    """
    import random

    from hybridrag.kb.base import KnowledgeBase
    from hybridrag.kb.embeddings import embed_matrix

    kb = KnowledgeBase(base_kb)
    names = [d.text for d in kb.docs if d.kind == "entity"]
    names = random.Random(seed).sample(names, min(pairs, len(names)))
    a = embed_matrix(kb.embeddings, names)
    b = embed_matrix(kb.embeddings, [f"{n} #2" for n in names])
    return float(np.mean(np.sum(a * b, axis=1)))


def sigma_for(cosine: float, dim: int) -> float:
    """Per-dimension noise that puts a unit vector at ``cosine`` from its noisy, renormalised copy."""
    return float(np.sqrt(max(1.0 / cosine**2 - 1.0, 0.0) / dim))


def full_ingest(kb_txt: Path, kb_dir: Path, replicate: dict | None = None, fresh: bool = True) -> dict:
    """The real ingest into ``kb_dir``; ``replicate`` = {"base": 1× KB dir, "sigma": noise} swaps the encoder out.

    ``fresh`` deletes ``kb_dir`` first, so no chunk of an earlier killed run is reused.
    """
    import shutil

    import hybridrag.kb.ingest as ki
    from hybridrag.kb.embed_chunks import ChunkedVectors

    if fresh:
        shutil.rmtree(kb_dir, ignore_errors=True)
    timings: dict[str, float] = {}
    _timed_index_classes(timings)
    if replicate:
        rows, vecs = base_vectors(Path(replicate["base"]))

        def embed_new(*_args, **_kw):  # noqa: ANN002, ANN003 - ingest's factory of its embedding step
            return lambda texts: ChunkedVectors(replicated_vectors(texts, rows, vecs, replicate["sigma"]), 0, 0)

        ki.embed_new = embed_new  # (patching ki.embed_in_chunks, as before, no longer replaced the encoder)
    t = time.perf_counter()
    rep = ki.ingest(kb_dir, [kb_txt], type_map=TYPE_MAP, progress=False)  # a re-run reuses saved chunks
    return {
        "seconds": time.perf_counter() - t,
        **{f"{k}_s": v for k, v in rep.seconds.items()},
        **timings,
        **rep.counts,
        "chunks": rep.embed_chunks,
        "chunks_reused": rep.embed_chunks_reused,
        "embedding": "replicated" if replicate else "real",
        "encoded": rep.embed_chunks > 0,  # chunks written: the model encoded (replicated vectors write none)
        **(replicate and {"sigma": replicate["sigma"]} or {}),
    }
