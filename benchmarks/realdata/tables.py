"""The real-data page's tables, computed from finished cells (:class:`benchmarks.realdata.cells.Result`).

- AdvHotpotQA: supporting-document recall@2/5/10, both supporting documents in the top 10, answer
  EM / F1, misled rate, *gold shown* (the share of questions whose evidence states the gold answer
  in a paragraph that is not planted: what the answer role could read), *gold in answer prompt* (stand-in
  cells: an answer prompt showed a supported gold answer, ``oracle_answer_shown.json``), LLM calls and rounds per
  question (rounds: the largest ``iteration`` / ``round`` of the record's trace), p50 seconds;
- where the planted paragraphs land (:func:`benchmarks.realdata.planted.planted_row`);
- a score per hop for the MetaQA tables (Hit@1 of the ranked list, or answer Hits@1).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from benchmarks.realdata.cells import Result
from benchmarks.realdata.planted import planted_row
from hybridrag.evals.documents_qa import states
from hybridrag.evals.metrics import answer_hits_at_1

ADV_HEAD = (
    "| method | LLM | n | recall@2 | recall@5 | recall@10 | both@10 | EM | F1 | misled | gold shown "
    "| gold in answer prompt | LLM calls / q | rounds / q | p50 s |\n" + "|---" * 15 + "|"
)
PLANTED_KEYS = (
    "planted first",
    "planted above a supporting",
    "planted above its original",
    "planted in top 5",
    "planted in top 10",
)


def _f(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def rounds(record: dict) -> int:
    """The record's loop count: the largest iteration or round its trace names (1 without one)."""
    seen = [t.get("iteration") or t.get("round") or 1 for t in record.get("trace") or [] if isinstance(t, dict)]
    return max([int(s) for s in seen if isinstance(s, int | float)] or [1])


def gold_shown(record: dict, texts: dict[str, str]) -> bool:
    """Whether the record's evidence states a gold answer outside the question's planted documents."""
    gold = record.get("gold") or {}
    fake = {texts[d] for d in gold.get("planted") or () if d in texts}
    shown = [str(e.get("text") or "") for e in record.get("evidence") or [] if isinstance(e, dict)]
    real = [t for t in shown if t not in fake]
    return any(states(a, real) for a in gold.get("answers") or ())


def adv_row(label: str, llm: str, r: Result, texts: dict[str, str]) -> str:
    """One AdvHotpotQA row (a failed cell says so)."""
    if r.failed:
        return f"| {label} | {llm} | – | failed: {r.failed[:120]} |" + " |" * 11
    m, usage, recs = r.summary.get("metrics", {}), r.summary.get("usage", {}), r.records
    lat = (usage.get("latency_seconds") or {}).get("total") or {}
    calls = usage.get("llm_calls_per_question")
    cells = [
        label,
        llm,
        str(r.summary.get("n", 0)),
        *(_f(m.get(f"support_recall@{k}")) for k in (2, 5, 10)),
        _f(m.get("support_all@10")),
        _f(m.get("answer_em")),
        _f(m.get("answer_f1")),
        _f(m.get("misled")),
        _f(statistics.mean(gold_shown(x, texts) for x in recs) if recs else None),
        _f(statistics.mean(bool(r.answer_shown.get(x["id"])) for x in recs) if recs and r.answer_shown else None),
        _f(calls, 2) if llm != "none" else "0",
        _f(statistics.mean(rounds(x) for x in recs), 2) if recs and llm != "none" else "–",
        _f(lat.get("p50"), 2),
    ]
    return "| " + " | ".join(cells) + " |"


def planted_cells(label: str, r: Result) -> list[str]:
    """One row of where the planted paragraphs land: the label and the shares."""
    if r.failed or not r.records:
        return [label, *("–" for _ in PLANTED_KEYS)]
    row = planted_row(r.records)
    return [label, *(_f(row[k]) for k in PLANTED_KEYS)]


def score(r: Result, key: str) -> float | None:
    """The cell's score: ``hit@1`` of the ranked list or ``answer_hits@1`` (None when it failed)."""
    if r.failed or not r.records:
        return None
    if key == "hit@1":
        return (r.summary.get("metrics") or {}).get("hit@1")
    hits = [answer_hits_at_1(x.get("answer") or "", (x.get("gold") or {}).get("answers") or []) for x in r.records]
    return statistics.mean(hits)


def pair(a: Result, b: Result, key: str, digits: int = 2) -> str:
    """``a / b`` scores of two cells on the same questions."""
    return f"{_f(score(a, key), digits)} / {_f(score(b, key), digits)}"


def table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])
