"""Child stage: the graph on a FalkorDB server over Bolt (the ``neo4j`` driver path) at one factor.

Starts a throw-away FalkorDB (:class:`kb.graph_local.FalkorDBServer`), exports the factor's built
graph with :func:`kb.graph_backends.export_graph` (``"neo4j"``: exactly what ``hybridrag ingest
--neo4j URI`` runs after building the graph), then times the graph reads the methods make and the
graph-walking modules with the KB's graph swapped for the server's, against the in-memory store
of the same build in the same process.
"""

from __future__ import annotations

import time
from pathlib import Path

from hybridrag.evals.hybrid import datasets_root

GRAPH_READS = ["graph: neighbours of topic", "graph: ego graph (gold hops, relations)"]
# Every method's modules: their graph reads are batched (one store call per hop or per set of items),
# MoR's document table once per KB (agents/mor/matching.py doc_table, get_many in batches).
SERVER_METHODS = ("hybgrag", "mor", "hydrarag", "ssrag")
POOL_NODES = 20  # neighbours of the topic whose pools the quick-ACK comparison reads
WHOLE_SEED = 1  # the whole-question rows ask other questions than the modules' (whose reads the stores cache)


def _server_peak_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def same_outputs(memory: dict[str, list], server: dict[str, list]) -> dict[str, list[int]]:
    """Per module: [questions whose result on the server equals the one in memory, questions]."""
    return {
        name: [sum(a == b for a, b in zip(memory[name], server.get(name, []), strict=False)), len(memory[name])]
        for name in memory
    }


def quick_ack_effect(store, uri: str, qs: list) -> dict:  # noqa: ANN001 - a Neo4jGraphStore
    """Two reads on the server with and without quick ACKs (:mod:`kb.bolt_quick_ack`), alternating per question.

    The topic's neighbours (a small answer for most topics), and the pools of its first ``POOL_NODES``
    neighbours (the read of one hop of SSRAG's walk, :meth:`CypherGraphStore.node_pools`: a larger one).
    """
    from benchmarks.scale.modules import percentiles
    from hybridrag.agents.ssrag.facts import FACT_POOL
    from hybridrag.kb.bolt_quick_ack import quick_ack
    from hybridrag.kb.graph_bolt import bolt_address

    times: dict[str, list[float]] = {}
    rows: dict[str, list[int]] = {"neighbours": [], "pools": []}
    try:
        for i, c in enumerate(qs):
            near = list(dict.fromkeys(e for t in store.neighbors([c.topic]) for e in (t.head, t.tail) if e != c.topic))
            reads = {
                "neighbours": lambda c=c: store.neighbors([c.topic]),
                "pools": lambda near=near: [
                    t for p in store.node_pools(near[:POOL_NODES], FACT_POOL).values() for t in p
                ],
            }
            for name, read in reads.items():
                for on in (True, False) if i % 2 == 0 else (False, True):
                    quick_ack(bolt_address(uri), on)
                    t = time.perf_counter()
                    got = read()
                    times.setdefault(f"{name}, {'with' if on else 'without'}", []).append(
                        (time.perf_counter() - t) * 1000
                    )
                rows[name].append(len(got))
    finally:
        quick_ack(bolt_address(uri))
    return {
        **{k: percentiles(v) for k, v in times.items()},
        **{f"{k} rows p50": sorted(v)[len(v) // 2] for k, v in rows.items()},
    }


def ssrag_quick_ack(kb_dir: Path, uri: str, qs: list) -> dict:
    """SSRAG's graph branch on the server with and without quick ACKs, alternating per question.

    Each side has its own KB object and connection (so its own caches: neither finds the other's reads).
    """
    from benchmarks.scale.modules import percentiles
    from benchmarks.speed.modules_methods import forget_queries, prepare_ssrag
    from hybridrag.kb.base import KnowledgeBase
    from hybridrag.kb.bolt_quick_ack import quick_ack
    from hybridrag.kb.graph_bolt import bolt_address
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    kbs, times = {}, {True: [], False: []}
    try:
        for on in (True, False):
            kbs[on] = KnowledgeBase(kb_dir)
            kbs[on].graph = Neo4jGraphStore.connect(uri)
        for i, c in enumerate(qs):
            for on in (True, False) if i % 2 == 0 else (False, True):
                quick_ack(bolt_address(uri), on)
                branch = dict(prepare_ssrag(kbs[on], c.rec))["graph"]
                forget_queries([c.question, c.rec.skyline()])
                t = time.perf_counter()
                branch()
                times[on].append((time.perf_counter() - t) * 1000)
    finally:
        quick_ack(bolt_address(uri))
        for kb in kbs.values():
            kb.graph.close()
    return {"ssrag graph, with": percentiles(times[True]), "ssrag graph, without": percentiles(times[False])}


def server(kb_dir: Path, args) -> dict:
    """Export time, server memory, and per-read latency on the server vs in memory."""
    from benchmarks.scale.modules import cases, time_cases
    from hybridrag.kb.base import KnowledgeBase
    from hybridrag.kb.graph_backends import export_graph
    from hybridrag.kb.graph_local import FalkorDBServer
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    srv = FalkorDBServer(parent=args.work / "falkordb").start()
    try:
        kb = KnowledgeBase(kb_dir)
        t = time.perf_counter()
        export_graph("neo4j", srv.uri, kb.graph, progress=False)
        export_s = time.perf_counter() - t
        res = {"export_s": export_s, **kb.graph.counts(), "server_peak_rss_mb": _server_peak_mb(srv.proc.pid)}
        qs = cases(datasets_root(), args.questions, args.factor)
        other = cases(datasets_root(), args.questions, args.factor, seed=WHOLE_SEED)  # whole questions: new ones
        on_server = KnowledgeBase(kb_dir)
        with Neo4jGraphStore.connect(srv.uri) as store:
            on_server.graph = store
            outputs: dict = {}
            res.update(
                time_cases(
                    {"memory": (kb, kb_dir), "server": (on_server, kb_dir)},
                    {"memory": qs, "server": qs},
                    GRAPH_READS,
                    SERVER_METHODS,
                    outputs=outputs,
                    whole={"memory": other, "server": other},
                )
            )
            res["quick_ack"] = quick_ack_effect(store, srv.uri, qs)  # after: its reads warm the store's caches
            res["quick_ack"].update(ssrag_quick_ack(kb_dir, srv.uri, other))
        res["same_as_memory"] = same_outputs(outputs["memory"], outputs["server"])
        res["questions"] = len(qs)
        return res
    finally:
        srv.stop()
