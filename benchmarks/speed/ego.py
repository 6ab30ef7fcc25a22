"""``python -m benchmarks ego``: HybGRAG's ego-graph, node-at-a-time BFS vs the vectorised frontier.

HybGRAG's hybrid module expands an ego-graph around each topic entity
(:func:`agents.hybgrag.retrieval.hybrid_retrieve`). This times that call on the full MetaQA KB
for the calls HybGRAG really makes, on the topic entities of the first ``--limit`` dev questions
of each hop count:

- *router*: radius = hop count, relations = the question type's gold relation path
  (:func:`hybridrag.evals.metaqa.relation_path`), what a correct router action gives;
- *paper*: radius 2, every relation (the paper's unrestricted 2-hop neighbourhood).

Both algorithms run on the same calls, alternating which goes first, in one process:
``baseline_ego_graph`` below (the store's former one-node-at-a-time BFS, one ``edge_ids`` call
per visited node and a Triple per edge visit) and :meth:`kb.memory_store.InMemoryGraphStore.ego_graph`.
Each pair is checked for an identical subgraph (seeds, distances, parents, triples, in order)
and for the same top-10 candidates as HybGRAG ranks them (:func:`agents.hybgrag.retrieval.rank_entities`).
The load average is printed with the numbers; results go to ``docs/benchmarks_ego.md``.

    nice -n 10 python -m benchmarks ego --limit 200
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from pathlib import Path

from benchmarks.common import arg, command
from hybridrag.agents.hybgrag.retrieval import link_entity, rank_entities
from hybridrag.evals.datasets import load_metaqa
from hybridrag.evals.hybrid import datasets_root, metaqa_kb_dir
from hybridrag.evals.markdown import header, provenance, write_page
from hybridrag.evals.metaqa import TYPE_OF, relation_path
from hybridrag.evals.timing import load_average, mean, percentile
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Subgraph

K = 10


def baseline_ego_graph(store: InMemoryGraphStore, ids, radius: int = 2, relations=None) -> Subgraph:
    """The former ``InMemoryGraphStore.ego_graph``: a FIFO BFS expanding one node per ``edge_ids`` call."""
    seeds = store._indexes(ids)
    dist = {i: 0 for i in seeds}
    parent: dict[int, int] = {}
    edges_seen: list[int] = []
    frontier = deque(seeds)
    while frontier:
        i = frontier.popleft()
        if dist[i] >= radius:
            continue
        edges, nbrs = store.edge_ids([i], relations)
        for e, n in zip(edges.tolist(), nbrs.tolist(), strict=True):
            edges_seen.append(e)
            if n not in dist:
                dist[n] = dist[i] + 1
                parent[n] = e
                frontier.append(n)
    ents = store.entities
    return Subgraph(
        seeds=[ents[i].id for i in seeds],
        distance={ents[i].id: d for i, d in dist.items()},
        parent={ents[n].id: store._triple(e) for n, e in parent.items()},
        triples=[store._triple(e) for e in dict.fromkeys(edges_seen)],
    )


def identical(a: Subgraph, b: Subgraph) -> bool:
    """Same seeds, distances, parents and triples, each in the same order."""
    return (
        a.seeds == b.seeds
        and list(a.distance.items()) == list(b.distance.items())
        and list(a.parent.items()) == list(b.parent.items())
        and a.triples == b.triples
    )


def calls(kb, data: Path, hops: list[int], limit: int) -> list[dict]:
    """HybGRAG's ego-graph calls for the questions: (setting, hops, question, topic id, radius, relations)."""
    out = []
    for h in hops:
        for q in load_metaqa(data / f"dev_{h}hop.txt")[:limit]:
            topic = link_entity(kb, q.topic or "", TYPE_OF.get((q.qtype or "").split("_to_")[0]))
            if topic is None:
                continue
            path = list(dict.fromkeys(relation_path(q.qtype or "")))
            out.append(
                {
                    "setting": "router",
                    "hops": h,
                    "question": q.question,
                    "topic": topic.id,
                    "radius": h,
                    "relations": path,
                }
            )
            out.append(
                {
                    "setting": "paper",
                    "hops": h,
                    "question": q.question,
                    "topic": topic.id,
                    "radius": 2,
                    "relations": None,
                }
            )
    return out


def top10(kb, call: dict, sub: Subgraph) -> list[str]:
    """HybGRAG's ranking of the candidates of one ego-graph (seed excluded)."""
    return [eid for eid, _, _ in rank_entities(kb, call["question"], sorted(set(sub.distance) - {call["topic"]}), K)]


def measure(kb, todo: list[dict]) -> list[dict]:
    """Time both algorithms on every call, alternating which runs first; check results agree."""
    store = kb.graph
    rows = []
    for n, call in enumerate(todo):
        args = ([call["topic"]], call["radius"], call["relations"])
        timed = {}
        for name in ("old", "new") if n % 2 == 0 else ("new", "old"):
            fn = (lambda *a: baseline_ego_graph(store, *a)) if name == "old" else store.ego_graph
            t0 = time.perf_counter()
            sub = fn(*args)
            timed[name] = (time.perf_counter() - t0, sub)
        old, new = timed["old"][1], timed["new"][1]
        rows.append(
            {
                **call,
                "old": timed["old"][0],
                "new": timed["new"][0],
                "identical": identical(old, new),
                "same_top10": top10(kb, call, old) == top10(kb, call, new),
                "nodes": len(new.distance),
                "triples": len(new.triples),
            }
        )
        if (n + 1) % 100 == 0:
            sys.stderr.write(f"{n + 1}/{len(todo)} calls  load {load_average()[0]:.2f}\n")
    return rows


