"""``python -m benchmarks smollm``: the LLM methods with SmolLM2-135M, bank on and off, one command.

Each cell is one ``hybridrag eval`` of a method on a dataset with ``--llm local:smollm2`` and one
examples setting:

- ``bank``: examples retrieved from a bank of solved dev questions (entity masked,
  ``examples=kb`` on a KB directory that holds the bank, :mod:`benchmarks.smollm.bank`);
- ``schema``: retrieved the same way, bank off (the KB without a bank file: schema-synthesized
  examples only);
- ``fixed``: the bundled MetaQA example files (``examples=bundled``), the same for every question;
- ``none``: no examples.

The bank is built from dev questions that are never evaluated: a cell asks the first ``--limit``
questions of the seed-0 shuffle (``hybridrag eval --limit``); the bank takes questions 300 to 1300
of the same shuffle of each ``dev_<k>hop.txt`` (shuffled: the 1-hop file is sorted by question
type), and a cell refuses to run when one of its questions is in the bank.

HybGRAG and MoR are shown 3 examples (``num_few_shot=3``) instead of their default 10: with the
3 nearest, SmolLM2 names the relations better and each call is faster (the prompt is about half as
long; the probe that chose it is in docs/benchmarks_smollm.md).

Besides the scores, each row gives the router / planner accuracy against the gold relation path
of the question's type (:func:`hybridrag.evals.metaqa.relation_path`), read from the trace, and the
LLM-call time. Cells run in ``--cells`` order; a finished cell (its summary holds ``--limit``
questions) is skipped, an unfinished one resumes where its records end, and no new cell starts
after ``--stop-at`` (UTC). The report is rewritten after every cell from the finished and
partial cells, each with its own ``n``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from benchmarks.common import arg, finished
from benchmarks.smollm.bank import bank_kb, check_disjoint
from benchmarks.smollm.report import render
from hybridrag.evals.cli import add_eval_arguments, run_eval
from hybridrag.evals.markdown import provenance
from hybridrag.evals.timing import load_text

LLM = "local:smollm2"
SETTINGS = ("bank", "schema", "fixed", "none")
DATASETS = {"1hop": "metaqa-1hop", "2hop": "metaqa-2hop", "3hop": "metaqa-3hop", "hybrid50": "metaqa-hybrid-50"}
# per method and setting: the --set overrides (None: the method has no such setting)
SHOTS = "num_few_shot=3"  # router / planner examples shown: 3, not the default 10 (see the module doc)
OVERRIDES: dict[str, dict[str, list[str] | None]] = {
    "hybgrag": {
        "bank": ["examples=kb", SHOTS],
        "schema": ["examples=kb", SHOTS],
        "fixed": ["examples=bundled", SHOTS],
        "none": ["num_few_shot=0"],
    },
    "mor": {
        "bank": ["examples=kb", SHOTS],
        "schema": ["examples=kb", SHOTS],
        "fixed": ["examples=bundled", SHOTS],
        "none": ["num_few_shot=0"],
    },
    "hydrarag": {
        "bank": ["examples=kb"],
        "schema": ["examples=kb"],
        "fixed": ["examples=bundled"],
        "none": ["num_examples=0"],
    },
    "ssrag": {"bank": ["examples=kb"], "schema": ["examples=kb"], "fixed": None, "none": ["examples=none"]},
}
DEFAULT_CELLS = (
    "hybgrag:bank:1hop",
    "mor:bank:1hop",
    "hybgrag:bank:2hop",
    "mor:bank:2hop",
    "hybgrag:none:1hop",
    "mor:none:1hop",
    "hybgrag:fixed:1hop",
    "mor:fixed:1hop",
    "hybgrag:bank:3hop",
    "mor:bank:3hop",
    "hybgrag:bank:hybrid50",
    "mor:bank:hybrid50",
    "hybgrag:schema:1hop",
    "mor:schema:1hop",
    "hydrarag:bank:1hop",
    "ssrag:bank:1hop",
    "hydrarag:none:1hop",
    "ssrag:none:1hop",
)


def parse_cell(text: str) -> tuple[str, str, str]:
    """``"hybgrag:bank:1hop"`` → (method, setting, dataset key); a bad cell is a one-line error."""
    parts = text.split(":")
    if len(parts) != 3 or parts[0] not in OVERRIDES or parts[1] not in SETTINGS or parts[2] not in DATASETS:
        raise SystemExit(
            f"bad cell {text!r}; use METHOD:SETTING:DATASET with METHOD in {', '.join(OVERRIDES)}, "
            f"SETTING in {', '.join(SETTINGS)}, DATASET in {', '.join(DATASETS)}"
        )
    if OVERRIDES[parts[0]][parts[1]] is None:
        raise SystemExit(f"bad cell {text!r}: {parts[0]} has no {parts[1]!r} examples setting")
    return parts[0], parts[1], parts[2]


def cell_dir(runs: Path, cell: tuple[str, str, str]) -> Path:
    """The run folder of a cell."""
    return runs / "-".join(cell)


def eval_argv(cell: tuple[str, str, str], limit: int, folder: Path) -> list[str]:
    """The ``hybridrag eval`` arguments of a cell."""
    method, setting, key = cell
    argv = [
        "--method",
        method,
        "--dataset",
        DATASETS[key],
        "--llm",
        LLM,
        "--limit",
        str(limit),
        "--out",
        str(folder),
        "--no-progress",
    ]
    if setting == "bank":
        argv += ["--kb", str(bank_kb(DATASETS[key]))]
    for o in OVERRIDES[method][setting] or []:
        argv += ["--set", o]
    return argv


def run_one(cell: tuple[str, str, str], limit: int, runs: Path) -> None:
    """Run (or resume) one cell and note the load and the wall time beside its records."""
    folder = cell_dir(runs, cell)
    argv = eval_argv(cell, limit, folder)
    if cell[1] == "bank":
        check_disjoint(DATASETS[cell[2]], limit)
    parser = argparse.ArgumentParser()
    add_eval_arguments(parser)
    start, load0 = time.time(), load_text()
    sys.stderr.write(f"[smollm] {':'.join(cell)}: hybridrag eval {' '.join(argv)}\n")
    run_eval(parser.parse_args(argv))
    folder.mkdir(parents=True, exist_ok=True)
    runs_note = {
        "load_start": load0,
        "load_end": load_text(),
        "wall_seconds": round(time.time() - start, 1),
        "command": "hybridrag eval " + " ".join(argv),
        "commit": provenance()["commit"],
    }
    (folder / "cell.json").write_text(json.dumps(runs_note, indent=1), encoding="utf-8")


def deadline(text: str, now: datetime | None = None) -> datetime:
    """The moment ``--stop-at`` names (UTC).

    ``HH:MM`` is its next occurrence (within 24 hours, so it may be tomorrow); ``YYYY-MM-DDTHH:MM``
    is that moment.
    """
    now = now or datetime.now(UTC)
    try:
        if "T" in text:
            return datetime.fromisoformat(text).replace(tzinfo=UTC)
        hh, mm = (int(x) for x in text.split(":"))
        at = now.replace(hour=hh, minute=mm, second=0, microsecond=0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a UTC time: use HH:MM or YYYY-MM-DDTHH:MM") from None
    return at if at > now else at + timedelta(days=1)


def past(stop_at: datetime | None) -> bool:
    """Whether the UTC clock is past ``stop_at``."""
    return stop_at is not None and datetime.now(UTC) >= stop_at


def shown_argv(argv: list[str]) -> list[str]:
    """The arguments the report's reproduce line shows (``--note`` texts and ``--report-only`` left out)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--note":
            skip = True
        elif a != "--report-only" and not a.startswith("--note="):
            out.append(a)
    return out


