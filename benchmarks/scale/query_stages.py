"""Child stages over a built synthetic KB: load time, dense-index quality and speed, per-module latency."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from hybridrag.evals.hybrid import datasets_root


def load(kb_dir: Path, args) -> dict:
    """Open the KB (graph, document table, FAISS, BM25, checks), then load the query encoder."""
    from hybridrag.kb.base import KnowledgeBase

    t = time.perf_counter()
    kb = KnowledgeBase(kb_dir)
    res = {"seconds": time.perf_counter() - t, **kb.graph.counts(), "docs": len(kb.docs)}
    t = time.perf_counter()
    kb.embed("warm up")
    res["encoder_load_s"] = time.perf_counter() - t
    return res


def index_build(kb_dir: Path, args) -> dict:
    """The default dense-index build (:meth:`kb.text_index.DenseIndex.build`) alone, on the KB's own vectors."""
    import faiss

    from hybridrag.kb.kb_dir import resolve_build
    from hybridrag.kb.text_index import DenseIndex

    index = faiss.read_index(str(resolve_build(kb_dir).path / "dense.faiss"))
    storage = faiss.downcast_index(index.storage) if hasattr(index, "storage") else index
    vecs = storage.reconstruct_n(0, storage.ntotal)
    t = time.perf_counter()
    built = DenseIndex.build(vecs)
    return {
        "seconds": time.perf_counter() - t,
        "rows": int(built.index.ntotal),
        "index_type": type(built.index).__name__,
        "threads": faiss.omp_get_max_threads(),
    }


def dense(kb_dir: Path, args, n_queries: int = 1000, k: int = 10) -> dict:
    """Recall@10 of the KB's FAISS index against exact search, on ``n_queries`` dev questions, and search times."""
    import faiss

    from benchmarks.scale.modules import cases, percentiles
    from hybridrag.kb.base import KnowledgeBase
    from hybridrag.kb.embeddings import embed_matrix

    kb = KnowledgeBase(kb_dir)
    index = kb.dense.index
    qs = cases(datasets_root(), -(-n_queries // 3), args.factor, seed=1)[:n_queries]
    q = np.ascontiguousarray(embed_matrix(kb.embeddings, [c.question for c in qs]), dtype=np.float32)
    storage = faiss.downcast_index(index.storage) if hasattr(index, "storage") else index
    t = time.perf_counter()
    flat = faiss.IndexFlatIP(index.d)
    flat.add(storage.reconstruct_n(0, storage.ntotal))
    flat_build = time.perf_counter() - t
    _, exact = flat.search(q, k)
    got = np.stack([kb.dense.search(v, k)[0][:k] for v in q])
    recall = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(got, exact, strict=True)]))
    one = {"index": [], "exact": []}
    for v in q[:200]:
        t = time.perf_counter()
        kb.dense.search(v, k)
        one["index"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        flat.search(v.reshape(1, -1), k)
        one["exact"].append((time.perf_counter() - t) * 1000)
    return {
        "index_type": type(index).__name__,
        "rows": int(index.ntotal),
        "ef_search": kb.dense.ef_search,
        "queries": len(q),
        f"recall_at_{k}": recall,
        "flat_build_s": flat_build,
        "index_search": percentiles(one["index"]),
        "exact_search": percentiles(one["exact"]),
    }


def latency(kb_dir: Path, args) -> dict:
    """p50/p95 of every retrieval module at every factor of ``args.factors``.

    The factors are interleaved question by question (same dev questions, topic renamed to a random
    copy per factor).
    """
    from benchmarks.scale.modules import cases, time_cases
    from benchmarks.scale.synth import paths
    from hybridrag.kb.base import open_kb

    dirs = {f: paths(args.work, f)[1] for f in args.factors}
    kbs = {f: (open_kb(d), d) for f, d in dirs.items()}
    qs = {f: cases(datasets_root(), args.questions, f) for f in args.factors}
    by_factor = time_cases(kbs, qs)
    return {"questions": len(qs[args.factors[0]]), "by_factor": {str(f): m for f, m in by_factor.items()}}
