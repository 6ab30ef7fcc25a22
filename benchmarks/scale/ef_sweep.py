"""HNSW efSearch sweep on the scale benchmark's built KBs: recall@10 against exact search and search p50.

Usage: nice -n 10 python -m benchmarks scale-ef [--factors 1,4,16] [--efs 64,128,256,512] [--work DIR]

Same queries as the ``dense`` stage (1,000 dev questions, topic renamed to a random copy, seed 1).
Recall is measured with one batched search per efSearch (HNSW answers each query of a batch
exactly as it answers it alone); the p50 is single-query searches of the first 200 questions.
Prints a markdown table; ``--json`` also writes the raw numbers.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from benchmarks.common import arg
from hybridrag.evals.hybrid import datasets_root
from hybridrag.evals.markdown import table
from hybridrag.evals.timing import load_average, stats
from hybridrag.kb.sample import cache_root


def sweep(kb_dir: Path, factor: int, efs: list[int], n_queries: int = 1000, k: int = 10) -> list[dict]:
    """One row per efSearch value: recall@k vs exact search and single-query p50/p95 ms."""
    import faiss

    from benchmarks.scale.modules import cases
    from hybridrag.kb.embeddings import embed_matrix, get_embeddings
    from hybridrag.kb.kb_dir import resolve_build

    index = faiss.read_index(str(resolve_build(kb_dir).path / "dense.faiss"))
    if not hasattr(index, "hnsw"):
        raise SystemExit(f"{kb_dir}: the dense index is {type(index).__name__}, not HNSW")
    qs = cases(datasets_root(), -(-n_queries // 3), factor, seed=1)[:n_queries]
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
                **{k: v for k, v in stats(ms, suffix="_ms").items() if k in ("p50_ms", "p95_ms")},
                "load": load_average()[0],
            }
        )
        sys.stdout.write(json.dumps(rows[-1]) + "\n")
        sys.stdout.flush()
    return rows


OPTIONS = [
    arg("--factors", default="1,4,16"),
    arg("--efs", default="64,128,256,512"),
    arg("--work", type=Path, default=cache_root() / "scale"),
    arg("--json", type=Path, help="also write the rows here"),
]


def run(args: argparse.Namespace) -> int:
    """Sweep every factor's KB and print the table (and write the rows as JSON)."""
    efs = [int(x) for x in args.efs.split(",")]
    rows = []
    for f in (int(x) for x in args.factors.split(",")):
        rows += sweep(args.work / f"x{f}" / "kb", f, efs)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    head = ["factor", "rows", "efSearch", "recall@10 vs exact", "search p50 / p95 ms", "load"]
    cells = [
        [
            f"{r['factor']}×",
            f"{r['rows']:,}",
            r["ef_search"],
            f"{r['recall_at_10']:.3f}",
            f"{r['p50_ms']:.2f} / {r['p95_ms']:.2f}",
            f"{r['load']:.1f}",
        ]
        for r in rows
    ]
    sys.stdout.write("\n".join(table(head, cells)) + "\n")
    return 0
