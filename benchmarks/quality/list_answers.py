"""``python -m benchmarks list-answers``: does fusion's one-string answer hold the whole list a question asks for?

The questions are MetaQA 1-hop dev questions, the first ``--limit`` of a seeded shuffle of those
with at least two gold answers (*multi-answer*), and as many with exactly one (*single-answer*,
where a list is a wrong answer). Fusion (default settings, the full MetaQA KB) answers every
question twice in this one process: *before* with the list rule switched off
(:func:`hybridrag.tools.list_answer.asks_for_list` made to say no), *after* as shipped. The
answer is split at "; " (:func:`hybridrag.tools.list_answer.split`). *Full list*: every gold
answer is among them; *gold recall*: the mean share of the gold answers among them;
*precision*: the mean share of them that are gold; *answer Hit@1*: some gold answer is a whole
phrase of the answer (:func:`hybridrag.evals.metrics.answer_hits_at_1`). *Asked as a list*: the
questions the rule reads as list questions. Fusion returns ``top_k`` = 10 items, so a list holds
at most 10 answers. *s*: the arm's wall seconds on a shared machine (no speed comparison).
Test splits are never read.
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
from hybridrag.evals.metrics import answer_hits_at_1, normalize_answer
from hybridrag.tools.list_answer import asks_for_list, split

OPTIONS = [
    arg("--limit", type=int, default=200, help="multi-answer questions (and as many single-answer ones)"),
    arg("--out", type=Path, default=DOCS / "benchmarks_list_answers.md", help="the page to write"),
]


def score(questions: list[Question], kb_dir: Path, rule: bool) -> dict:
    """Full-list share, gold recall, precision and answer Hit@1 of fusion over ``questions``."""
    from hybridrag.graphs import context_for, get_graph

    graph, ctx = get_graph("fusion"), context_for("fusion", kb=str(kb_dir))
    full = recall = precision = hit = 0.0
    patch = nullcontext() if rule else mock.patch("hybridrag.agents.fusion.answer.asks_for_list", lambda q: False)
    start = time.perf_counter()
    with patch:
        for q in questions:
            answer = graph.invoke({"question": q.question}, context=ctx)["answer"]
            got = {normalize_answer(a) for a in split(answer)}
            gold = {normalize_answer(g) for g in q.answers}
            full += gold <= got
            recall += len(gold & got) / len(gold)
            precision += len(gold & got) / len(got) if got else 0.0
            hit += answer_hits_at_1(answer, q.answers) > 0
    n = max(len(questions), 1)
    return {
        "full": full / n,
        "recall": recall / n,
        "precision": precision / n,
        "hit": hit / n,
        "s": time.perf_counter() - start,
    }


def _rows(label: str, questions: list[Question], kb_dir: Path) -> list[list[object]]:
    asked = sum(asks_for_list(q.question) for q in questions)
    rows = []
    for arm, rule in (("before (no list rule)", False), ("after (as shipped)", True)):
        sys.stderr.write(f"[list-answers] {label}: {arm}, {len(questions)} questions\n")
        s = score(questions, kb_dir, rule)
        rows.append(
            [
                label,
                arm,
                len(questions),
                f"{asked}",
                f"{s['full']:.3f}",
                f"{s['recall']:.3f}",
                f"{s['precision']:.3f}",
                f"{s['hit']:.3f}",
                f"{s['s']:.0f}",
            ]
        )
    return rows


def run(args: argparse.Namespace) -> int:
    """Pick the questions, run both arms on each set, write the page."""
    kb_dir = full_kb(progress=True)
    dev = random.Random(0).sample(load := load_metaqa(metaqa_dir() / "dev_1hop.txt", prefix="metaqa-1hop"), len(load))
    multi = [q for q in dev if len(set(q.answers)) >= 2][: args.limit]
    single = [q for q in dev if len(set(q.answers)) == 1][: args.limit]
    rows = _rows("multi-answer", multi, kb_dir) + _rows("single-answer", single, kb_dir)
    lines = header("List questions: the whole list in one answer", command(args))
    lines += ["", __doc__.split("\n\n", 1)[1].strip(), ""]
    cols = ["questions", "rule", "n", "asked as a list", "full list", "gold recall", "precision", "answer Hit@1", "s"]
    lines += table(cols, rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    sys.stderr.write(f"[list-answers] wrote {args.out}\n")
    return 0
