"""``python -m benchmarks realdata``: regenerate docs/benchmarks_realdata.md from its eval runs.

Three sections, each a set of ``hybridrag eval`` cells (:mod:`benchmarks.realdata.cells`, cached
in ``--runs``, so a re-run only rewrites the page):

- ``adv``: AdvHotpotQA dev over the documents KB: fusion with no LLM (hybrid, vector-only,
  BM25-only), every LLM method with the perfect-LLM stand-in (``--llm oracle``; hybgrag and mor in
  QA mode, ``answer=true``, so their answer role runs) and with SmolLM2 (each method's defaults, the
  first ``--smollm-limit`` of the seeded shuffle); where the planted paragraphs land.
- ``typed``: MetaQA with the type map and on the KB the README's untyped ingest builds
  (``--untyped-kb``), the stand-in, ``--metaqa-limit`` questions per hop.
- ``para``: the paraphrase set against MetaQA's own wording: fusion (no LLM) and the stand-in on
  every question, SmolLM2 with a bank of other dev questions (:mod:`benchmarks.realdata.para_bank`) on
  the first ``--para-limit`` of each hop.

``--quick``: a few questions a cell, written under ``eval-runs/quick/``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.common import DOCS, arg, command
from benchmarks.realdata import page, para
from benchmarks.realdata.cells import Cell, Result, run_cell

SECTIONS = {**page.SECTIONS, "para": para.para}  # the page's sections, in page order

OPTIONS = [
    arg("--limit", type=int, help="AdvHotpotQA questions of the stand-in and no-LLM cells (default: all 154)"),
    arg("--smollm-limit", type=int, default=30, help="AdvHotpotQA questions of the SmolLM2 cells (default 30)"),
    arg("--metaqa-limit", type=int, default=100, help="MetaQA questions per hop and KB, typed vs untyped (100)"),
    arg("--para-limit", type=int, default=20, help="paraphrase questions per hop of the SmolLM2 cells (20)"),
    arg("--untyped-kb", type=Path, help="the untyped MetaQA KB (hybridrag ingest --triples kb.txt); none: no table"),
    arg("--sections", nargs="+", default=list(SECTIONS), choices=list(SECTIONS), help="sections to run"),
    arg("--runs", type=Path, default=Path("eval-runs/realdata"), help="folder of the cached eval runs"),
    arg("--out", type=Path, default=DOCS / "benchmarks_realdata.md", help="the page to write"),
    arg("--fresh", action="store_true", help="delete the run folders of the cells before running them"),
]


class Runner:
    """Runs cells in order, printing one line per cell; keeps every result by cell."""

    def __init__(self, args: argparse.Namespace) -> None:
        """Remember the run folder and whether to start afresh."""
        self.args, self.done = args, 0

    def __call__(self, cell: Cell, expected: int) -> Result:
        """The cell's result (run, resumed or read back)."""
        result = run_cell(cell, self.args.runs, expected, self.args.fresh)
        self.done += 1
        status = result.failed or f"n={result.summary.get('n')}"
        sys.stderr.write(f"[realdata {self.done}] {cell.command()}: {status}\n")
        return result


def run(args: argparse.Namespace) -> int:
    """Run the chosen sections and write the page (0 when no cell failed)."""
    runner = Runner(args)
    parts = [page.header(command(args), args)]
    failed = 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for n, name in enumerate(args.sections):
        text, bad = SECTIONS[name](runner, args)
        parts.append(text)
        failed += bad
        pending = [f"(Section `{s}` not run yet: the suite is still running.)" for s in args.sections[n + 1 :]]
        args.out.write_text("\n\n".join([*parts, *pending]).rstrip() + "\n", encoding="utf-8")  # after each section
    sys.stderr.write(f"wrote {args.out} ({failed} failed cells)\n")
    return 1 if failed else 0
