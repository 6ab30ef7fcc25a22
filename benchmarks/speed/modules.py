"""``python -m benchmarks speed``: per-module retrieval latency of every method on MetaQA, idle and under load.

    python -m benchmarks speed --questions 100 [--methods ssrag hydrarag] [--datasets metaqa-1hop]
        [--conditions as-is loaded] [--out runs.json] [--compare before.json] [--md table.md]

Each retrieval module (HybGRAG text / hybrid, MoR traversal / rerank, HydraRAG explore_kg /
explore_docs / prune, SSRAG vector / graph / rerank / dedup) is called directly with the
decisions a perfect LLM would give (:mod:`benchmarks.speed.modules_methods`), on MetaQA 1/2/3-hop
dev questions (full KB) and MetaQA-hybrid-50 (1-hop dev questions, half the facts only in
passages), query embedding included. Per condition and dataset: a warm-up on questions not
timed, then ``--questions`` questions, p50 / p95 per module.

Conditions, in one command: ``as-is`` (the machine as it is; ``/proc/loadavg`` is recorded) and
``loaded`` (two busy-loop processes spinning for the duration, as on a busy 2-core machine).
The two conditions time disjoint questions of the same seeded sample (question caches would
otherwise make the second one faster); a new process starts cold for both.

``--out`` writes every timing and every module's result (ids / texts in rank order) as JSON;
``--compare`` checks that a run gives the same results as an earlier one, question by
question (a speed change must not change results): mismatches are listed and the exit status
is 1.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import arg, command
from benchmarks.speed.modules_methods import METHODS, PREPARE, forget_queries
from hybridrag.agents import vector_table
from hybridrag.agents.hydrarag.pruning import SENTENCE_TABLE
from hybridrag.agents.hydrarag.text import build_sentence_table
from hybridrag.agents.ssrag.nodes import build_fact_table
from hybridrag.agents.ssrag.vectors import FACT_PARTS, FACT_TABLE
from hybridrag.evals.datasets import load_metaqa, sample
from hybridrag.evals.markdown import header, provenance, write_page
from hybridrag.evals.oracle.gold import GoldRecord, NoGoldAnnotationError, record_for
from hybridrag.evals.timing import load_text, percentile
from hybridrag.kb.base import KnowledgeBase, open_kb
from hybridrag.kb.embeddings import embed_matrix

DATASETS = ("metaqa-1hop", "metaqa-2hop", "metaqa-3hop", "metaqa-hybrid-50")
CONDITIONS = ("as-is", "loaded")
GOAL_S = 0.100
WARMUP = 5
BUSY_WORKERS = 2


def dataset(name: str) -> tuple[KnowledgeBase, list[GoldRecord]]:
    """The KB and the gold records of a named dataset (KBs built into the cache when missing)."""
    from hybridrag.evals import hybrid

    if name not in DATASETS:
        raise ValueError(f"unknown dataset {name!r}; use one of {', '.join(DATASETS)}")
    hops = int(name[7]) if name.startswith("metaqa-") and name.endswith("hop") else 1
    kb_dir = hybrid.full_kb(False) if name.endswith("hop") else hybrid.hybrid_kb(0.5, 0, False)
    sources = ("kg",) if name.endswith("hop") else ("kg", "docs")
    questions = load_metaqa(hybrid.metaqa_dir() / f"dev_{hops}hop.txt", prefix=f"metaqa-{hops}hop")
    records = []
    for q in questions:
        try:
            records.append(record_for(q, sources))
        except NoGoldAnnotationError:
            continue
    return open_kb(kb_dir), records


def prepare_tables(kb: KnowledgeBase) -> None:
    """Build the KB's missing vector tables (HydraRAG's document sentences, SSRAG's text facts).

    A KB without passages needs none.
    """
    if not any(d.kind == "passage" for d in kb.docs):
        return
    for name, builder in ((SENTENCE_TABLE, build_sentence_table), (FACT_TABLE, build_fact_table)):
        if not vector_table.exists(kb, name) or (name == FACT_TABLE and vector_table.load_json(kb, FACT_PARTS) is None):
            start = time.perf_counter()
            count = builder(kb)
            sys.stderr.write(
                f"built {name} for {kb.directory.name}: {count} texts in "
                f"{time.perf_counter() - start:.0f} s (load {load_text()})\n"
            )


def time_question(kb: KnowledgeBase, method: str, rec: GoldRecord) -> dict[str, tuple[float, object]]:
    """Seconds and result of each module of ``method`` on one question (its own query embedding)."""
    out = {}
    for name, call in PREPARE[method](kb, rec):
        forget_queries([rec.question, rec.skyline()])
        start = time.perf_counter()
        result = call()
        out[name] = (time.perf_counter() - start, result)
    return out


def run_condition(
    sets: dict[str, tuple[KnowledgeBase, list[GoldRecord]]],
    methods: list[str],
    warmup: list[GoldRecord] | dict,
    timed: dict[str, list[GoldRecord]],
) -> dict:
    """Warm up, then time every module on ``timed[dataset]``; ``warmup`` per dataset or one list."""
    runs: dict = {"load_start": load_text(), "cells": {}}
    for kb, _ in sets.values():  # models loaded before any timing: one text (numpy path) and a batch (torch)
        kb.embed("warm-up")
        embed_matrix(kb.embeddings, ["warm-up", "a batch of two"])
    for ds, (kb, _) in sets.items():
        warm = warmup[ds] if isinstance(warmup, dict) else warmup
        for method in methods:
            for rec in warm:
                time_question(kb, method, rec)
            cell = runs["cells"].setdefault(f"{method}|{ds}", {"questions": [], "seconds": {}, "results": {}})
            for rec in timed[ds]:
                cell["questions"].append(rec.id)
                for module, (secs, result) in time_question(kb, method, rec).items():
                    cell["seconds"].setdefault(module, []).append(secs)
                    cell["results"].setdefault(module, {})[rec.id] = result
    runs["load_end"] = load_text()
    return runs


def start_load(n: int = BUSY_WORKERS) -> list[subprocess.Popen]:
    """``n`` busy-loop processes (each spins one core) until :func:`stop_load`."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop_load(procs: list[subprocess.Popen]) -> None:
    """End the busy-loop processes this bench started."""
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(timeout=10)


