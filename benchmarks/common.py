"""What the suites share: an option of a suite's table entry, its command line, child processes, eval cells."""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def arg(*flags: str, **options: Any) -> tuple[tuple[str, ...], dict[str, Any]]:
    """One option of a suite: the flags and keyword arguments of :meth:`argparse.ArgumentParser.add_argument`."""
    return flags, options


def command(args: argparse.Namespace, shown: list[str] | None = None) -> str:
    """``python -m benchmarks NAME ARGS``: the command of a run (``shown``: its arguments, default as given)."""
    parts = args.argv if shown is None else shown
    return " ".join(["python -m benchmarks", args.suite, shlex.join(parts)]).rstrip()


def child(suite: str, *arguments: str) -> list[str]:
    """The command of a child process running ``suite`` in a fresh interpreter."""
    return [sys.executable, "-m", "benchmarks", suite, *arguments]


def child_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment with the repository root on ``PYTHONPATH`` (so ``-m benchmarks`` is found from any folder)."""
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths)), **(extra or {})}


def last_json(stdout: str) -> Any:
    """The JSON object on the last line a child printed."""
    return json.loads(stdout.strip().splitlines()[-1])


def eval_cell(argv: list[str]) -> dict:
    """Run one ``hybridrag eval`` with ``argv`` (its ``--out`` required); its summary, or ``{"failed", "command"}``."""
    from hybridrag.evals.cli import add_eval_arguments, run_eval

    parser = argparse.ArgumentParser()
    add_eval_arguments(parser)
    args = parser.parse_args(argv)
    try:
        run_eval(args)
    except Exception as exc:  # noqa: BLE001 - one failing cell is reported, the others still run
        logging.exception("cell %s failed", " ".join(argv))
        return {"failed": f"{type(exc).__name__}: {exc}", "command": f"hybridrag eval {' '.join(argv)}"}
    return json.loads((args.out / "summary.json").read_text(encoding="utf-8"))


def finished(folder: Path, limit: int) -> bool:
    """Whether a run folder holds a summary of at least ``limit`` questions."""
    path = folder / "summary.json"
    return path.exists() and json.loads(path.read_text(encoding="utf-8")).get("n", 0) >= limit


def metaqa_questions(n: int, split: str = "dev_1hop.txt") -> list[str]:
    """The first ``n`` questions of a MetaQA file, brackets around the topic entity removed."""
    from hybridrag.evals.hybrid import datasets_root

    lines = (datasets_root() / "metaqa" / split).read_text(encoding="utf-8").splitlines()[:n]
    if not lines:
        raise ValueError(f"no questions in {split}")
    return [ln.split("\t")[0].replace("[", "").replace("]", "") for ln in lines]
