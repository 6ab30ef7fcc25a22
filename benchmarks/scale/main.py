"""``python -m benchmarks scale``: synthetic 1× / 4× / 16× MetaQA, ingest, load, per-module latency, graph server.

Usage: python -m benchmarks scale --factors 1,4,16 [--neo4j-factors 1,4] [--embed-factors 1,4]
       [--questions 50] [--work DIR] [--out docs/benchmarks_scale.md] [--redo STAGE,...]

Writes the synthetic inputs (:mod:`benchmarks.scale.synth`) and the KBs under ``--work`` (default
``~/.cache/hybridrag/scale``), runs every stage in a fresh ``nice``-d interpreter
(:mod:`benchmarks.scale.runner`), and rewrites ``--out`` from the recorded results
(:mod:`benchmarks.scale.report`).
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from benchmarks.common import DOCS, arg
from benchmarks.scale.synth import paths
from hybridrag.evals.hybrid import datasets_root
from hybridrag.evals.timing import peak_rss_mb
from hybridrag.kb.sample import cache_root


def _ints(text: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if any(x < 1 for x in out):
        raise argparse.ArgumentTypeError(f"factors must be positive, got {text!r}")
    return out


OPTIONS = [
    arg("--factors", type=_ints, default=[1, 4, 16]),
    arg("--neo4j-factors", type=_ints, default=[]),
    arg(
        "--embed-factors",
        type=_ints,
        default=[1, 4],
        help="factors whose names are embedded for real; the others get replicated vectors",
    ),
    arg("--questions", type=int, default=50, help="dev questions per hop count (1, 2, 3)"),
    arg("--resume-factor", type=int, default=1),
    arg("--kill-after", type=int, default=20, help="embedding chunks saved before the kill"),
    arg("--work", type=Path, default=cache_root() / "scale"),
    arg(
        "--base-kb",
        type=Path,
        help="a KB already built from MetaQA's kb.txt (real vectors): linked as the 1× KB instead of a new ingest",
    ),
    arg("--out", type=Path, default=DOCS / "benchmarks_scale.md"),
    arg("--nice", type=int, default=10),
    arg(
        "--jobs", type=int, default=1, help="ingests after 1× run side by side, and so do latency and the server stages"
    ),
    arg("--only", default="", help="comma-separated stages to run (default: all)"),
    arg("--tag", default="", help="write results-TAG.json (a run beside another)"),
    arg("--redo", default="", help="comma-separated stages to run again"),
    arg("--print-server", action="store_true", help="print the graph-server tables of the recorded results and stop"),
    arg("--stage", help=argparse.SUPPRESS),
    arg("--factor", type=int, help=argparse.SUPPRESS),
    arg("--kb-dir", type=Path, help=argparse.SUPPRESS),
]


def _stage(args: argparse.Namespace) -> dict:
    from benchmarks.scale import ingest_stages as ist

    kb_txt, kb_dir = paths(args.work, args.factor)
    kb_dir = args.kb_dir or kb_dir
    match args.stage:
        case "graph":
            return ist.graph_ingest(kb_txt, args.work / f"x{args.factor}" / "graph-scratch")
        case "ingest" | "ingest-resumed":
            return ist.full_ingest(kb_txt, kb_dir, fresh=args.stage == "ingest")
        case "ingest-replicated":
            base = paths(args.work, 1)[1]
            cosine = ist.copy_cosine(base)
            rep = ist.full_ingest(kb_txt, kb_dir, {"base": str(base), "sigma": ist.sigma_for(cosine, 384)})
            return {**rep, "copy_cosine_measured": cosine}
        case "load" | "dense" | "latency" | "index":
            from benchmarks.scale import query_stages

            return getattr(query_stages, "index_build" if args.stage == "index" else args.stage)(kb_dir, args)
        case "server":
            from benchmarks.scale.server_stages import server

            return server(kb_dir, args)
    raise SystemExit(f"unknown stage {args.stage!r}")


def _side_by_side(jobs: int, calls: list) -> None:
    with ThreadPoolExecutor(max(jobs, 1)) as pool:
        for fut in [pool.submit(c) for c in calls]:
            fut.result()


def _ingests(args: argparse.Namespace, run, want, common: list[str]) -> None:  # noqa: ANN001
    """The 1× ingest, then the other factors' and the killed-and-resumed one (side by side with ``--jobs``)."""
    if 1 not in args.embed_factors:
        raise SystemExit("--embed-factors must include 1: replicated vectors are copies of the 1× vectors")
    jobs = [
        lambda f=f: run.run("ingest" if f in args.embed_factors else "ingest-replicated", f, *common)
        for f in args.factors
        if f != 1 and want("ingest")
    ]
    if args.resume_factor in args.factors and want("resume"):
        jobs.append(
            lambda: run.killed_ingest(
                args.resume_factor, args.work / f"x{args.resume_factor}" / "kb-resume", args.kill_after
            )
        )
    if want("ingest") and args.base_kb is None:
        run.run("ingest", 1, *common)
    _side_by_side(args.jobs, jobs)


