"""HNSW efSearch sweep on the scale benchmark's built KBs: recall@10 against exact search and search p50.

Usage: nice -n 10 python -m evals.scale.ef_sweep [--factors 1,4,16] [--efs 64,128,256,512] [--work DIR]

Same queries as the ``dense`` stage (1,000 dev questions, topic renamed to a random copy, seed 1).
Recall is measured with one batched search per efSearch (HNSW answers each query of a batch
exactly as it answers it alone); the p50 is single-query searches of the first 200 questions.
Prints a markdown table; ``--json`` also writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from hybridrag.evals.paths import datasets_dir
from hybridrag.kb.sample import cache_root


def sweep(kb_dir: Path, factor: int, efs: list[int], n_queries: int = 1000, k: int = 10) -> list[dict]:
    """One row per efSearch value: recall@k vs exact search and single-query p50/p95 ms."""
    import faiss

    from hybridrag.evals.scale.modules import cases
    from hybridrag.kb.embeddings import embed_matrix, get_embeddings
    from hybridrag.kb.kb_dir import resolve_build

    index = faiss.read_index(str(resolve_build(kb_dir).path / "dense.faiss"))
    if not hasattr(index, "hnsw"):
        raise SystemExit(f"{kb_dir}: the dense index is {type(index).__name__}, not HNSW")
    qs = cases(datasets_dir(), -(-n_queries // 3), factor, seed=1)[:n_queries]
    q = np.ascontiguousarray(embed_matrix(get_embeddings(), [c.question for c in qs]), dtype=np.float32)
    storage = faiss.downcast_index(index.storage)
    flat = faiss.IndexFlatIP(index.d)
    flat.add(storage.reconstruct_n(0, storage.ntotal))
    _, exact = flat.search(q, k)
    del flat
    rows = []
    for ef in efs:
        index.hnsw.efSearch = ef
        _, got = index.search(q, k)
        recall = float(np.mean([len(set(a) & set(b)) / k for a, b in zip(got, exact, strict=True)]))
        ms = []
        for v in q[:200]:
            t = time.perf_counter()
            index.search(v.reshape(1, -1), k)
            ms.append((time.perf_counter() - t) * 1000)
        rows.append(
            {
                "factor": factor,
                "rows": int(index.ntotal),
                "ef_search": ef,
                "recall_at_10": recall,
                "p50_ms": float(np.percentile(ms, 50)),
                "p95_ms": float(np.percentile(ms, 95)),
                "load": os.getloadavg()[0],
            }
        )
        print(json.dumps(rows[-1]), flush=True)  # noqa: T201
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m evals.scale.ef_sweep", description=__doc__.split("\n\n")[0])
    p.add_argument("--factors", default="1,4,16")
    p.add_argument("--efs", default="64,128,256,512")
    p.add_argument("--work", type=Path, default=cache_root() / "scale")
    p.add_argument("--json", type=Path, help="also write the rows here")
    args = p.parse_args(argv)
    efs = [int(x) for x in args.efs.split(",")]
    rows = []
    for f in (int(x) for x in args.factors.split(",")):
        rows += sweep(args.work / f"x{f}" / "kb", f, efs)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    print("| factor | rows | efSearch | recall@10 vs exact | search p50 / p95 ms | load |")  # noqa: T201
    print("|---|---|---|---|---|---|")  # noqa: T201
    for r in rows:
        print(
            f"| {r['factor']}× | {r['rows']:,} | {r['ef_search']} | {r['recall_at_10']:.3f} | "  # noqa: T201
            f"{r['p50_ms']:.2f} / {r['p95_ms']:.2f} | {r['load']:.1f} |"
        )


if __name__ == "__main__":
    main()
