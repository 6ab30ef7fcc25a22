"""Child stages of the Prime-sized benchmark, each run in a fresh interpreter (its own peak RSS).

``synth`` writes the source (:mod:`benchmarks.scale.prime_synth`); ``graph`` is the scale stage's
graph-only ingest (:func:`kb.ingest.build_graph`), here once, the built graph kept for
``graph-load`` (:meth:`InMemoryGraphStore.load` alone); ``ingest`` is the real
:func:`kb.ingest.ingest` with the entity names encoded by the KB's MiniLM (chunks saved as they
finish, so a killed run resumes); ``load`` is the scale stage's KB open; ``latency`` times the
modules on MetaQA 1× and on Prime interleaved question by question (:mod:`benchmarks.scale.modules`).
"""

from __future__ import annotations

import time
from pathlib import Path

from hybridrag.evals.hybrid import datasets_root
from hybridrag.evals.timing import clocks, load_average, since

SIMPLE = ["graph: neighbours of topic", "graph: ego graph (gold hops, relations)"]
KEYS = ("metaqa1", "prime")


def layout(work: Path, scale_work: Path) -> dict:
    """Every path the stages read or write."""
    src = work / "src"
    return {
        "src": src,
        "kb_txt": src / "kb.txt",
        "entities": src / "entities.jsonl",
        "types": src / "types.json",
        "graph": {"prime": work / "graph-prime", "metaqa1": work / "graph-metaqa1"},
        "kb": {"prime": work / "kb", "metaqa1": scale_work / "x1" / "kb"},
        "metaqa_txt": scale_work / "x1" / "kb.txt",
    }


def synth(paths: dict, args) -> dict:  # noqa: ANN001 - the suite's parsed arguments
    """Write the Prime source; its counts, seconds and file sizes."""
    from benchmarks.scale.prime_synth import write_prime

    start = clocks()
    res = write_prime(paths["src"], args.entities, args.edges, args.seed)
    return {
        **res,
        **since(start),
        "bytes": {p.name: p.stat().st_size for p in paths["src"].iterdir() if p.suffix != ".tmp"},
    }


def graph(paths: dict, key: str) -> dict:
    """Graph-only ingest of ``key`` into its graph folder (kept for ``graph-load``)."""
    import shutil

    from benchmarks.scale.ingest_stages import TYPE_MAP
    from hybridrag.kb.ingest import build_graph

    out = paths["graph"][key]
    shutil.rmtree(out, ignore_errors=True)
    if key == "prime":
        inputs = {"triples": [paths["kb_txt"]], "entities": paths["entities"], "type_map": paths["types"]}
    else:
        inputs = {"triples": [paths["metaqa_txt"]], "type_map": TYPE_MAP}
    start = clocks()
    store = build_graph(out, progress=False, **inputs)
    return {
        **since(start),
        **store.counts(),
        "relations": len(store.relation_names),
        "types": len(store.schema().entity_types),
    }


def graph_load(paths: dict, key: str) -> dict:
    """Open the saved graph alone (``graph.npz`` + entity table), then build the both-ways index once."""
    from hybridrag.kb.memory_store import InMemoryGraphStore

    t = time.perf_counter()
    store = InMemoryGraphStore.load(paths["graph"][key])
    secs = time.perf_counter() - t
    t = time.perf_counter()
    store._both()  # built lazily on the first ego graph: part of the first question's cost
    return {"seconds": secs, "both_index_s": time.perf_counter() - t, **store.counts()}


def ingest(paths: dict) -> dict:
    """The full ingest of Prime: graph, entity-name embeddings (real MiniLM), document table, BM25, FAISS."""
    import hybridrag.kb.ingest as ki
    from benchmarks.scale.ingest_stages import _timed_index_classes

    timings: dict = {}
    _timed_index_classes(timings)
    start = clocks()
    rep = ki.ingest(
        paths["kb"]["prime"], [paths["kb_txt"]], entities=paths["entities"], type_map=paths["types"], progress=False
    )
    return {
        **since(start),
        **{f"{k}_s": v for k, v in rep.seconds.items()},
        **timings,
        **rep.counts,
        "chunks": rep.embed_chunks,
        "chunks_reused": rep.embed_chunks_reused,
        "torch_threads": _torch_threads(),
    }


def _torch_threads() -> int | None:
    try:
        import torch

        return torch.get_num_threads()
    except ImportError:
        return None


def load(paths: dict, key: str, args) -> dict:  # noqa: ANN001 - the suite's parsed arguments
    """The scale suite's KB open, on ``key``'s KB."""
    from benchmarks.scale.query_stages import load as kb_load

    return kb_load(paths["kb"][key], args)


def cases(paths: dict, per_hop: int, seed: int = 0, hops: tuple[int, ...] = (1, 2, 3)) -> dict:
    """The questions with ``hops`` hops of both KBs: MetaQA dev (1×, sampled as the scale stage does), Prime walks."""
    from benchmarks.scale.modules import cases as metaqa_cases
    from benchmarks.scale.prime_questions import sample_cases
    from hybridrag.kb.memory_store import InMemoryGraphStore

    store = InMemoryGraphStore.load(paths["graph"]["prime"])
    metaqa = [c for c in metaqa_cases(datasets_root(), per_hop, 1, seed) if c.rec.hops in hops]
    return {"metaqa1": metaqa, "prime": sample_cases(store, per_hop, seed, hops_list=hops)}


def latency(paths: dict, args) -> dict:
    """p50/p95 of the graph reads and every method's modules on MetaQA 1× and Prime, interleaved."""
    from benchmarks.scale.modules import time_cases
    from hybridrag.kb.base import open_kb

    hops = tuple(int(h) for h in args.hops.split(","))
    qs = cases(paths, args.questions, args.seed, hops)
    t = time.perf_counter()
    kbs = {k: (open_kb(paths["kb"][k]), paths["kb"][k]) for k in KEYS}
    opened = time.perf_counter() - t
    methods = tuple(m for m in args.methods.split(",") if m)
    res = time_cases(kbs, qs, simple=SIMPLE, methods=methods)
    return {
        "questions": len(qs["prime"]),
        "hops": list(hops),
        "open_s": opened,
        "methods": list(methods),
        "by_kb": res,
        "loadavg": load_average()[0],
        "prime_cases": [{"topic": c.topic, "relations": list(c.relations)} for c in qs["prime"]],
    }
