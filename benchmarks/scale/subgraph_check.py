"""Does HydraRAG's path search leave the question subgraph E_q? And what does materialising E_q cost?

``python -m benchmarks.scale.subgraph_check --kb DIR --questions N``: N MetaQA dev questions per hop
count (1, 2, 3; the scale benchmark's seeded sample at 1×), each explored as the KG module runs it
(:func:`agents.hydrarag.kg.explore_kg`, gold topic and skyline as in :mod:`benchmarks.speed.modules_methods`).
For every question it counts the entities of the candidate paths outside E_q (every entity within
``max_depth`` hops of the topic entities, :func:`agents.hydrarag.kg.detect_subgraph`) and times the
search and the materialised E_q on the in-memory store. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchmarks.scale.modules import cases
from hybridrag.agents.hydrarag import analysis, kg
from hybridrag.agents.hydrarag.context import HydraRAGContext
from hybridrag.evals.hybrid import datasets_root
from hybridrag.kb.base import KnowledgeBase


def check(kb: KnowledgeBase, per_hop: int) -> dict:
    """Per question: entities outside E_q, |E_q|, search ms, E_q ms; summed up."""
    ctx = HydraRAGContext()
    rows = []
    for c in cases(datasets_root(), per_hop, 1):
        found = analysis.detect_sources(kb, [c.rec.topic], ctx.link_threshold, False)
        sky = c.rec.skyline()
        chain = analysis.chain(analysis.reorder(found["topics"], sky), sky, c.question, found["doc_topics"])
        depth = max(1, min(c.rec.hops, ctx.max_depth))
        probe = analysis.probe("initial", 1, ["kg"], depth, [chain], floor=ctx.length_floor)
        t = time.perf_counter()
        cands, _ = kg.explore_kg(kb, c.question, probe, found["topic_keys"], ctx.pruning())
        search_ms = (time.perf_counter() - t) * 1000
        seeds = list(dict.fromkeys(chain["topics"]))
        t = time.perf_counter()
        whole = set(kg.detect_subgraph(kb, seeds, ctx.max_depth))
        eq_ms = (time.perf_counter() - t) * 1000
        on_paths = {k[3:] for cand in cands for k in cand["keys"] if k.startswith("id:")}
        rows.append((c.rec.hops, len(on_paths - whole), len(on_paths), len(whole), search_ms, eq_ms))
    p50 = lambda xs: round(statistics.median(xs), 2)  # noqa: E731
    return {
        "questions": len(rows),
        "per_hop": {h: sum(r[0] == h for r in rows) for h in (1, 2, 3)},
        "entities_on_paths": sum(r[2] for r in rows),
        "entities_on_paths_outside_E_q": sum(r[1] for r in rows),
        "questions_with_an_entity_outside": sum(r[1] > 0 for r in rows),
        "E_q_size_min_p50_max": [min(r[3] for r in rows), p50([r[3] for r in rows]), max(r[3] for r in rows)],
        "search_ms_p50": p50([r[4] for r in rows]),
        "E_q_in_memory_ms_p50": p50([r[5] for r in rows]),
    }


def main() -> None:
    """Parse the options, run the check, print its JSON line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kb", type=Path, required=True, help="the MetaQA KB (1×)")
    ap.add_argument("--questions", type=int, default=100, help="dev questions per hop count")
    args = ap.parse_args()
    out = check(KnowledgeBase(args.kb), args.questions)
    print(json.dumps(out))  # noqa: T201 - the benchmark's output


if __name__ == "__main__":
    main()
