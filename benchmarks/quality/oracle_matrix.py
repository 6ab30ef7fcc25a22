"""``python -m benchmarks oracle``: the LLM methods' machinery against its ceiling, one command.

Every cell is a ``hybridrag eval`` run with the perfect-LLM stand-in (``--llm oracle``,
:mod:`evals.oracle`), so the rows are **oracle** rows: ceilings of each method's retrieval,
loops and ranking, never results of a model, and written to their own report
(``docs/benchmarks_oracle_matrix.md``), apart from the real-model rows.

Two tables:

- *Ceiling*: hybgrag, mor, hydrarag and ssrag on MetaQA 1/2/3-hop and MetaQA-hybrid 50 / 0 %
  with a noise-free stand-in; each row's score (Hit@1 for the ranking methods hybgrag and mor,
  answer Hits@1 for the answering methods hydrarag and ssrag) over the reachable-answer ceiling,
  against the issue's goal (95 % of the ceiling at 1 and 2 hops, 85 % at 3).
- *Loops*: the same methods at noise ``p`` (default 0.3): the first routing / planning / analysis
  decision of about ``p`` of the questions is wrong in a typed way; each method runs with its
  default ``max_iterations`` and with ``max_iterations=1`` (the single pass), on the same
  questions, and the report gives both scores and the share of applied errors that the loop
  repaired (``oracle_noise.json`` of the looping run).

Run folders live under ``--runs`` (default ``eval-runs/oracle-<commit>``), so a re-run at the
same commit resumes finished cells and a new commit starts afresh.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks.common import arg, command, finished
from benchmarks.quality.oracle_rows import (  # noqa: F401 - the rows, importable from here
    CEILING_HEAD,
    LOOP_HEAD,
    ceiling_row,
    goal,
    loop_row,
    noise_summary,
    score_key,
    table,
)
from benchmarks.quality.report import run_cell
from hybridrag.evals.markdown import header, provenance, write_page
from hybridrag.evals.oracle.outcome import outcome_repairs

METHODS = ("hybgrag", "mor", "hydrarag", "ssrag")
DATASETS = ("metaqa-1hop", "metaqa-2hop", "metaqa-3hop", "metaqa-hybrid-50", "metaqa-hybrid-0")
NOISE_DATASETS = ("metaqa-1hop", "metaqa-2hop", "metaqa-3hop")


def parse_limits(items: list[str], default: int, flag: str = "--method-limit") -> dict[str, int]:
    """``["hydrarag=300"]`` → per-method question limits (the rest get ``default``)."""
    limits = dict.fromkeys(METHODS, default)
    for item in items:
        method, sep, value = item.partition("=")
        if not sep or method not in METHODS or not value.isdigit() or int(value) < 1:
            raise SystemExit(f"bad {flag} {item!r}; use METHOD=N with METHOD in {', '.join(METHODS)}")
        limits[method] = int(value)
    return limits


def _cell(
    method: str, dataset: str, limit: int, runs: Path, llm: str, overrides: list[str], finished_only: bool = False
) -> dict:
    tag = "oracle" if llm == "oracle" else llm.replace(":", "-").replace("=", "")
    folder = runs / tag / f"{method}-{'-'.join(o.split('=', 1)[1] for o in overrides) or 'default'}-{dataset}"
    if finished_only and not finished(folder, limit):
        extra = "".join(f" --set {o}" for o in overrides)
        return {
            "failed": "not run to its limit (--finished-only)",
            "command": f"hybridrag eval --method {method} --dataset {dataset} --llm {llm} --limit {limit}{extra}",
        }
    if finished_only:  # read as it was written: re-running would stamp the summary with today's commit
        return json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    return run_cell(method, dataset, overrides, limit, runs / tag, None, llm)


def render(
    ceiling: list[str], loops: list[str], info: dict, args: argparse.Namespace, limits: dict, noise_limits: dict
) -> str:
    """The report."""
    lim = ", ".join(f"{k} {v}" for k, v in limits.items() if k in args.methods)
    noise_lim = ", ".join(f"{k} {v}" for k, v in noise_limits.items() if k in args.methods)
    title = "Oracle matrix: the LLM methods' machinery against its ceiling"
    return "\n".join(
        [
            *header(title, command(args), info, ["Each row's own command is in its last column."]),
            "Every row is an **oracle** row: each LLM role of the method is the perfect-LLM stand-in"
            " (`--llm oracle`, `evals/oracle/`), built from the question's gold record and the prompt the role"
            " receives; it never puts a gold answer into retrieval. The numbers are ceilings of the retrieval,"
            " loops and ranking, not results of any model.",
            "",
            f"- Questions per cell: {lim} (the first N of MetaQA dev's seed-0 shuffle, the same questions for"
            f" every method); noise cells: {noise_lim}.",
            "- Score: Hit@1 of the ranked list for hybgrag and mor; answer Hits@1 (a gold answer as a whole phrase"
            " of the `answer`) for hydrarag and ssrag. Ceiling: share of questions with a gold answer reachable"
            " along the gold relation path (in the complete MetaQA graph for the hybrid datasets). Goal (issue 9):"
            " score / ceiling >= 95 % at 1 and 2 hops and on the hybrid sets (1-hop questions), >= 85 % at 3 hops.",
            "",
            "## Ceiling (no noise)",
            "",
            *table(CEILING_HEAD, ceiling),
            f"## Corrective loops at noise p = {args.noise}",
            "",
            "Each method with its default `max_iterations` and with `max_iterations=1` on the same questions and the"
            " same drawn errors. *Applied*: decisions that carried the injected error; *repaired*: a later decision"
            " of the same question in which the method's own feedback named the error, so the stand-in corrected it"
            " (`evals/oracle/noise.py`). *Harmful errors rescued*: questions whose applied error cost the single"
            " pass its (reachable) answer, and of those the ones the run with the loop got right"
            " (`evals/oracle/outcome.py`): an error a method's first round absorbs by itself is not counted as one"
            " needing repair there.",
            "",
            *table(LOOP_HEAD, loops),
        ]
    )


OPTIONS = [
    arg("--limit", type=int, default=1000, help="questions per ceiling cell"),
    arg(
        "--method-limit",
        action="append",
        default=[],
        metavar="METHOD=N",
        help="another limit for one method (e.g. hydrarag=300 where 1000 is impractical)",
    ),
    arg("--noise", type=float, default=0.3, help="noise probability of the loop cells"),
    arg("--noise-limit", type=int, default=300, help="questions per loop cell"),
    arg(
        "--method-noise-limit",
        action="append",
        default=[],
        metavar="METHOD=N",
        help="another loop-cell limit for one method",
    ),
    arg("--methods", nargs="+", default=list(METHODS), choices=METHODS),
    arg("--datasets", nargs="+", default=list(DATASETS)),
    arg("--noise-datasets", nargs="+", default=list(NOISE_DATASETS)),
    arg("--runs", type=Path, help="folder of the runs (default eval-runs/oracle-<commit>)"),
    arg("--out", type=Path, default=Path("docs") / "benchmarks_oracle_matrix.md"),
    arg(
        "--finished-only",
        action="store_true",
        help="report the cells already run to their limit and list the others as not run",
    ),
]


def loop_cells(method: str, dataset: str, args: argparse.Namespace, runs: Path, limit: int) -> str:
    """The loops-table row of ``method`` on ``dataset``: with its loop and as a single pass, at the noise."""
    spec = f"oracle:p={args.noise:g}"
    sys.stderr.write(f"[oracle] {method} on {dataset} at p={args.noise:g}, loop and single pass\n")
    looped = _cell(method, dataset, limit, runs, spec, [], args.finished_only)
    single = _cell(method, dataset, limit, runs, spec, ["max_iterations=1"], args.finished_only)
    tag = spec.replace(":", "-").replace("=", "")
    counts = noise_summary(runs / tag / f"{method}-default-{dataset}")
    outcome = outcome_repairs(
        runs / tag / f"{method}-default-{dataset}", runs / tag / f"{method}-1-{dataset}", score_key(method)
    )
    return loop_row(method, dataset, looped, single, counts, outcome)


def run(args: argparse.Namespace) -> int:
    """Run every cell (resuming finished ones) and write the report."""
    if not 0.0 < args.noise <= 1.0:
        raise SystemExit(f"--noise must lie in (0, 1], got {args.noise}")
    limits = parse_limits(args.method_limit, args.limit)
    noise_limits = parse_limits(args.method_noise_limit, args.noise_limit, "--method-noise-limit")
    info = provenance()
    runs = args.runs or Path("eval-runs") / f"oracle-{info['commit']}"
    ceiling, loops = [], []
    for method in args.methods:
        for dataset in args.datasets:
            sys.stderr.write(f"[oracle] {method} on {dataset}\n")
            cell = _cell(method, dataset, limits[method], runs, "oracle", [], args.finished_only)
            ceiling.append(ceiling_row(method, dataset, cell))
        loops += [loop_cells(method, d, args, runs, noise_limits[method]) for d in args.noise_datasets]
    write_page(args.out, [render(ceiling, loops, info, args, limits, noise_limits)])
    sys.stderr.write(f"[oracle] wrote {args.out}\n")
    return 0
