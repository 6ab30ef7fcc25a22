"""Where the planted documents of a documents-QA run land (used by the suite and ``scripts/planted_ranks.py``).

Per question, the documents are the record's, best first
(:func:`hybridrag.evals.documents_qa.record_documents`). Shares:

- planted first: the top document is a planted one;
- planted above a supporting: the best-ranked planted document ranks above a supporting document
  of the question (a supporting document missing from the list counts as ranked below it);
- planted above its original: a planted document ranks above the supporting document it imitates
  (the one whose file shares its title; a missing original counts as ranked below it);
- planted in top 5 / top 10: planted documents among the first 5 / 10, mean per question;
- questions: those with both supporting and planted documents in their gold.
"""

from __future__ import annotations

import sys

from hybridrag.evals.documents_qa import record_documents

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
    rank = {d: i for i, d in enumerate(record_documents(record))}
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
