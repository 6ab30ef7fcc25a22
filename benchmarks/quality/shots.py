"""Does the nearest solved example carry the question's relation path? Raw vs entity-masked.

MetaQA dev, per hop count: the question file is shuffled (``dev_1hop.txt`` is sorted by
question type), the first ``--bank`` questions build the bank with the real builder
(:func:`agents.shots.solve.solve_all`: topic from the brackets, relation path found in the KB
from the gold answers) and the next ``--n`` questions, never in the bank, are asked. A
question counts when its top neighbour's relations equal the gold path of its question type
(:func:`hybridrag.evals.metaqa.relation_path`). Rows:

- raw: bank questions and the asked question embedded as written;
- masked: topic replaced by ``<E>`` in the bank; the asked question (no brackets: the text a
  method gets) goes through :meth:`agents.shots.Bank.nearest` as a method calls it (mentions
  found and masked, examples about the same kind of topic);
- masked, gold bank paths: as masked, the neighbour's path taken from its question type instead
  of the builder (retrieval alone, without the builder's path errors);
- schema only: the masked asked question against examples synthesized from the KB schema
  (:func:`agents.shots.synthesize`, what a KB without a built bank uses).

Also reported: the builder's path agreeing with the gold path, and the asked question's mask
equal to masking its gold topic. ``python -m benchmarks shots`` rewrites the table in docs/bank.md.
"""

from __future__ import annotations

import argparse
import datetime
import random
import sys
import time

import numpy as np

from benchmarks.common import DOCS, arg, command
from hybridrag.agents.shots import mask_question, synthesize
from hybridrag.agents.shots.bank import Bank
from hybridrag.agents.shots.mask import mask_name
from hybridrag.agents.shots.solve import solve_all
from hybridrag.agents.shots.walk import Walker
from hybridrag.evals.datasets import load_metaqa
from hybridrag.evals.hybrid import full_kb, metaqa_dir
from hybridrag.evals.markdown import commit, write_between
from hybridrag.evals.metaqa import relation_path
from hybridrag.kb.base import open_kb
from hybridrag.kb.embeddings import embed_matrix

DOC = DOCS / "bank.md"
START, END = "<!-- bench_shots:start -->", "<!-- bench_shots:end -->"


def _split(hops: int, bank: int, n: int, seed: int):
    qs = load_metaqa(metaqa_dir() / f"dev_{hops}hop.txt")
    order = list(range(len(qs)))
    random.Random(seed).shuffle(order)
    shuffled = [qs[i] for i in order]
    return shuffled[:bank], shuffled[bank : bank + n]


def _top1(mat: np.ndarray, queries: np.ndarray) -> np.ndarray:
    return np.argmax(queries @ mat.T, axis=1)


def _share(hits) -> str:
    hits = list(hits)
    return f"{100 * sum(hits) / max(len(hits), 1):.1f}%"


def measure(bank_size: int, n: int, seed: int) -> tuple[list[list[str]], dict]:
    """Table rows (one per hop) and run facts."""
    t0 = time.perf_counter()
    kb = open_kb(full_kb())
    walker = Walker(kb.graph)
    splits = {h: _split(h, bank_size, n, seed) for h in (1, 2, 3)}
    examples, agree, solved, skipped, gold_of = [], {}, 0, 0, {}
    for h, (bank_qs, _) in splits.items():
        got, tally = solve_all(kb, bank_qs, "run", True, walker)
        gold = {q.question: tuple(relation_path(q.qtype)) for q in bank_qs}
        gold_of.update(gold)
        agree[h] = _share(e.relations == gold[e.question] for e in got)
        examples += got
        solved, skipped = solved + tally.solved, skipped + sum(tally.skipped.values())
    bank = Bank(kb, examples)
    bank.vectors(progress=True)
    raw_mat = embed_matrix(kb.embeddings, [e.question for e in bank.examples], progress=True)
    schema = Bank(kb, synthesize(kb, walker=walker, seed=seed))
    schema.vectors(progress=True)
    rows = []
    for h, (_, asked) in splits.items():
        gold = [tuple(relation_path(q.qtype)) for q in asked]
        masked_q = [mask_question(q.question, kb) for q in asked]
        raw_v = embed_matrix(kb.embeddings, [q.question for q in asked])
        paths = [e.relations for e in bank.examples]
        raw = [paths[i] == g for i, g in zip(_top1(raw_mat, raw_v), gold, strict=True)]
        near = [bank.nearest(q.question, 1) for q in asked]  # what a method gets
        masked = [bool(n) and n[0].relations == g for n, g in zip(near, gold, strict=True)]
        masked_gold = [bool(n) and gold_of[n[0].question] == g for n, g in zip(near, gold, strict=True)]
        synth = [
            bool(n) and n[0].relations == g
            for n, g in zip((schema.nearest(q.question, 1) for q in asked), gold, strict=True)
        ]
        mask_ok = [m == mask_name(q.question, [q.topic]) for m, q in zip(masked_q, asked, strict=True)]
        rows.append(
            [
                f"{h}-hop",
                str(len(asked)),
                _share(raw),
                _share(masked),
                _share(masked_gold),
                _share(synth),
                _share(mask_ok),
                agree[h],
            ]
        )
    facts = {
        "bank": len(bank),
        "solved": solved,
        "skipped": skipped,
        "schema": len(schema),
        "seconds": round(time.perf_counter() - t0),
    }
    return rows, facts


def render(rows: list[list[str]], facts: dict, command: str) -> str:
    """The markdown block written between the markers of docs/bank.md."""
    head = [
        "questions",
        "n",
        "top-1 path, raw",
        "top-1 path, masked",
        "top-1 gold path, masked",
        "top-1 path, schema-only bank",
        "mask = gold topic mask",
        "builder path = gold path",
    ]
    lines = [
        f"`{command}` — {datetime.date.today().isoformat()}, commit {commit()}, KB metaqa-full, "
        f"bank of {facts['bank']} solved dev questions ({facts['skipped']} skipped), "
        f"schema-only bank of {facts['schema']} synthesized examples, "
        f"{facts['seconds']} s on 2 cores.",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


OPTIONS = [
    arg("--bank", type=int, default=1000, help="dev questions per hop count in the bank"),
    arg("--n", type=int, default=300, help="asked questions per hop count (never in the bank)"),
    arg("--seed", type=int, default=0),
    arg("--no-doc", action="store_true", help="print only; leave docs/bank.md alone"),
]


def run(args: argparse.Namespace) -> int:
    """Run the benchmark, print the table, rewrite docs/bank.md's table (unless --no-doc)."""
    rows, facts = measure(args.bank, args.n, args.seed)
    block = render(rows, facts, command(args))
    sys.stdout.write(block + "\n")
    if not args.no_doc:
        write_between(DOC, START, END, block)
    return 0
