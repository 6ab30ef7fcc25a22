"""A STaRK-Prime-sized graph (129,375 entities, 8,100,498 edges): ingest, load, per-module latency.

Usage: python -m evals.scale_prime [--questions 20] [--methods hybgrag,mor,hydrarag,ssrag]
       [--work DIR] [--scale-work DIR] [--out docs/benchmarks_prime.md] [--redo STAGE,...]

Stages (each in a fresh ``nice``-d interpreter, results cached in ``--work``/results.json so a
re-run skips finished ones; :class:`evals.scale.runner.Runner`): synthesise the source
(:mod:`evals.scale_prime_synth`); graph-only ingest and graph load of Prime and of MetaQA 1×;
the full Prime ingest (entity names encoded for real); KB load of both; per-question latency of
the modules on both, interleaved (:mod:`evals.scale_prime_stages`). The MetaQA 1× KB is the
scale benchmark's (``--scale-work``/x1/kb, built by ``python -m evals.scale``). A child whose
RSS passes ``--max-rss-gb`` stops itself and records that as its result.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import threading
import time
from pathlib import Path

from hybridrag.evals.scale.runner import Runner
from hybridrag.evals.scale_prime_synth import EDGES, ENTITIES
from hybridrag.kb.sample import cache_root

ROOT = Path(__file__).resolve().parents[1]


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m evals.scale_prime", description=__doc__.split("\n\n")[0])
    p.add_argument("--questions", type=int, default=20, help="questions per hop count (1, 2, 3) on each KB")
    p.add_argument("--methods", default="hybgrag,mor,hydrarag,ssrag")
    p.add_argument(
        "--hop-groups", default="1,2;3", help="latency runs, ';'-separated, each a comma-separated list of hop counts"
    )
    p.add_argument("--questions-3hop", type=int, default=8, help="questions per KB in a run of only 3 hops")
    p.add_argument("--hops", default="1,2,3", help=argparse.SUPPRESS)
    p.add_argument("--entities", type=int, default=ENTITIES)
    p.add_argument("--edges", type=int, default=EDGES)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--work", type=Path, default=cache_root() / "prime")
    p.add_argument("--scale-work", type=Path, default=cache_root() / "scale")
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks_prime.md")
    p.add_argument("--nice", type=int, default=15)
    p.add_argument("--max-rss-gb", type=float, default=8.0)
    p.add_argument("--only", default="", help="comma-separated stages to run (default: all)")
    p.add_argument("--redo", default="", help="comma-separated stages to run again")
    p.add_argument("--tag", default="", help="write results-TAG.json (a partial run beside another)")
    p.add_argument("--stage", help=argparse.SUPPRESS)
    p.add_argument("--key", help=argparse.SUPPRESS)
    return p.parse_args(argv)


class PrimeRunner(Runner):
    """The scale runner, its children started as ``python -m evals.scale_prime``; ``factor`` is the KB key."""

    def __init__(self, args: argparse.Namespace, redo: set[str]) -> None:
        super().__init__(
            args.work,
            args.nice,
            redo,
            log=lambda m: print(m, file=sys.stderr, flush=True),  # noqa: T201
            tag=args.tag,
        )
        self.args = args

    def _cmd(self, stage: str, factor, extra: list[str]) -> list[str]:
        a = self.args
        return [
            "nice",
            "-n",
            str(self.nice),
            sys.executable,
            "-m",
            "hybridrag.evals.scale_prime",
            "--stage",
            stage,
            "--key",
            str(factor),
            "--work",
            str(a.work),
            "--scale-work",
            str(a.scale_work),
            "--methods",
            a.methods,
            "--entities",
            str(a.entities),
            "--edges",
            str(a.edges),
            "--seed",
            str(a.seed),
            "--max-rss-gb",
            str(a.max_rss_gb),
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
                print(json.dumps({"aborted": f"RSS passed {limit_gb:g} GB", "rss_mb": rss / 2**20}), flush=True)  # noqa: T201
                os._exit(0)
            time.sleep(0.25)

    threading.Thread(target=loop, daemon=True).start()


def _stage(args: argparse.Namespace) -> dict:
    from hybridrag.evals import scale_prime_stages as st

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


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.stage:
        _watch_rss(args.max_rss_gb)
        res = _stage(args)
        res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(res))  # noqa: T201
        return
    if not (args.scale_work / "x1" / "kb").exists():
        raise SystemExit(
            f"no MetaQA 1x KB in {args.scale_work / 'x1' / 'kb'}: run "
            "`python -m evals.scale --factors 1 --only ingest` first (the baseline)"
        )
    args.work.mkdir(parents=True, exist_ok=True)
    run = PrimeRunner(args, set(filter(None, args.redo.split(","))))
    only = set(filter(None, args.only.split(",")))
    want = lambda stage: not only or stage in only  # noqa: E731
    plan = [
        ("synth", "prime"),
        ("graph", "metaqa1"),
        ("graph", "prime"),
        ("graph-load", "metaqa1"),
        ("graph-load", "prime"),
        ("ingest", "prime"),
        ("load", "metaqa1"),
        ("load", "prime"),
        *(("latency", f"prime-h{g.replace(',', '')}") for g in args.hop_groups.split(";") if g),
    ]
    for stage, key in plan:
        if not want(stage):
            continue
        extra = []
        if stage == "latency":
            hops = key.removeprefix("prime-h")
            n = args.questions_3hop if hops == "3" else args.questions
            extra = ["--hops", ",".join(hops), "--questions", str(n)]
        res = run.run(stage, key, *extra)
        if "aborted" in res:
            run.log(f"[prime] {stage}@{key} stopped: {res['aborted']}; later stages need it, stopping here")
            break
    if only:
        return
    from hybridrag.evals.scale_prime_report import write_report

    write_report(args, run.results)


if __name__ == "__main__":
    main()
