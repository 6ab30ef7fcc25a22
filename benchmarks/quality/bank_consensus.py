"""``python -m benchmarks bank-consensus``: how right the look-alike vote of a bank build was.

For each MetaQA bank KB of :mod:`benchmarks.smollm.bank` (version 2), the solved examples kept in
``bank.jsonl`` and those left out in ``bank.outliers.jsonl`` are checked against the relation
path of their MetaQA question type (``dev_<k>hop_qtype.txt``, :func:`hybridrag.evals.metaqa.relation_path`):
how many of each have the gold path. Schema-synthesized examples have no question type and are
not counted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from hybridrag.evals.hybrid import metaqa_dir
from hybridrag.evals.metaqa import relation_path


def question_types() -> dict[str, str]:
    """MetaQA dev question (brackets removed) → its question type."""
    out = {}
    for hops in (1, 2, 3):
        qs = (metaqa_dir() / f"dev_{hops}hop.txt").read_text(encoding="utf-8").splitlines()
        ts = (metaqa_dir() / f"dev_{hops}hop_qtype.txt").read_text(encoding="utf-8").splitlines()
        out.update(
            {
                q.split("\t")[0].replace("[", "").replace("]", "").strip(): t.strip()
                for q, t in zip(qs, ts, strict=False)
            }
        )
    return out


def tally(path: Path, types: dict[str, str]) -> Counter:
    """Counts of ``right`` / ``wrong`` gold paths among the typed, solved examples of a bank file."""
    counts: Counter = Counter()
    if not path.exists():
        return counts
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        qtype = types.get(row["question"])
        if row.get("source") != "schema" and qtype:
            counts["right" if list(row["relations"]) == relation_path(qtype) else "wrong"] += 1
    return counts


OPTIONS: list = []


def run(args: argparse.Namespace) -> int:
    """Print one line per bank KB and file."""
    from benchmarks.smollm.bank import bank_kb

    types = question_types()
    for dataset in ("metaqa-1hop", "metaqa-hybrid-50"):
        kb = bank_kb(dataset)
        for name in ("bank.jsonl", "bank.outliers.jsonl"):
            c = tally(kb / name, types)
            sys.stdout.write(f"{kb.name} {name}: gold path {c['right']}, other path {c['wrong']}\n")
    return 0