def percentiles(values: list[float]) -> tuple[float, float]:
    """(p50, p95) of seconds."""
    return percentile(values, 50), percentile(values, 95)


def table(report: dict) -> str:
    """Markdown: one row per method × module, p50 / p95 ms per dataset and condition; bold = over goal."""
    conds = list(report["conditions"])
    cells = {c: report["conditions"][c]["cells"] for c in conds}
    rows = sorted(
        {(k.split("|")[0], m) for c in conds for k, v in cells[c].items() for m in v["seconds"]},
        key=lambda r: (METHODS.index(r[0]), r[1]),
    )
    order = {m: i for c in conds for v in cells[c].values() for i, m in enumerate(v["seconds"])}
    rows.sort(key=lambda r: (METHODS.index(r[0]), order[r[1]]))
    head = ["method", "module"] + [f"{ds} {c}" for ds in report["datasets"] for c in conds] + ["< 100 ms p50"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method, module in rows:
        vals, ok = [], True
        for ds in report["datasets"]:
            for c in conds:
                secs = cells[c].get(f"{method}|{ds}", {}).get("seconds", {}).get(module)
                if not secs:
                    vals.append("–")
                    continue
                p50, p95 = percentiles(secs)
                ok &= p50 < GOAL_S
                cell = f"{p50 * 1000:.0f} / {p95 * 1000:.0f}"
                vals.append(f"**{cell}**" if p50 >= GOAL_S else cell)
        lines.append("| " + " | ".join([method, module, *vals, "yes" if ok else "no"]) + " |")
    loads = "; ".join(
        f"{c}: load {report['conditions'][c]['load_start']} → {report['conditions'][c]['load_end']}" for c in conds
    )
    return "\n".join(lines) + f"\n\np50 / p95 ms per question; {loads}.\n"


def compare(report: dict, before: dict) -> list[str]:
    """Questions whose module result differs from ``before`` (same condition, cell and question)."""
    out = []
    for c, run in report["conditions"].items():
        old_run = before.get("conditions", {}).get(c, {}).get("cells", {})
        for key, cell in run["cells"].items():
            for module, results in cell["results"].items():
                old = old_run.get(key, {}).get("results", {}).get(module, {})
                for qid, res in results.items():
                    if qid in old and json.loads(json.dumps(res)) != old[qid]:
                        out.append(f"{c} {key} {module} {qid}")
    return out


OPTIONS = [
    arg("--questions", type=int, default=50, help="timed questions per dataset and condition"),
    arg("--methods", nargs="+", default=list(METHODS), choices=METHODS),
    arg("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS),
    arg("--conditions", nargs="+", default=list(CONDITIONS), choices=CONDITIONS),
    arg("--seed", type=int, default=0, help="seed of the question sample"),
    arg(
        "--tables",
        choices=("build", "skip"),
        default="build",
        help="build the KB's vector tables (agents.vector_table) first when missing, or time without",
    ),
    arg("--out", type=Path, help="write timings and results as JSON"),
    arg("--compare", type=Path, help="JSON of an earlier run: results must be identical"),
    arg("--md", type=Path, help="also write the table to this file"),
]


def plan_questions(args: argparse.Namespace) -> tuple[dict, dict]:
    """The KB and records of every dataset, and per dataset the warm-up and each condition's questions."""
    n, sets, plan = args.questions, {}, {}
    for ds in args.datasets:
        kb, records = dataset(ds)
        if args.tables == "build":
            prepare_tables(kb)
        picked = sample(records, (len(CONDITIONS) + 1) * n + WARMUP, args.seed)
        sets[ds] = (kb, records)
        plan[ds] = {"warmup": picked[-WARMUP:], **{c: picked[i * n : (i + 1) * n] for i, c in enumerate(CONDITIONS)}}
    return sets, plan


def run(args: argparse.Namespace) -> int:
    """Run the benchmark; print the table (and write / compare JSON)."""
    if args.questions < 1:
        raise SystemExit("--questions must be at least 1")
    sets, plan = plan_questions(args)
    info = provenance()
    report = {
        "command": command(args),
        "date": info["date"],
        "commit": info["commit"],
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "datasets": args.datasets,
        "questions": args.questions,
        "conditions": {},
    }
    for c in args.conditions:
        procs = start_load() if c == "loaded" else []
        try:
            report["conditions"][c] = run_condition(
                sets, args.methods, {ds: plan[ds]["warmup"] for ds in sets}, {ds: plan[ds][c] for ds in sets}
            )
        finally:
            stop_load(procs)
    text = "\n".join(
        [*header("Retrieval modules of every method: latency per module", command(args), info), table(report)]
    )
    sys.stdout.write(text + "\n")
    if args.md:
        write_page(args.md, [text])
    if args.out:
        args.out.write_text(json.dumps(report), encoding="utf-8")
    if args.compare:
        diff = compare(report, json.loads(args.compare.read_text(encoding="utf-8")))
        sys.stdout.write(
            f"compared with {args.compare}: {len(diff)} differing module results\n"
            + "".join(f"  {d}\n" for d in diff[:50])
        )
        return 1 if diff else 0
    return 0
