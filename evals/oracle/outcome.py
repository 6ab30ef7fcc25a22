"""Repairs counted by outcome: injected errors that cost the single pass its answer.

The decision-level count (:mod:`evals.oracle.noise`) asks whether a later decision of a noisy
question was told about its error. A method whose first round absorbs an error on its own (for
example HydraRAG, whose other sources still reach the answer) makes no later decision and so
"repairs" nothing there, although nothing needed repairing. This module counts the other way,
per question, on the same drawn errors:

- *harmful*: the error was applied, the gold answer is reachable, and the single pass
  (``max_iterations=1``) got the question wrong;
- *rescued*: of those, the questions the run with the loop got right.

``rescued / harmful`` is the share of the errors that did harm which the loop undid.
"""

from __future__ import annotations

import json
from pathlib import Path

from hybridrag.evals.metrics import answer_hits_at_1
from hybridrag.evals.summary import read_records


def right(record: dict, key: str) -> bool:
    """Whether a record scores on the method's metric (``hit@1`` or ``answer_hits@1``)."""
    if key == "hit@1":
        relevant = record.get("relevant") or []
        return bool(relevant and relevant[0])
    answers = (record.get("gold") or {}).get("answers") or []
    return answer_hits_at_1(record.get("answer") or "", answers) > 0


def applied_ids(run_dir: Path) -> set[str]:
    """Ids of the questions whose injected error a decision carried."""
    path = run_dir / "oracle_noise.json"
    if not path.exists():
        return set()
    entries = json.loads(path.read_text(encoding="utf-8")).get("entries", [])
    return {e["id"] for e in entries if e.get("applied")}


def outcome_repairs(loop_dir: Path, single_dir: Path, key: str) -> dict:
    """``{"harmful": n, "rescued": m, "share": m / n or None}`` over the two runs' common questions."""
    records = {
        p: {r["id"]: r for r in read_records(p / "records.jsonl")}
        for p in (loop_dir, single_dir)
        if (p / "records.jsonl").exists()
    }
    if len(records) < 2:
        return {"harmful": 0, "rescued": 0, "share": None}
    loop, single = records[loop_dir], records[single_dir]
    harmful = [
        i
        for i in sorted(applied_ids(loop_dir) | applied_ids(single_dir))
        if i in loop and i in single and single[i].get("reachable") and not right(single[i], key)
    ]
    rescued = [i for i in harmful if right(loop[i], key)]
    return {"harmful": len(harmful), "rescued": len(rescued), "share": len(rescued) / len(harmful) if harmful else None}
