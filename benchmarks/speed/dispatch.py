"""``python -m benchmarks dispatch``: fusion against its floor, and what LangGraph dispatch costs.

Full MetaQA KB, 1-hop dev questions; every variant runs once per question, the order reversed on
every other question (machine load hits each alike), after one warm-up call each and an untimed
bare call per question (its regexes compiled, so no variant pays for going first):
*floor* (``kb.embed`` + one FAISS search + the top hit's 1-hop triples); *bare* (fusion's default
work as plain calls, :func:`bare_fusion`); *direct* (the node functions called in order by hand,
state merged by its reducers); *invoke* (``graph.invoke``); each again with the query vector
precomputed (*embedding cached*); *LangGraph alone* (the graph's shape with no-op nodes returning
a real question's updates, and a minimal 3-node graph); *steps as plain calls* (fusion's tool-run
steps called directly); *seed passages searched* (the lexical search for seed passages run on a KB
holding none); with ``--before REV``, *invoke, before* (``context_of`` /
``resolve_kb`` of ``graphs/runtime.py`` at REV, i.e. without the per-run memo of ``graphs.runtime``).
Each variant's wall-clock p50 / p95 / mean, and its p50 CPU time of the calling thread (robust to
machine load, which preempts the process). ``--profile``: own time of ``graph.invoke`` by module (cProfile).
Writes its section of ``docs/benchmarks_dispatch.md`` (command, date, commit, machine, load).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
from pathlib import Path
from typing import Any

from benchmarks.common import DOCS, ROOT, arg
from benchmarks.common import metaqa_questions as questions
from benchmarks.speed.dispatch_variants import (  # noqa: F401 - the variants, importable from here
    ALONE,
    MINIMAL,
    C,
    bare_fusion,
    before_common,
    direct,
    floor,
    skeleton,
    swapped,
    variants,
)
from hybridrag.evals.hybrid import metaqa_kb_dir
from hybridrag.evals.markdown import header, provenance, write_section
from hybridrag.evals.timing import load_average, mean, percentile, timed

DOC = DOCS / "benchmarks_dispatch.md"
SECTION = "## Measured: fusion against its floor, and what dispatch costs"
BASIS = ("floor", "bare", "direct", "invoke")


def measure(kb: Any, ctx: Any, qs: list[str], before: str | None = None) -> tuple[dict, dict]:
    """Milliseconds per question of every variant: wall-clock, and CPU time of the calling thread.

    The variants are interleaved per question, the order alternating. Every variant runs in the
    calling thread; what load adds by preempting it is in the wall-clock times, not in the CPU times.
    """
    import hybridrag.graphs.fusion as module

    fns = variants(kb, ctx, module, qs[0], before)
    vecs, real = {q: kb.embed(q) for q in dict.fromkeys(["warm up", *qs])}, kb.embed

    def call(label: str, q: str) -> tuple[float, float]:
        with swapped(kb, embed=lambda t: vecs[t] if t in vecs else real(t)) if label.endswith(C) else swapped(kb):
            _, wall, cpu = timed(fns[label], q)
            return wall * 1e3, cpu * 1e3

    for label in fns:
        call(label, "warm up")
    times: dict[str, list[float]] = {label: [] for label in fns}
    cpus: dict[str, list[float]] = {label: [] for label in fns}
    for i, q in enumerate(qs):
        call("bare" + C, q)  # untimed: compiles the question's name regexes, so no variant pays for going first
        for label in fns if i % 2 == 0 else reversed(fns):
            wall, cpu = call(label, q)
            times[label].append(wall)
            cpus[label].append(cpu)
    return times, cpus


def ratios(s: dict[str, dict]) -> dict[str, float]:
    """The ratios and differences of p50s the report shows."""
    p = {k: v["p50"] for k, v in s.items()}
    cpu = {k: v["cpu_p50"] for k, v in s.items()}
    out = {
        "fusion / floor": p["invoke"] / p["floor"],
        "fusion / floor, CPU time": cpu["invoke"] / cpu["floor"],
        "fusion - floor ms, CPU time": cpu["invoke"] - cpu["floor"],
        "invoke / direct" + C: p["invoke" + C] / p["direct" + C],
        "direct / bare" + C: p["direct" + C] / p["bare" + C],
        "dispatch ms (invoke - direct)" + C: p["invoke" + C] - p["direct" + C],
        "node wrappers ms (direct - bare)" + C: p["direct" + C] - p["bare" + C],
        "dispatch beyond LangGraph alone ms" + C: p["invoke" + C] - p["direct" + C] - p[ALONE],
        "our graph's shape over a minimal one ms (LangGraph alone)": p[ALONE] - p[MINIMAL],
    }
    if (untooled := p.get("invoke, steps as plain calls" + C)) is not None:
        out["tool runs ms (invoke - steps as plain calls)" + C] = p["invoke" + C] - untooled
    if (searched := p.get("invoke, seed passages searched" + C)) is not None:
        out["seed passage search on a KB without passages ms" + C] = searched - p["invoke" + C]
    if "invoke, before" + C in p:
        out["invoke before / after" + C] = p["invoke, before" + C] / p["invoke" + C]
    return out


def profile(graph: Any, ctx: Any, kb: Any, qs: list[str], top: int = 12) -> list[tuple[str, float]]:
    """Own time (ms per question) of ``graph.invoke`` (embedding cached) grouped by module, largest first."""
    vecs, real, prof = {q: kb.embed(q) for q in qs}, kb.embed, cProfile.Profile()
    with swapped(kb, embed=lambda t: vecs[t] if t in vecs else real(t)):
        prof.enable()
        for q in qs:
            graph.invoke({"question": q}, context=ctx)
        prof.disable()
    groups: dict[str, float] = {}
    for (path, _, func), (_, _, own, _, _) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
        parts = Path(path).with_suffix("").parts
        key = (
            ".".join(parts[parts.index("site-packages") + 1 :][:3])
            if "site-packages" in parts
            else (
                ".".join(parts[-2:])
                if path.startswith(str(ROOT))
                else f"builtin {func}"
                if path == "~"
                else f"stdlib {parts[-1]}"
            )
        )
        groups[key] = groups.get(key, 0.0) + own * 1e3 / len(qs)
    return sorted(groups.items(), key=lambda kv: -kv[1])[:top]


def measure_all(
    n: int,
    kb_dir: Path | None = None,
    before: str | None = None,
    with_profile: bool = False,
    qs: list[str] | None = None,
) -> dict:
    """The whole benchmark: p50 / p95 / mean per variant, ratios, load averages, optional profile."""
    from hybridrag.graphs import context_for
    from hybridrag.graphs.runtime import resolve_kb

    ctx = context_for("fusion", kb=str(kb_dir or metaqa_kb_dir()))
    kb, qs, load = resolve_kb(ctx), qs or questions(n), [load_average()[0]]
    times, cpus = measure(kb, ctx, qs, before)
    load.append(load_average()[0])
    s = {
        k: {
            "p50": percentile(ts, 50, "midpoint"),
            "p95": percentile(ts, 95, "nearest"),
            "mean": mean(ts),
            "cpu_p50": percentile(cpus[k], 50, "midpoint"),
            "n": len(ts),
        }
        for k, ts in times.items()
    }
    report = {"stats": s, "ratios": ratios(s), "load": load, "questions": len(qs)}
    if with_profile:
        import hybridrag.graphs.fusion as module

        report["profile"] = profile(module.graph, ctx, kb, qs[:200])
    return report


def render(report: dict, args: argparse.Namespace) -> str:
    """The markdown section: command, date, commit, machine, load, the table and the ratios."""
    cmd = " ".join(
        [
            "python -m benchmarks dispatch",
            f"--questions {args.questions}",
            *([f"--before {args.before}"] if args.before else []),
            *(["--profile"] if args.profile else []),
        ]
    )
    s, load = report["stats"], report["load"]
    loads = f"full MetaQA KB; 1-minute load average {load[0]:.2f} before, {load[1]:.2f} after (a shared machine)."
    lines = [
        *header(SECTION.removeprefix("## "), cmd, provenance(), [loads], level=2)[:-1],
        f"- {report['questions']} MetaQA 1-hop dev questions, every variant once per question, the order "
        "reversed on every other question; one warm-up call each and an untimed bare call per question first; "
        "times in ms; CPU: the calling thread's CPU time (what preemption by other load adds is not in it).",
        "",
        "| variant | p50 | p95 | mean | p50 / floor p50 | CPU p50 |",
        "|---|---|---|---|---|---|",
        *(
            f"| {k} | {v['p50']:.2f} | {v['p95']:.2f} | {v['mean']:.2f} | {v['p50'] / s['floor']['p50']:.2f}x "
            f"| {v['cpu_p50']:.2f} |"
            for k, v in s.items()
        ),
        "",
        "| ratio (of p50s) | value |",
        "|---|---|",
        *(f"| {k} | {v:.2f} |" for k, v in report["ratios"].items()),
    ]
    if report.get("profile"):
        lines += [
            "",
            "Own time of `graph.invoke` (embedding cached) by module, cProfile (inflates all times):",
            "",
            "| module | ms per question |",
            "|---|---|",
            *(f"| {k} | {v:.3f} |" for k, v in report["profile"]),
        ]
    return "\n".join(lines) + "\n"


OPTIONS = [
    arg("--questions", type=int, default=1000),
    arg("--before", help="git revision whose graphs/runtime.py is the 'before' path"),
    arg("--profile", action="store_true"),
    arg("--out", type=Path, default=DOC),
]


def run(args: argparse.Namespace) -> int:
    """Run, then rewrite this benchmark's section of the markdown file (its analysis sections are kept)."""
    text = render(measure_all(args.questions, before=args.before, with_profile=args.profile), args)
    write_section(args.out, text)
    sys.stdout.write(text)
    return 0