def _link_base(base: Path, kb_dir: Path) -> None:
    """Make ``kb_dir`` (the 1× KB) a link to the built KB ``base``; refuse a different KB already there."""
    if not (base / "manifest.json").exists():
        raise SystemExit(f"--base-kb {base}: not a built KB (no manifest.json)")
    if kb_dir.is_symlink() and kb_dir.resolve() == base.resolve():
        return
    if kb_dir.exists() or kb_dir.is_symlink():
        raise SystemExit(f"--base-kb: {kb_dir} already holds another KB; use another --work")
    kb_dir.parent.mkdir(parents=True, exist_ok=True)
    kb_dir.symlink_to(base.resolve())


def run(args: argparse.Namespace) -> int:
    """Run every stage not yet recorded (a ``--stage`` child prints its JSON result) and write the report."""
    if args.stage:
        res = _stage(args)
        res["peak_rss_mb"] = peak_rss_mb()
        sys.stdout.write(json.dumps(res) + "\n")
        return 0
    from benchmarks.scale.runner import Runner
    from benchmarks.scale.synth import write_synthetic

    if 1 not in args.factors:
        raise SystemExit("--factors must include 1: every growth ratio is to 1×")
    args.work.mkdir(parents=True, exist_ok=True)
    runner = Runner(args.work, args.nice, set(filter(None, args.redo.split(","))), tag=args.tag)
    if args.print_server:  # a partial run's tables (the full run writes them into the report)
        from benchmarks.scale.report_tables import server_table

        sys.stdout.write("\n".join(server_table(runner.results, sorted(args.neo4j_factors))) + "\n")
        return 0
    only = set(filter(None, args.only.split(",")))
    want = lambda stage: not only or stage in only  # noqa: E731
    common = ["--embed-factors", ",".join(map(str, args.embed_factors)), "--questions", str(args.questions)]
    src = datasets_root() / "metaqa" / "kb.txt"
    for f in args.factors:
        if not paths(args.work, f)[0].exists():
            runner.results[f"synth@{f}"] = write_synthetic(src, paths(args.work, f)[0], f)
            runner.save()
    if args.base_kb is not None:
        _link_base(args.base_kb, paths(args.work, 1)[1])
    for f in args.factors:
        if want("graph"):
            runner.run("graph", f)
    _ingests(args, runner, want, common)
    for stage in ("load", "dense", "index"):
        for f in args.factors:
            if want(stage):
                runner.run(stage, f, *common)
    factors = ",".join(map(str, args.factors))
    tail = [lambda: runner.run("latency", max(args.factors), *common, "--factors", factors)] if want("latency") else []
    tail += [lambda f=f: runner.run("server", f, *common) for f in args.neo4j_factors if want("server")]
    _side_by_side(args.jobs, tail)
    if only:  # a partial run beside another: the full run writes the report
        return 0
    from benchmarks.scale.report import write_report

    write_report(args, runner.results)
    return 0
