"""A STaRK-Prime-sized graph (129,375 entities, 8,100,498 edges): ingest, load, per-module latency.

Usage: python -m benchmarks prime [--questions 20] [--methods hybgrag,mor,hydrarag,ssrag]
       [--work DIR] [--scale-work DIR] [--out docs/benchmarks_prime.md] [--redo STAGE,...]

Stages (each in a fresh ``nice``-d interpreter, results cached in ``--work``/results.json so a
re-run skips finished ones; :class:`benchmarks.scale.runner.Runner`): synthesise the source
(:mod:`benchmarks.scale.prime_synth`); graph-only ingest and graph load of Prime and of MetaQA 1×;
the full Prime ingest (entity names encoded for real); KB load of both; per-question latency of
the modules on both, interleaved (:mod:`benchmarks.scale.prime_stages`). The MetaQA 1× KB is the
scale benchmark's (``--scale-work``/x1/kb, built by ``python -m benchmarks scale``). A child whose
RSS passes ``--max-rss-gb`` stops itself and records that as its result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from pathlib import Path

from benchmarks.common import DOCS, arg, child
from benchmarks.scale.prime_synth import EDGES, ENTITIES
from benchmarks.scale.runner import Runner
from hybridrag.evals.timing import peak_rss_mb
from hybridrag.kb.sample import cache_root

OPTIONS = [
    arg("--questions", type=int, default=20, help="questions per hop count (1, 2, 3) on each KB"),
    arg("--methods", default="hybgrag,mor,hydrarag,ssrag"),
    arg("--hop-groups", default="1,2;3", help="latency runs, ';'-separated, each a comma-separated list of hop counts"),
    arg("--questions-3hop", type=int, default=8, help="questions per KB in a run of only 3 hops"),
    arg("--hops", default="1,2,3", help=argparse.SUPPRESS),
    arg("--entities", type=int, default=ENTITIES),
    arg("--edges", type=int, default=EDGES),
    arg("--seed", type=int, default=0),
    arg("--work", type=Path, default=cache_root() / "prime"),
    arg("--scale-work", type=Path, default=cache_root() / "scale"),
    arg("--out", type=Path, default=DOCS / "benchmarks_prime.md"),
    arg("--nice", type=int, default=15),
    arg("--max-rss-gb", type=float, default=8.0),
    arg("--only", default="", help="comma-separated stages to run (default: all)"),
    arg("--redo", default="", help="comma-separated stages to run again"),
    arg("--tag", default="", help="write results-TAG.json (a partial run beside another)"),
    arg("--stage", help=argparse.SUPPRESS),
    arg("--key", help=argparse.SUPPRESS),
]


class PrimeRunner(Runner):
    """The scale runner, its children started as ``python -m benchmarks prime``; ``factor`` is the KB key."""

    def __init__(self, args: argparse.Namespace, redo: set[str]) -> None:
        super().__init__(args.work, args.nice, redo, tag=args.tag)
        self.args = args

    def _cmd(self, stage: str, factor, extra: list[str]) -> list[str]:  # noqa: ANN001 - the KB key
        """The child process of one stage on one KB."""
        a = self.args
        settings = ["--work", str(a.work), "--scale-work", str(a.scale_work), "--methods", a.methods]
        settings += ["--entities", str(a.entities), "--edges", str(a.edges), "--seed", str(a.seed)]
        settings += ["--max-rss-gb", str(a.max_rss_gb)]
        return [
            "nice",
            "-n",
            str(self.nice),
            *child("prime", "--stage", stage, "--key", str(factor)),
            *settings,
            *extra,
        ]


def _watch_rss(limit_gb: float) -> None:
    """Stop this process, recording why, once its resident memory passes ``limit_gb``."""
    page = os.sysconf("SC_PAGE_SIZE")

    def loop() -> None:
        while True:
            with open("/proc/self/statm") as f:
                rss = int(f.read().split()[1]) * page
            if rss > limit_gb * 2**30:
                sys.stdout.write(json.dumps({"aborted": f"RSS passed {limit_gb:g} GB", "rss_mb": rss / 2**20}) + "\n")
                sys.stdout.flush()
                os._exit(0)
            time.sleep(0.25)

    threading.Thread(target=loop, daemon=True).start()


def _stage(args: argparse.Namespace) -> dict:
    from benchmarks.scale import prime_stages as st

    paths, key = st.layout(args.work, args.scale_work), args.key
    match args.stage:
        case "synth":
            return st.synth(paths, args)
        case "graph":
            return st.graph(paths, key)
        case "graph-load":
            return st.graph_load(paths, key)
        case "ingest":
            return st.ingest(paths)
        case "load":
            return st.load(paths, key, args)
        case "latency":
            return st.latency(paths, args)
    raise SystemExit(f"unknown stage {args.stage!r}")


PLAN = [
    ("synth", "prime"),
    ("graph", "metaqa1"),
    ("graph", "prime"),
    ("graph-load", "metaqa1"),
    ("graph-load", "prime"),
    ("ingest", "prime"),
    ("load", "metaqa1"),
    ("load", "prime"),
]


def run(args: argparse.Namespace) -> int:
    """Run every stage not yet recorded (a ``--stage`` child prints its JSON result) and write the report."""
    if args.stage:
        _watch_rss(args.max_rss_gb)
        res = _stage(args)
        res["peak_rss_mb"] = peak_rss_mb()
        sys.stdout.write(json.dumps(res) + "\n")
        return 0
    only = set(filter(None, args.only.split(",")))
    want = lambda stage: not only or stage in only  # noqa: E731
    if any(map(want, ("graph", "graph-load", "load", "latency"))) and not (args.scale_work / "x1" / "kb").exists():
        raise SystemExit(
            f"no MetaQA 1x KB in {args.scale_work / 'x1' / 'kb'}: run "
            "`python -m benchmarks scale --factors 1 --only ingest` first (the baseline)"
        )
    args.work.mkdir(parents=True, exist_ok=True)
    runner = PrimeRunner(args, set(filter(None, args.redo.split(","))))
    plan = [*PLAN, *(("latency", f"prime-h{g.replace(',', '')}") for g in args.hop_groups.split(";") if g)]
    for stage, key in plan:
        if not want(stage):
            continue
        extra = []
        if stage == "latency":
            hops = key.removeprefix("prime-h")
            n = args.questions_3hop if hops == "3" else args.questions
            extra = ["--hops", ",".join(hops), "--questions", str(n)]
        res = runner.run(stage, key, *extra)
        if "aborted" in res:
            runner.log(f"[prime] {stage}@{key} stopped: {res['aborted']}; later stages need it, stopping here")
            break
    if only:
        return 0
    from benchmarks.scale.prime_report import write_report

    write_report(args, runner.results)
    return 0