OPTIONS = [
    arg("--limit", type=int, default=300, help="questions per cell"),
    arg(
        "--method-limit",
        action="append",
        default=[],
        metavar="METHOD=N",
        help="another limit for one method (hydrarag, ssrag: many LLM calls per question)",
    ),
    arg("--cells", nargs="+", default=list(DEFAULT_CELLS), metavar="METHOD:SETTING:DATASET"),
    arg("--runs", type=Path, default=Path("eval-runs") / "smollm", help="folder of the runs"),
    arg(
        "--older-runs",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="report a cell with no records under --runs from this older runs folder (repeatable; "
        "never run or resumed there)",
    ),
    arg("--out", type=Path, default=Path("docs") / "benchmarks_smollm.md"),
    arg(
        "--stop-at",
        type=deadline,
        metavar="HH:MM",
        help="start no new cell after this UTC time (HH:MM: its next occurrence; or YYYY-MM-DDTHH:MM)",
    ),
    arg("--report-only", action="store_true", help="write the report from the runs as they are"),
    arg("--note", action="append", default=[], help="a line for the report's notes (repeatable)"),
    arg("--first", type=int, help="with --report-only: each row from its first N questions"),
    arg(
        "--every-run",
        action="store_true",
        help="with --report-only: a row from every runs folder that holds the cell (compare runs)",
    ),
]


def run(args: argparse.Namespace) -> int:
    """Run the cells in order (skipping finished ones) and rewrite the report after each."""
    cells = [parse_cell(c) for c in args.cells]
    limits = {}
    for item in args.method_limit:
        method, _, value = item.partition("=")
        if method not in OVERRIDES or not value.isdigit():
            raise SystemExit(f"bad --method-limit {item!r}; use METHOD=N")
        limits[method] = int(value)
    info = provenance()
    for cell in cells:
        if args.report_only:
            break
        limit = limits.get(cell[0], args.limit)
        if finished(cell_dir(args.runs, cell), limit):
            continue
        if past(args.stop_at):
            sys.stderr.write(f"[smollm] past {args.stop_at:%Y-%m-%d %H:%M} UTC: no new cell\n")
            break
        run_one(cell, limit, args.runs)
        render(args.out, [args.runs, *args.older_runs], cells, info, shown_argv(args.argv), args.note)
    render(
        args.out,
        [args.runs, *args.older_runs],
        cells,
        info,
        shown_argv(args.argv),
        args.note,
        first=args.first,
        every=args.every_run,
    )
    return 0
