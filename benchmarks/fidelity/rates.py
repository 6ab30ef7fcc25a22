"""``python -m benchmarks realistic-rates``: SmolLM2's first-decision errors per method, measured on MetaQA dev.

Each LLM method runs with ``--llm local:smollm2`` at its default settings (``judge=auto``,
``examples=kb``) on the MetaQA KB with the smollm suite's bank of solved dev questions
(:func:`benchmarks.smollm.bank.bank_kb`: questions 300 to 1,300 of the seed-0 shuffle of each
hop's dev file), asking the first ``--per-hop`` questions of the same shuffle, as
``hybridrag eval --dataset metaqa-<k>hop --limit N`` would (refused when one is in the bank).
A question's run stops once its first decision is complete (:data:`classify.LAST_NODE`), so
the later corrective rounds, which do not change that decision, are not paid for. The
decision is classified against the gold record (:mod:`benchmarks.fidelity.classify`) and the
rates per method, hop and type go to ``--out`` (the realistic stand-in reads that file).
Per-question records are kept under ``--runs`` and a rerun resumes from them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from benchmarks.common import ROOT, arg, command
from benchmarks.fidelity.classify import LAST_NODE, classify
from hybridrag.evals.markdown import provenance

LLM = "local:smollm2"
OPTIONS = (
    arg("--per-hop", type=int, default=50, help="questions per hop count and method (<= 300)"),
    arg("--methods", nargs="+", default=list(LAST_NODE), choices=list(LAST_NODE)),
    arg("--hops", nargs="+", type=int, default=[1, 2, 3], choices=[1, 2, 3]),
    arg("--runs", default="eval-runs/realistic-rates", help="per-question records (resumed)"),
    arg("--out", default="evals/oracle/rates/smollm2.json", help="the rates file"),
)


def first_decision(graph, ctx, question: str, method: str) -> tuple[list[dict], int]:
    """The trace up to the method's first decision, and the LLM calls made until then."""
    trace: list[dict] = []
    calls = 0
    for update in graph.stream({"question": question}, context=ctx, stream_mode="updates"):
        for node, values in (update or {}).items():
            values = values or {}
            trace += list(values.get("trace") or [])
            calls += int((values.get("usage") or {}).get("llm_calls") or 0)
            if node == LAST_NODE[method]:
                return trace, calls
    return trace, calls


def measure_cell(method: str, hops: int, per_hop: int, runs: Path) -> list[dict]:
    """Records of one method on one hop count (resumed from ``runs``)."""
    from benchmarks.smollm.bank import bank_kb, check_disjoint
    from hybridrag.evals.datasets import sample, with_answer_names
    from hybridrag.evals.oracle.gold import GoldSet
    from hybridrag.evals.sets import resolve_dataset
    from hybridrag.graphs import context_for, get_graph
    from hybridrag.kb.base import open_kb

    dataset = f"metaqa-{hops}hop"
    check_disjoint(dataset, per_hop)
    kb = open_kb(bank_kb(dataset))
    es = resolve_dataset(dataset, 0, False, build_kb=False)
    questions = sample(with_answer_names(es.questions, kb.name), per_hop, 0)
    gold = GoldSet.from_questions(questions, ("kg",), kb.graph.schema().relation_types)
    path = runs / f"{method}-{hops}hop.jsonl"
    done = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    done = list({r["id"]: r for r in reversed(done)}.values())[::-1]  # one record a question (the first)
    for rec in done:  # records keep their first-decision steps: classified again by the current rules
        if "steps" in rec:
            v = classify(method, rec["steps"], gold.lookup(rec["question"]))
            rec |= {"type": v.type, "errors": list(v.errors), "reason": v.reason, "detail": v.detail}
    seen = {r["id"] for r in done}
    ctx, graph = context_for(method, kb=str(kb.directory), llm=LLM), get_graph(method)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for q in questions:
            if q.id in seen:
                continue
            t0, error = time.perf_counter(), None
            try:
                trace, calls = first_decision(graph, ctx, q.question, method)
            except Exception as exc:  # noqa: BLE001 - one failing question is recorded, not fatal
                trace, calls, error = [], 0, f"{type(exc).__name__}: {exc}"
            v = classify(method, trace, gold.lookup(q.question))
            rec = {"id": q.id, "question": q.question, "type": v.type, "errors": list(v.errors), "reason": v.reason}
            rec |= {"detail": v.detail, "llm_calls": calls, "seconds": round(time.perf_counter() - t0, 2)}
            rec["steps"] = [{k: x for k, x in step.items() if k != "examples"} for step in trace]
            rec["error"] = error
            fh.write(json.dumps(rec, default=str) + "\n")
            fh.flush()
            done.append(rec)
            sys.stderr.write(f"[rates] {method} {hops}hop {len(done)}/{per_hop}: {v.type}\n")
    return done[:per_hop]


def tally(records: list[dict]) -> dict:
    """n, the share of each type, the unclassified reasons and how many decisions called the LLM."""
    n = len(records)
    types = Counter(r["type"] for r in records)
    return {
        "n": n,
        "rates": {t: round(c / n, 4) for t, c in sorted(types.items()) if t not in ("correct", "unclassified")},
        "counts": dict(sorted(types.items())),
        "unclassified": types.get("unclassified", 0),
        "unclassified_reasons": dict(Counter(r["reason"] for r in records if r["type"] == "unclassified")),
        "several_errors": sum(len(r["errors"]) > 1 for r in records),
        "decided_with_llm_call": sum(r["llm_calls"] > 0 for r in records),
        "failed_runs": sum(bool(r.get("error")) for r in records),
    }


def run(args: argparse.Namespace) -> int:
    """Measure every cell, then write the rates file."""
    if not 0 < args.per_hop <= 300:
        raise SystemExit(f"--per-hop must be 1..300 (the bank starts at dev question 300), got {args.per_hop}")
    runs = Path(args.runs)
    methods: dict[str, dict] = {}
    for method in args.methods:
        cells = {h: measure_cell(method, h, args.per_hop, runs) for h in args.hops}
        methods[method] = {
            "all": tally([r for rs in cells.values() for r in rs]),
            "by_hops": {str(h): tally(rs) for h, rs in cells.items()},
        }
    out = {
        "model": LLM,
        "what": "share of MetaQA dev questions whose first decision SmolLM2 (default settings, judge=auto, "
        "bank of held-out dev questions) got wrong, by noise type; the rest were correct or unclassified",
        "command": command(args),
        **provenance(),
        "methods": methods,
    }
    path = Path(args.out) if Path(args.out).is_absolute() else ROOT / args.out
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    sys.stdout.write(json.dumps({m: v["all"]["rates"] for m, v in methods.items()}) + f"\nrates in {path}\n")
    return 0
