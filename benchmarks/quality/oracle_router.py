"""``python -m benchmarks oracle-router``: the ceiling of HybGRAG's retrieval machinery on MetaQA.

The oracle takes the gold topic entity from the question's [bracket] and the relation path
from its question type (``actor_to_movie_to_director`` → starred_actors, directed_by), then
runs only HybGRAG's hybrid retrieval module: the undirected ego-graph of the topic entity
along the path's relations with radius = number of hops, candidates ranked by similarity to
the question. It reports Hit@1/Hit@10, how often a gold answer is among the candidates at
all, and the reachable-answer ceiling (a gold answer reachable by following the relation
path hop by hop in the KB graph).

    python -m benchmarks oracle-router --hops 1 2 3 --limit 500 --kb ~/.cache/hybridrag/metaqa-full
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import arg, command
from hybridrag.agents.hybgrag.retrieval import hybrid_retrieve, link_entity
from hybridrag.evals.datasets import Question, load_metaqa
from hybridrag.evals.hybrid import datasets_root, metaqa_kb_dir
from hybridrag.evals.metaqa import TYPE_OF, relation_path
from hybridrag.evals.metrics import hit_at_k
from hybridrag.kb.base import KnowledgeBase, open_kb


def reachable(kb: KnowledgeBase, topic_id: str, path: list[str]) -> set[str]:
    """Entities reached by following ``path`` hop by hop (either direction), topic excluded."""
    frontier = {topic_id}
    for rel in path:
        triples = kb.graph.neighbors(frontier, relations=[rel], direction="both")
        frontier = {t.tail if t.head in frontier else t.head for t in triples}
    return frontier - {topic_id}


@dataclass
class Tally:
    """Per-hop sums of the oracle measurement."""

    n: int = 0
    hit1: float = 0.0
    hit10: float = 0.0
    in_candidates: int = 0
    ceiling: int = 0
    unlinked: int = 0
    candidates: int = 0
    seconds: float = 0.0
    qtypes: dict[str, int] = field(default_factory=dict)

    def row(self, hops: int, radius: str) -> str:
        """A markdown table row."""
        n = max(self.n, 1)
        return (
            f"| {hops} | {self.n} | {radius} | {self.hit1 / n:.3f} | {self.hit10 / n:.3f} | "
            f"{self.in_candidates / n:.3f} | {self.ceiling / n:.3f} | {self.candidates / n:.0f} | "
            f"{self.unlinked} | {self.seconds / n:.2f} |"
        )


def measure(kb: KnowledgeBase, q: Question, tally: Tally, radius: int | None = None, k: int = 10) -> None:
    """Run the oracle action for one question and add its scores to ``tally``."""
    path = relation_path(q.qtype or "")
    gold = {a.lower() for a in q.answers}
    tally.n += 1
    tally.qtypes[q.qtype or "?"] = tally.qtypes.get(q.qtype or "?", 0) + 1
    topic = link_entity(kb, q.topic or "", TYPE_OF.get((q.qtype or "").split("_to_")[0]))
    if topic is None:
        tally.unlinked += 1
        return
    t0 = time.perf_counter()
    res = hybrid_retrieve(kb, q.question, [topic.id], list(dict.fromkeys(path)), radius or len(path), k)
    tally.seconds += time.perf_counter() - t0
    names = [r.name.lower() for r in res.references]
    tally.hit1 += hit_at_k(names, gold, 1)
    tally.hit10 += hit_at_k(names, gold, 10)
    tally.candidates += res.intersection or 0
    tally.ceiling += bool({kb.name(e).lower() for e in reachable(kb, topic.id, path)} & gold)
    ego = kb.graph.ego_graph([topic.id], radius=radius or len(path), relations=list(dict.fromkeys(path)))
    tally.in_candidates += bool({kb.name(e).lower() for e in ego.distance if e != topic.id} & gold)


def measure_hops(kb_dir: str, hops: list[int], limit: int, data_dir: Path, radius: int | None = None) -> list[str]:
    """Measure each hop count on the first ``limit`` dev questions; return markdown table rows."""
    kb = open_kb(kb_dir)
    rows = []
    for h in hops:
        questions = load_metaqa(data_dir / f"dev_{h}hop.txt")[:limit]
        tally = Tally()
        for q in questions:
            measure(kb, q, tally, radius)
        rows.append(tally.row(h, str(radius) if radius else "= hops"))
        print(rows[-1], file=sys.stderr)  # noqa: T201 - progress of a long command
    return rows


HEADER = (
    "| hops | questions | radius | Hit@1 | Hit@10 | gold in candidates | reachable-answer ceiling | "
    "mean candidates | topic not linked | s/question |\n|---|---|---|---|---|---|---|---|---|---|"
)


OPTIONS = [
    arg("--hops", type=int, nargs="+", default=[1, 2, 3]),
    arg("--limit", type=int, default=500),
    arg("--kb", default=str(metaqa_kb_dir())),
    arg("--radius", type=int, default=None, help="fixed ego-graph radius (default: hops)"),
    arg("--data", default=str(datasets_root() / "metaqa")),
    arg("--out", default="", help="also write the table here"),
]


def run(args: argparse.Namespace) -> int:
    """Measure, print the table and write it to ``--out`` when given."""
    rows = measure_hops(args.kb, args.hops, args.limit, Path(args.data), args.radius)
    report = f"{HEADER}\n" + "\n".join(rows) + f"\n\nCommand: `{command(args)}`\n"
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(report, encoding="utf-8")
    sys.stdout.write(report + "\n")
    return 0
