"""MoR's traversal at MetaQA 1× / 4× / 16× and on the Prime-sized graph: today's against a baseline commit.

``python -m benchmarks mor-growth [--factors 1,4,16] [--questions 20] [--prime-questions 8]
[--baseline REV] [--work DIR] [--out docs/benchmarks_mor_scale.md]``

The KBs are :mod:`benchmarks.scale.mor_build`'s (built once under ``--work``). The timed module
is the scale benchmark's ``mor: traversal`` (:mod:`benchmarks.speed.modules_methods`: every route
of the gold plan, the intersection, candidate selection, fillers and the critique; the question's
embedding charged to it), run with today's ``agents/mor/traversal.py`` and with the one at
``--baseline`` (:mod:`benchmarks.scale.mor_baseline`). Questions are interleaved across the KBs
and the two versions alternate which runs first, so a change in the machine's load hits both
alike. Each question's candidate ids are compared between the versions ("same outputs").
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from benchmarks.common import DOCS, arg, command
from benchmarks.scale.modules import Case, percentiles, pipeline
from hybridrag.evals.timing import load_average
from hybridrag.kb.sample import cache_root

OPTIONS = [
    arg("--factors", default="1,4,16", help="comma-separated MetaQA factors"),
    arg("--questions", type=int, default=20, help="MetaQA dev questions per hop count (1, 2, 3) on each factor"),
    arg("--prime-questions", type=int, default=8, help="walk questions per Prime hop count (0: no Prime)"),
    arg("--prime-hops", default="3", help="comma-separated hop counts of the Prime questions"),
    arg("--baseline", default="d094a84", help="git revision whose agents/mor/traversal.py is the baseline"),
    arg("--seed", type=int, default=0),
    arg("--warm", type=int, default=2, help="untimed questions first on each KB"),
    arg("--work", type=Path, default=cache_root() / "mor-scale"),
    arg("--out", type=Path, default=DOCS / "benchmarks_mor_scale.md"),
]
VERSIONS = ("baseline", "today")


def time_versions(kbs: dict, qs: dict[str, list[Case]], modules: dict, warm: int) -> dict:
    """{kb key: {version: {"ms": [...], "ids": [...]}}}, questions interleaved across keys, versions alternating."""
    from benchmarks.scale.mor_baseline import swapped
    from benchmarks.speed.modules_methods import forget_queries

    out: dict = {key: {v: {"ms": [], "ids": []} for v in modules} for key in kbs}
    n = min(len(v) for v in qs.values())
    for i in range(-warm, n):
        for key in kbs:
            c = qs[key][i % n]
            for version in list(modules)[:: 1 if i % 2 == 0 else -1]:
                with swapped(modules[version]):
                    call = dict(pipeline(kbs[key], c, "mor"))["mor: traversal"]
                    forget_queries([c.question, c.rec.skyline()])
                    t = time.perf_counter()
                    ids = call()
                    ms = (time.perf_counter() - t) * 1000
                if i >= 0:
                    out[key][version]["ms"].append(ms)
                    out[key][version]["ids"].append(ids)
    return out


def summary(timed: dict) -> dict:
    """p50/p95 per version, and how many questions gave the same candidate ids in both."""
    same = sum(a == b for a, b in zip(*(timed[v]["ids"] for v in VERSIONS), strict=True))
    return {
        **{v: percentiles(timed[v]["ms"]) for v in VERSIONS},
        "same": same,
        "n": len(timed["today"]["ids"]),
    }


def _metaqa(args, modules: dict) -> dict:  # noqa: ANN001 - the suite's parsed arguments
    from benchmarks.scale.modules import cases
    from benchmarks.scale.mor_build import build
    from hybridrag.evals.hybrid import datasets_root
    from hybridrag.kb.base import KnowledgeBase

    factors = [int(f) for f in args.factors.split(",") if f]
    base = cache_root() / "metaqa-full"
    dirs = {f: build(args.work, f, base, datasets_root() / "metaqa") for f in factors}
    kbs = {f"x{f}": KnowledgeBase(d) for f, d in dirs.items()}
    qs = {f"x{f}": cases(datasets_root(), args.questions, f, args.seed) for f in factors}
    timed = time_versions(kbs, qs, modules, args.warm)
    res = {}
    for key, kb in kbs.items():
        hops = [c.rec.hops for c in qs[key]]
        by_hop = {h: {v: _pick(timed[key][v], hops, h) for v in VERSIONS} for h in sorted(set(hops))}
        res[key] = {
            **summary(timed[key]),
            **kb.graph.counts(),
            "by_hop": {h: summary(t) for h, t in by_hop.items()},
        }
    return res


def _pick(timed: dict, hops: list[int], h: int) -> dict:
    return {k: [x for x, hh in zip(v, hops, strict=True) if hh == h] for k, v in timed.items()}


def _prime(args, modules: dict) -> dict:  # noqa: ANN001 - the suite's parsed arguments
    from benchmarks.scale.mor_build import build_prime
    from benchmarks.scale.prime_questions import sample_cases
    from hybridrag.kb.base import KnowledgeBase

    kb = KnowledgeBase(build_prime(args.work))
    res = {}
    for h in [int(x) for x in args.prime_hops.split(",") if x]:
        qs = {"prime": sample_cases(kb.graph, args.prime_questions, args.seed, hops_list=(h,))}
        res[f"{h}-hop"] = {
            **summary(time_versions({"prime": kb}, qs, modules, args.warm)["prime"]),
            **kb.graph.counts(),
        }
    return res


def run(args) -> int:  # noqa: ANN001 - the suite's parsed arguments
    """Build what is missing, time both versions, write the page."""
    from benchmarks.scale import mor_report
    from benchmarks.scale.mor_baseline import load
    from hybridrag.agents.mor import traversal

    modules = {"baseline": load(args.baseline), "today": traversal}
    started, loads = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), [load_average()[0]]
    results = {"metaqa": _metaqa(args, modules)}
    loads.append(load_average()[0])
    if args.prime_questions > 0:
        results["prime"] = _prime(args, modules)
        loads.append(load_average()[0])
    results.update(command=command(args), started=started, loads=loads, baseline=args.baseline)
    args.work.mkdir(parents=True, exist_ok=True)
    (args.work / "results.json").write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    args.out.write_text(mor_report.page(results, args.out), encoding="utf-8")
    return 0
