"""``python -m benchmarks fidelity-realistic``: the fidelity table's default-vs-paper rows under the realistic stand-in.

Every row of :data:`benchmarks.fidelity.rows.ROWS` is one ``hybridrag eval`` per setting (the
method's default, then the paper's setting, one setting changed) on the row's dataset(s), the
first ``--limit`` questions of the seed-0 shuffle, with ``--llm oracle:realistic``: the stand-in
with each first decision made wrong in the way SmolLM2 got it wrong on MetaQA dev, at the
rates of ``evals/oracle/rates/smollm2.json`` (per method, type and hop count; ``python -m
benchmarks realistic-rates``). A finished cell (its summary holds ``--limit`` questions) is
reused, so a rerun resumes. After each row's cells, its baseline: the (method, dataset) once
more with the perfect stand-in (``--llm oracle``) at the defaults, the same questions and commit.
No new cell starts after ``--stop-at`` (UTC ``HH:MM``); rows not run are listed as such. The
page is rewritten after every cell; ``--table`` also refreshes the "realistic stand-in" column
of docs/architecture.md's fidelity table
(:mod:`benchmarks.fidelity.table`).
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.common import ROOT, arg, command, eval_cell, finished
from benchmarks.fidelity.page import render
from benchmarks.fidelity.rows import ROWS, Row, row

LLM = "oracle:realistic"
PERFECT = "oracle"  # the baseline: the perfect stand-in, the method's defaults, the same questions
OPTIONS = (
    arg("--limit", type=int, default=300, help="questions per cell (the rows' stand-in figures use 300)"),
    arg("--rows", nargs="+", default=[r.key for r in ROWS], help="row keys, run in this order"),
    arg("--runs", default="eval-runs/fidelity-realistic", help="folder of the cells (reused when finished)"),
    arg("--out", default="docs/benchmarks_fidelity.md"),
    arg("--stop-at", default="", help="UTC HH:MM after which no new cell starts"),
    arg("--table", action="store_true", help="also refresh docs/architecture.md's realistic-stand-in column"),
)


def cell_name(method: str, dataset: str, setting: str, llm: str = LLM) -> str:
    """``mor-metaqa-hybrid-50-ranking=paper`` (``default`` for the method's defaults; ``-perfect``: the baseline)."""
    return f"{method}-{dataset}-{setting or 'default'}" + ("-perfect" if llm == PERFECT else "")


def cells_of(r: Row) -> list[tuple[str, str, str]]:
    """(method, dataset, setting) of every cell a row needs: the default, then the paper's setting."""
    return [(r.method, d, s) for d in r.datasets for s in ("", r.paper)]


def baselines(rows: list[Row]) -> list[tuple[str, str, str, str]]:
    """The perfect stand-in's default cell of every (method, dataset) the rows use, once each."""
    pairs = dict.fromkeys((r.method, d) for r in rows for d in r.datasets)
    return [(m, d, "", PERFECT) for m, d in pairs]


def run_cell(method: str, dataset: str, setting: str, limit: int, runs: Path, llm: str = LLM) -> dict:
    """Run (or reuse) one cell; its summary."""
    folder = runs / cell_name(method, dataset, setting, llm)
    if finished(folder, limit):
        return json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    argv = ["--method", method, "--dataset", dataset, "--llm", llm, "--limit", str(limit), "--no-progress"]
    argv += ["--out", str(folder)] + (["--set", setting] if setting else [])
    sys.stderr.write(f"[fidelity] hybridrag eval {' '.join(argv)}\n")
    return eval_cell(argv)


def past(stop_at: str) -> bool:
    """Whether the UTC clock is past ``HH:MM`` (never for an empty value)."""
    if not stop_at:
        return False
    try:
        hh, mm = (int(x) for x in stop_at.split(":"))
    except ValueError:
        raise SystemExit(f"--stop-at must be HH:MM (UTC), got {stop_at!r}") from None
    now = datetime.now(UTC)
    return (now.hour, now.minute) >= (hh, mm)


def run(args: argparse.Namespace) -> int:
    """Run the rows' cells in order, rewriting the page after each."""
    chosen = [row(k) for k in args.rows]
    runs = Path(args.runs)
    out = Path(args.out) if Path(args.out).is_absolute() else ROOT / args.out
    cmd = command(args)
    failed: dict[str, str] = {}
    cells = list(dict.fromkeys(c for r in chosen for c in [*((*x, LLM) for x in cells_of(r)), *baselines([r])]))
    for method, dataset, setting, llm in cells:
        if past(args.stop_at):
            sys.stderr.write(f"[fidelity] past {args.stop_at} UTC: no new cell\n")
            break
        summary = run_cell(method, dataset, setting, args.limit, runs, llm)
        if "failed" in summary:
            failed[cell_name(method, dataset, setting, llm)] = summary["failed"]
            sys.stderr.write(f"[fidelity] cell failed: {summary['failed']}\n")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render(chosen, runs, args.limit, cmd, failed), encoding="utf-8")
    out.write_text(render(chosen, runs, args.limit, cmd, failed), encoding="utf-8")
    sys.stdout.write(f"page written to {out}\n")
    if args.table:
        from benchmarks.fidelity.table import write

        write(ROOT / "docs" / "architecture.md", runs, args.limit)
        sys.stdout.write("docs/architecture.md: the fidelity table's realistic-stand-in column refreshed\n")
    return 1 if failed else 0
