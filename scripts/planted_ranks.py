"""Where the planted documents of a documents-QA run land: one markdown row per run folder.

Usage: ``python scripts/planted_ranks.py RUN_DIR [RUN_DIR ...]`` where each folder holds the
``records.jsonl`` of a ``hybridrag eval`` run on AdvHotpotQA (or any documents KB with gold
``supporting`` and ``planted`` documents). Per question, the documents are those of the evidence,
best first (:func:`hybridrag.evals.documents_qa.evidence_documents`). Columns:

- planted first: the top document is a planted one;
- planted above a supporting: the best-ranked planted document ranks above a supporting document
  of the question (a supporting document missing from the list counts as ranked below it);
- planted above its original: a planted document ranks above the supporting document it imitates
  (the one whose file shares its title; a missing original counts as ranked below it);
- planted in top 5 / top 10: planted documents among the first 5 / 10, mean per question;
- questions: those with both supporting and planted documents in their gold.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from hybridrag.evals.documents_qa import evidence_documents

MISSING = sys.maxsize  # the rank of a document the run did not return


def _title(document: str) -> str:
    """The title part of a corpus file name ``<Title>_<10 hex>.txt``."""
    return document.rsplit("_", 1)[0]


def positions(record: dict) -> tuple[list[int], list[int], list[int]] | None:
    """Ranks (0 = first, :data:`MISSING` = not returned) of the supporting and planted documents and originals.

    The third list holds, for each planted document, the rank of the supporting document it imitates
    (:data:`MISSING` when none of them shares its title). None when the record's gold has no
    supporting or no planted document.
    """
    gold = record.get("gold") or {}
    supporting, planted = gold.get("supporting") or [], gold.get("planted") or []
    if not supporting or not planted:
        return None
    docs = evidence_documents(record.get("evidence") or [])
    rank = {d: i for i, d in enumerate(docs)}
    by_title = {_title(d): rank.get(d, MISSING) for d in supporting}
    originals = [by_title.get(_title(d), MISSING) for d in planted]
    return [rank.get(d, MISSING) for d in supporting], [rank.get(d, MISSING) for d in planted], originals


def planted_row(records: list[dict]) -> dict[str, float]:
    """The shares of the module docstring over ``records``, and the number of questions."""
    rows = [p for p in map(positions, records) if p is not None]
    n = len(rows) or 1
    first = above = original = top5 = top10 = 0.0
    for supporting, planted, originals in rows:
        best = min(planted)
        first += best == 0
        above += best < max(supporting)
        original += any(r < MISSING and r < o for r, o in zip(planted, originals, strict=True))
        top5 += sum(r < 5 for r in planted)
        top10 += sum(r < 10 for r in planted)
    return {
        "planted first": first / n,
        "planted above a supporting": above / n,
        "planted above its original": original / n,
        "planted in top 5": top5 / n,
        "planted in top 10": top10 / n,
        "questions": float(len(rows)),
    }


def main(argv: list[str]) -> int:
    """Print the header and one row per run folder; returns the exit status."""
    if not argv:
        print(__doc__)
        return 2
    keys = list(planted_row([]))
    print("| run | " + " | ".join(keys) + " |")
    print("|---" * (len(keys) + 1) + "|")
    for folder in argv:
        lines = (Path(folder) / "records.jsonl").read_text(encoding="utf-8").splitlines()
        row = planted_row([json.loads(line) for line in lines if line.strip()])
        cells = [f"{row[k]:.0f}" if k == "questions" else f"{row[k]:.3f}" for k in keys]
        print(f"| {folder} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
