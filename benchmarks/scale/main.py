"""Scale benchmark: synthetic 1× / 4× / 16× MetaQA, ingest, load, per-module latency, graph server.

Usage: python -m evals.scale --factors 1,4,16 [--neo4j-factors 1,4] [--embed-factors 1,4]
       [--questions 50] [--work DIR] [--out docs/benchmarks_scale.md] [--redo STAGE,...]

Writes the synthetic inputs (:mod:`evals.scale.synth`) and the KBs under ``--work`` (default
``~/.cache/hybridrag/scale``), runs every stage in a fresh ``nice``-d interpreter
(:mod:`evals.scale.runner`), and rewrites ``--out`` from the recorded results
(:mod:`evals.scale.report`).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hybridrag.evals.paths import datasets_dir
from hybridrag.kb.sample import cache_root


def _ints(text: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if any(x < 1 for x in out):
        raise argparse.ArgumentTypeError(f"factors must be positive, got {text!r}")
    return out


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m evals.scale", description=__doc__.split("\n\n")[0])
    p.add_argument("--factors", type=_ints, default=[1, 4, 16])
    p.add_argument("--neo4j-factors", type=_ints, default=[])
    p.add_argument(
        "--embed-factors",
        type=_ints,
        default=[1, 4],
        help="factors whose names are embedded for real; the others get replicated vectors",
    )
    p.add_argument("--questions", type=int, default=50, help="dev questions per hop count (1, 2, 3)")
    p.add_argument("--resume-factor", type=int, default=1)
    p.add_argument("--kill-after", type=int, default=20, help="embedding chunks saved before the kill")
    p.add_argument("--work", type=Path, default=cache_root() / "scale")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[2] / "docs" / "benchmarks_scale.md")
    p.add_argument("--nice", type=int, default=10)
    p.add_argument(
        "--jobs", type=int, default=1, help="ingests after 1× run side by side, and so do latency and the server stages"
    )
    p.add_argument("--only", default="", help="comma-separated stages to run (default: all)")
    p.add_argument("--tag", default="", help="write results-TAG.json (a run beside another)")
    p.add_argument("--redo", default="", help="comma-separated stages to run again")
    p.add_argument("--stage", help=argparse.SUPPRESS)
    p.add_argument("--factor", type=int, help=argparse.SUPPRESS)
    p.add_argument("--kb-dir", type=Path, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def paths(work: Path, factor: int) -> tuple[Path, Path]:
    """The synthetic kb.txt and the KB directory of one factor."""
    return work / f"x{factor}" / "kb.txt", work / f"x{factor}" / "kb"


def _stage(args: argparse.Namespace) -> dict:
    from hybridrag.evals.scale import ingest_stages as ist

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
            from hybridrag.evals.scale import query_stages

            return getattr(query_stages, "index_build" if args.stage == "index" else args.stage)(kb_dir, args)
        case "server":
            from hybridrag.evals.scale.server_stages import server

            return server(kb_dir, args)
    raise SystemExit(f"unknown stage {args.stage!r}")


def _side_by_side(jobs: int, calls: list) -> None:
    with ThreadPoolExecutor(max(jobs, 1)) as pool:
        for fut in [pool.submit(c) for c in calls]:
            fut.result()


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    if args.stage:
        res = _stage(args)
        res["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps(res))  # noqa: T201
        return
    from hybridrag.evals.scale.runner import Runner
    from hybridrag.evals.scale.synth import write_synthetic

    if 1 not in args.factors:
        raise SystemExit("--factors must include 1: every growth ratio is to 1×")
    args.work.mkdir(parents=True, exist_ok=True)
    run = Runner(
        args.work,
        args.nice,
        set(filter(None, args.redo.split(","))),
        log=lambda m: print(m, file=sys.stderr, flush=True),
        tag=args.tag,
    )  # noqa: T201
    only = set(filter(None, args.only.split(",")))
    want = lambda stage: not only or stage in only  # noqa: E731
    common = ["--embed-factors", ",".join(map(str, args.embed_factors)), "--questions", str(args.questions)]
    src = datasets_dir() / "metaqa" / "kb.txt"
    for f in args.factors:
        if not paths(args.work, f)[0].exists():
            run.results[f"synth@{f}"] = write_synthetic(src, paths(args.work, f)[0], f)
            run.save()
    for f in args.factors:
        if want("graph"):
            run.run("graph", f)
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
    if want("ingest"):
        run.run("ingest", 1, *common)
    _side_by_side(args.jobs, jobs)  # --jobs > 1: these ingests run side by side
    for stage in ("load", "dense", "index"):
        for f in args.factors:
            if want(stage):
                run.run(stage, f, *common)
    tail = [lambda: run.run("latency", max(args.factors), *common, "--factors", ",".join(map(str, args.factors)))]
    tail = tail if want("latency") else []
    tail += [lambda f=f: run.run("server", f, *common) for f in args.neo4j_factors if want("server")]
    _side_by_side(args.jobs, tail)
    if only:  # a partial run beside another: the full run writes the report
        return
    from hybridrag.evals.scale.report import write_report

    write_report(args, run.results)


if __name__ == "__main__":
    main()