def _ms(values: list[float], q: str) -> float:
    if q == "p95":
        return percentile(values, 95, "lower") * 1e3
    return (percentile(values, 50, "midpoint") if q == "p50" else mean(values)) * 1e3


def table(rows: list[dict]) -> str:
    """Markdown table: one row per setting and hop count."""
    out = [
        "| setting | hops | calls | old p50 ms | new p50 ms | old p95 ms | new p95 ms | old mean ms | new mean ms | "
        "mean speed-up | mean nodes | mean triples | identical subgraph | same top-10 |",
        "|" + "---|" * 14,
    ]
    for setting in ("router", "paper"):
        for h in sorted({r["hops"] for r in rows}):
            part = [r for r in rows if r["setting"] == setting and r["hops"] == h]
            if not part:
                continue
            old, new = [r["old"] for r in part], [r["new"] for r in part]
            radius = f"radius {h}, gold relations" if setting == "router" else "radius 2, all relations"
            ratio = mean(old) / mean(new)
            same, top = sum(r["identical"] for r in part), sum(r["same_top10"] for r in part)
            out.append(
                f"| {setting} ({radius}) | {h} | {len(part)} | {_ms(old, 'p50'):.2f} | {_ms(new, 'p50'):.2f} | "
                f"{_ms(old, 'p95'):.2f} | {_ms(new, 'p95'):.2f} | "
                f"{_ms(old, 'mean'):.2f} | {_ms(new, 'mean'):.2f} | {ratio:.1f}× | "
                f"{mean(r['nodes'] for r in part):.0f} | "
                f"{mean(r['triples'] for r in part):.0f} | "
                f"{same}/{len(part)} | {top}/{len(part)} |"
            )
    return "\n".join(out)


OPTIONS = [
    arg("--limit", type=int, default=200, help="dev questions per hop count"),
    arg("--hops", type=int, nargs="+", default=[1, 2, 3]),
    arg("--kb", default=str(metaqa_kb_dir())),
    arg("--data", default=str(datasets_root() / "metaqa")),
    arg("--out", default="docs/benchmarks_ego.md"),
]


def run(args: argparse.Namespace) -> int:
    """Measure, print the table, write the report."""
    from hybridrag.kb.base import open_kb

    if args.limit < 1:
        raise SystemExit(f"--limit must be at least 1, not {args.limit}")
    kb = open_kb(args.kb)
    if not isinstance(kb.graph, InMemoryGraphStore):
        raise SystemExit(f"{args.kb}: the baseline needs the embedded graph store, not {type(kb.graph).__name__}")
    todo = calls(kb, Path(args.data), args.hops, args.limit)
    t0 = time.perf_counter()
    kb.graph._both()  # the frontier CSR is built on the first call: timed here, outside the calls
    build = time.perf_counter() - t0
    load_before = load_average()
    rows = measure(kb, todo)
    load_after = load_average()
    body = table(rows)
    loads = (
        f"load average (1/5/15 min) {' / '.join(f'{x:.2f}' for x in load_before)} before, "
        f"{' / '.join(f'{x:.2f}' for x in load_after)} after"
    )
    counts = kb.graph.counts()
    meta = [
        f"Machine shared with other jobs: {loads}.",
        f"KB {Path(args.kb).name} ({counts['entities']} entities, {counts['triples']} triples); "
        f"frontier CSR built once in {build * 1e3:.0f} ms.",
    ]
    head = header(TITLE, "nice -n 10 " + command(args, ["--limit", str(args.limit)]), provenance(), meta)
    sys.stdout.write("\n".join(head) + "\n" + body + "\n")
    if args.out:
        write_page(Path(args.out), [*head, REPORT.format(table=body)])
    return 0


TITLE = "HybGRAG's ego-graph: node-at-a-time BFS vs vectorised frontier"
REPORT = """What is timed: one `ego_graph` call per question and setting (seed = the question's topic entity
linked as HybGRAG links it), the former store BFS (`benchmarks/speed/ego.py` `baseline_ego_graph`: one
`edge_ids` call per visited node, with an `np.isin` when relations are given, and a `Triple` per
edge visit) against the store's current
`InMemoryGraphStore.ego_graph` (one CSR gather per level over the whole frontier, relation filter
as a boolean mask, `Triple`s made once for the edges kept), alternating which runs first.
*router*: radius = hop count along the gold relation path (what a correct router action asks);
*paper*: radius 2 along every relation. *identical subgraph*: same seeds, distances, parents and
triples in the same order; *same top-10*: HybGRAG's candidate ranking
(`agents.hybgrag.retrieval.rank_entities`) gives the same ten entities in the same order.

{table}
"""
