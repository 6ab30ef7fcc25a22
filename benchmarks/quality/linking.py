"""``python -m benchmarks linking``: fusion's topic linking with and without the exact-title rule.

The questions are MetaQA 1-hop dev questions. *Near-namesake* questions are those whose topic
entity ("Big") is, as whole words, a part of another KB title ("The Big Picture", "Big Fish");
``--all-limit`` more questions (the first N of a seeded shuffle of the whole 1-hop dev set, or
every one with ``--all-limit 0``) show what the rule does elsewhere. Fusion (default settings,
the full MetaQA KB) answers every question twice in this one process: *before* with the rule
switched off (:func:`hybridrag.tools.names.prefer_exact` made to keep every id), *after* as
shipped. Topic Hit@1 is whether fusion's first seed entity is the bracketed topic; answer Hit@1
is :func:`hybridrag.evals.metrics.answer_hits_at_1`. Test splits are never read.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from unittest import mock

from benchmarks.common import DOCS, arg, command
from hybridrag.evals.datasets import Question, load_metaqa
from hybridrag.evals.hybrid import full_kb, metaqa_dir
from hybridrag.evals.markdown import header, table
from hybridrag.evals.metrics import answer_hits_at_1
from hybridrag.kb.base import KnowledgeBase, open_kb
from hybridrag.tools.text import WORD

OPTIONS = [
    arg("--limit", type=int, default=0, help="near-namesake questions to run (0: all of them)"),
    arg("--all-limit", type=int, default=1000, help="questions of the whole 1-hop dev set (0: all 9,992)"),
    arg("--out", type=Path, default=DOCS / "benchmarks_linking.md", help="the page to write"),
]


SECONDS = (
    "The seconds are each arm's wall time on a shared 2-core machine (other jobs running; the first arm also "
    "opens the KB and warms its caches): not a speed comparison."
)


def _grams(name: str) -> set[str]:
    words = [w.casefold() for w in WORD.findall(name)]
    return {" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)}


def inside_other_titles(kb: KnowledgeBase) -> set[str]:
    """Case-folded word runs that are a proper part of some entity's name (the candidates for a near-namesake)."""
    parts: set[str] = set()
    for entity in kb.graph.entities:  # the in-memory store's list
        whole = " ".join(w.casefold() for w in WORD.findall(entity.name))
        parts |= _grams(entity.name) - {whole}
    return parts


def near_namesake_questions(kb: KnowledgeBase, questions: list[Question]) -> list[Question]:
    """The questions whose topic, as whole words, is part of another entity's name."""
    parts = inside_other_titles(kb)
    return [q for q in questions if q.topic and " ".join(w.casefold() for w in WORD.findall(q.topic)) in parts]


def _keep_all(kb: KnowledgeBase, question: str, ids: list[str], named: list[str]) -> list[str]:
    return ids


def score(questions: list[Question], kb_dir: Path, exact_rule: bool) -> dict:
    """Topic and answer Hit@1 of fusion over ``questions``, with or without the exact-title rule."""
    from hybridrag.graphs import context_for, get_graph

    graph, ctx = get_graph("fusion"), context_for("fusion", kb=str(kb_dir))
    topic = answer = 0
    patch = nullcontext() if exact_rule else mock.patch("hybridrag.agents.fusion.branches.prefer_exact", _keep_all)
    start = time.perf_counter()
    with patch:
        for q in questions:
            out = graph.invoke({"question": q.question}, context=ctx)
            seeds = next((s.get("seeds", []) for s in out["trace"] if s.get("node") == "retrieve_vectors"), [])
            topic += bool(seeds) and seeds[0].casefold() == (q.topic or "").casefold()
            answer += answer_hits_at_1(out["answer"], q.answers) > 0
    n = max(len(questions), 1)
    return {"n": len(questions), "topic": topic / n, "answer": answer / n, "s": time.perf_counter() - start}


def _rows(label: str, questions: list[Question], kb_dir: Path) -> list[list[object]]:
    rows = []
    for arm, rule in (("before (no exact-title rule)", False), ("after (as shipped)", True)):
        sys.stderr.write(f"[linking] {label}: {arm}, {len(questions)} questions\n")
        s = score(questions, kb_dir, rule)
        rows.append([label, arm, s["n"], f"{s['topic']:.3f}", f"{s['answer']:.3f}", f"{s['s']:.0f}"])
    return rows


def run(args: argparse.Namespace) -> int:
    """Select the questions, run both arms on each set, write the page."""
    kb_dir = full_kb(progress=True)
    kb = open_kb(str(kb_dir))
    dev = load_metaqa(metaqa_dir() / "dev_1hop.txt", prefix="metaqa-1hop")
    near = near_namesake_questions(kb, dev)
    picked = near[: args.limit] if args.limit else near
    rest = random.Random(0).sample(dev, len(dev))
    rest = rest[: args.all_limit] if args.all_limit else rest
    rows = _rows(f"near-namesake topics ({len(picked)} of {len(near)})", picked, kb_dir)
    rows += _rows(f"whole 1-hop dev ({len(rest)} of {len(dev)})", rest, kb_dir)
    lines = header("Entity linking: the exact title first", command(args))
    lines += [__doc__.split("\n\n", 1)[1].strip().replace("``", "`"), ""]
    lines += table(["questions", "linker", "n", "topic Hit@1", "fusion answer Hit@1", "seconds"], rows)
    examples = ", ".join(f"{q.topic!r}" for q in near[:8])
    lines += ["", f"Near-namesake topics, the first in dev order: {examples}.", "", SECONDS, ""]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines), encoding="utf-8")
    sys.stderr.write(f"[linking] wrote {args.out}\n")
    return 0
