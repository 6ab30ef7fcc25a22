"""``python -m evals.bench_dispatch``: fusion against its floor, and what LangGraph dispatch costs.

Full MetaQA KB, 1-hop dev questions; every variant runs once per question, the order reversed on
every other question (machine load hits each alike), after one warm-up call each and an untimed
bare call per question (its regexes compiled, so no variant pays for going first):
*floor* (``kb.embed`` + one FAISS search + the top hit's 1-hop triples); *bare* (fusion's default
work as plain calls, :func:`bare_fusion`); *direct* (the node functions called in order by hand,
state merged by its reducers); *invoke* (``graph.invoke``); each again with the query vector
precomputed (*embedding cached*); *LangGraph alone* (the graph's shape with no-op nodes returning
a real question's updates, and a minimal 3-node graph); *steps as plain calls* (fusion's tool-run
steps called directly); *seed passages searched* (the lexical search for seed passages run on a KB
holding none, as before commit 39b7106); with ``--before REV``, *invoke, before* (``context_of`` /
``resolve_kb`` of ``graphs/runtime.py`` at REV, i.e. without the per-run memo of ``graphs.runtime``).
Each variant's wall-clock p50 / p95 / mean, and its p50 CPU time of the calling thread (robust to
machine load, which preempts the process). ``--profile``: own time of ``graph.invoke`` by module (cProfile).
Writes its section of ``docs/benchmarks_dispatch.md`` (command, date, commit, machine, load).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from hybridrag.evals.bench_dispatch_variants import (  # noqa: F401 - the variants, importable from here
    ALONE,
    MINIMAL,
    C,
    bare_fusion,
    before_common,
    direct,
    floor,
    questions,
    skeleton,
    swapped,
    variants,
)
from hybridrag.evals.paths import metaqa_kb_dir

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks_dispatch.md"
SECTION = "## Measured: fusion against its floor, and what dispatch costs"
BASIS = ("floor", "bare", "direct", "invoke")


def measure(kb: Any, ctx: Any, qs: list[str], before: str | None = None) -> tuple[dict, dict]:
    """Milliseconds per question of every variant, interleaved per question, order alternating: wall-clock
    times, and the CPU time of the calling thread (every variant runs there; what load adds by preempting
    it is in the first, not in the second).
    """
    import hybridrag.graphs.fusion as module

    fns = variants(kb, ctx, module, qs[0], before)
    vecs, real = {q: kb.embed(q) for q in dict.fromkeys(["warm up", *qs])}, kb.embed

    def call(label: str, q: str) -> tuple[float, float]:
        with swapped(kb, embed=lambda t: vecs[t] if t in vecs else real(t)) if label.endswith(C) else swapped(kb):
            t, cpu = time.perf_counter(), time.thread_time()
            fns[label](q)
            return (time.perf_counter() - t) * 1e3, (time.thread_time() - cpu) * 1e3

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
                if path.startswith(str(DOC.parents[1]))
                else f"builtin {func}"
                if path == "~"
                else f"stdlib {parts[-1]}"
            )
        )
        groups[key] = groups.get(key, 0.0) + own * 1e3 / len(qs)
    return sorted(groups.items(), key=lambda kv: -kv[1])[:top]


def run(
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
    kb, qs, load = resolve_kb(ctx), qs or questions(n), [os.getloadavg()[0]]
    times, cpus = measure(kb, ctx, qs, before)
    load.append(os.getloadavg()[0])
    s = {
        k: {
            "p50": statistics.median(ts),
            "p95": sorted(ts)[round(0.95 * (len(ts) - 1))],
            "mean": statistics.fmean(ts),
            "cpu_p50": statistics.median(cpus[k]),
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
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=DOC.parents[1]
    ).stdout.strip()
    cmd = " ".join(
        [
            "python -m evals.bench_dispatch",
            f"--questions {args.questions}",
            *([f"--before {args.before}"] if args.before else []),
            *(["--profile"] if args.profile else []),
        ]
    )
    s, load, when = report["stats"], report["load"], time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        SECTION,
        "",
        f"- Command: `{cmd}`",
        f"- Date: {when}; commit `{commit}`; {os.cpu_count()} cores, {platform.machine()}; full MetaQA KB; "
        f"1-minute load average {load[0]:.2f} before, {load[1]:.2f} after (a shared machine).",
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


def main() -> None:
    """Parse flags, run, rewrite this benchmark's section of the markdown file."""
    from hybridrag.evals.fusion_docs import write_section

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=1000)
    p.add_argument("--before", help="git revision whose graphs/runtime.py is the 'before' path")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--out", type=Path, default=DOC)
    args = p.parse_args()
    text = render(run(args.questions, before=args.before, with_profile=args.profile), args)
    write_section(args.out, text)  # the file's analysis sections are kept
    print(text)  # noqa: T201


if __name__ == "__main__":
    main()
