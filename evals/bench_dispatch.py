"""``python -m evals.bench_dispatch``: fusion against its floor, and what LangGraph dispatch costs.

Full MetaQA KB, 1-hop dev questions; every variant runs once per question, the order reversed on
every other question (machine load hits each alike), after one warm-up call each and an untimed
bare call per question (its regexes compiled, so no variant pays for going first):
*floor* (``kb.embed`` + one FAISS search + the top hit's 1-hop triples); *bare* (fusion's default
work as plain calls, :func:`bare_fusion`); *direct* (the node functions called in order by hand,
state merged by its reducers); *invoke* (``graph.invoke``); each again with the query vector
precomputed (*embedding cached*); *LangGraph alone* (the graph's shape with no-op nodes returning
a real question's updates, and a minimal 3-node graph); *steps as plain calls* (fusion's tool-run
steps called directly); with ``--before REV``, *invoke, before* (``context_of`` / ``resolve_kb`` of
``graphs/common.py`` at REV). ``--profile``: own time of ``graph.invoke`` by module (cProfile).
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
import sys
import time
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typing_extensions

from evals.paths import datasets_dir, metaqa_kb_dir

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks_dispatch.md"
SECTION = "## Measured: fusion against its floor, and what dispatch costs"
BASIS = ("floor", "bare", "direct", "invoke")
C = ", embedding cached"
ALONE, MINIMAL = "LangGraph alone (no-op nodes)", "LangGraph alone, minimal graph"


def questions(n: int, split: str = "dev_1hop.txt") -> list[str]:
    """The first ``n`` MetaQA questions of ``split``, brackets around the topic entity removed."""
    lines = (datasets_dir() / "metaqa" / split).read_text(encoding="utf-8").splitlines()[:n]
    if not lines:
        raise ValueError(f"no questions in {split}")
    return [ln.split("\t")[0].replace("[", "").replace("]", "") for ln in lines]


def floor(kb: Any, k: int) -> Callable[[str], Any]:
    """One query embedding + one FAISS search for ``k`` hits + the 1-hop triples of the top hit."""
    def run(q: str) -> Any:
        doc = kb.docs[int(kb.dense.search(kb.embed(q), k)[0][0])]
        return kb.graph.neighbors([doc.entity_id or doc.id])
    return run


def bare_fusion(kb: Any, ctx: Any) -> Callable[[str], dict]:
    """Fusion's default path (hybrid mode, 'evidence' scoring, 1 hop) as plain calls."""
    from agents.fusion import scoring as fs
    from agents.fusion.paths import score_graph
    from tools.retrieval import mentions_in

    if (ctx.mode, ctx.scoring, ctx.hops) != ("hybrid", "evidence", 1):
        raise ValueError("bare_fusion reproduces the default settings only (hybrid, evidence, 1 hop)")

    def run(q: str) -> dict:
        named = mentions_in(kb, q)
        vec = fs.hits_to_candidates(kb, kb.dense_search(q, ctx.k1), "vector") if ctx.k1 > 0 else []
        seeds = list(dict.fromkeys(fs.seeds_of(vec)[:1] + named))
        text = fs.seeded_passages(kb, seeds, ctx.seed_passages)
        scored = score_graph(kb, q, seeds, ctx.top_k, ctx.tokenizer, 1, answer_aware=True)
        names = kb.names({e for path, _, _ in scored for t in path for e in (t.head, t.tail)})
        graph = []
        for path, s, n in scored:
            steps = [t.verbalise(names) for t in path]
            graph.append(fs.Candidate(n, "entity", names[n], s, "graph", " / ".join(steps), steps, n,
                                      [" / ".join(steps)]))
        subjects = kb.names([*seeds, *named])
        pool = fs.rank_by_evidence(kb, [*vec, *text], graph, ctx.epsilon, set(named), subjects, q, ctx.tokenizer)
        return {"answer": fs.answer_of(kb, q, pool, set(named), subjects, ctx.tokenizer),
                "ranked": [c.as_ranked() for c in pool[: ctx.top_k]]}
    return run


def direct(builder: Any, ctx: Any, record: dict | None = None) -> Callable[[str], dict]:
    """Walk the builder's edges calling each node's function, merging updates by the state's reducers
    (each node's update is kept in ``record`` when given)."""
    from langgraph.graph import END, START
    from langgraph.runtime import Runtime

    hints = typing.get_type_hints(builder.state_schema, include_extras=True)
    reducers = {k: h.__metadata__[-1] for k, h in hints.items() if hasattr(h, "__metadata__")}
    edges, out_keys = dict(builder.edges), typing.get_type_hints(builder.output_schema)

    def run(q: str) -> dict:
        runtime, state, node = Runtime(context=ctx), {"question": q}, edges[START]
        while node != END:
            update = builder.nodes[node].runnable.func(state, runtime)
            if record is not None:
                record[node] = update
            for key, value in update.items():
                state[key] = reducers[key](state[key], value) if key in reducers and key in state else value
            if node in builder.branches:
                (branch,) = builder.branches[node].values()
                label = branch.path.func(state)
                node = branch.ends[label] if branch.ends else label
            else:
                node = edges[node]
        return {k: v for k, v in state.items() if k in out_keys}
    return run


def skeleton(builder: Any, updates: dict[str, dict], minimal: bool = False) -> Any:
    """The graph's shape (state with its reducers, input/output/context schemas, edges, route) compiled
    with nodes returning ``updates`` (one real question's) at once: what LangGraph alone costs for it.
    ``minimal``: the same nodes in a row over a plain state (no reducer, schema, route or context)."""
    from langgraph.graph import END, START, StateGraph

    if minimal:
        plain = typing_extensions.TypedDict("Plain", dict.fromkeys(typing.get_type_hints(builder.state_schema), Any),
                                            total=False)
        sk = StateGraph(plain)
    else:
        sk = StateGraph(builder.state_schema, context_schema=builder.context_schema,
                        input_schema=builder.input_schema, output_schema=builder.output_schema)
    for name in builder.nodes:
        sk.add_node(name, lambda state, u=updates.get(name, {}): u)
    for a, b in zip([START, *builder.nodes], [*builder.nodes, END], strict=True) if minimal else builder.edges:
        sk.add_edge(a, b)
    for src, branches in {} if minimal else builder.branches.items():
        for br in branches.values():
            sk.add_conditional_edges(src, br.path.func, br.ends)
    return sk.compile()


def before_common(rev: str) -> types.ModuleType:
    """``graphs/common.py`` as it was at git revision ``rev`` (a separate module object)."""
    src = subprocess.run(["git", "show", f"{rev}:graphs/common.py"], check=True, capture_output=True, text=True,
                         cwd=DOC.parents[1]).stdout
    mod = sys.modules["graphs._common_before"] = types.ModuleType("graphs._common_before")
    exec(compile(src, f"graphs/common.py@{rev}", "exec"), mod.__dict__)  # noqa: S102 - our own file
    return mod


@contextmanager
def swapped(obj: Any, **attrs: Any) -> Iterator[None]:
    """Temporarily replace attributes of a module or object (its own ``__dict__``)."""
    saved = {k: obj.__dict__.get(k, swapped) for k in attrs}
    obj.__dict__.update(attrs)
    try:
        yield
    finally:
        for k, v in saved.items():
            obj.__dict__.pop(k) if v is swapped else obj.__dict__.__setitem__(k, v)


def variants(kb: Any, ctx: Any, module: Any, sample: str, before: str | None) -> dict[str, Callable[[str], Any]]:
    """Every variant's callable by label; ``sample``: the question whose node updates the no-op nodes return."""
    def invoke(q: str) -> dict:
        return module.graph.invoke({"question": q}, context=ctx)

    def patched(fn: Callable, **attrs: Any) -> Callable[[str], Any]:
        def run(q: str) -> Any:
            with swapped(module, **attrs):
                return fn(q)
        return run

    work = {"floor": floor(kb, ctx.k1), "bare": bare_fusion(kb, ctx), "direct": direct(module.builder, ctx),
            "invoke": invoke}
    updates: dict[str, dict] = {}
    direct(module.builder, ctx, updates)(sample)
    alone, minimal = skeleton(module.builder, updates), skeleton(module.builder, updates, minimal=True)
    out = {**work, **{k + C: v for k, v in work.items()}, ALONE: lambda q: alone.invoke({"question": q}, context=ctx),
           MINIMAL: lambda q: minimal.invoke({"question": q})}
    if hasattr(module, "_step") and hasattr(module, "STEPS"):  # retrieval steps run as LangChain tools
        plain = {name: step.default(kb) for name, step in module.STEPS.items()}
        out["invoke, steps as plain calls" + C] = patched(invoke, _step=lambda _c, _k, name, **a: plain[name](**a)[0])
    if before:
        old = before_common(before)
        out["invoke, before" + C] = patched(invoke, context_of=old.context_of, resolve_kb=old.resolve_kb)
    return out


def measure(kb: Any, ctx: Any, qs: list[str], before: str | None = None) -> dict[str, list[float]]:
    """Milliseconds per question of every variant, interleaved per question, order alternating."""
    import graphs.fusion as module

    fns = variants(kb, ctx, module, qs[0], before)
    vecs, real = {q: kb.embed(q) for q in dict.fromkeys(["warm up", *qs])}, kb.embed

    def call(label: str, q: str) -> float:
        with swapped(kb, embed=lambda t: vecs[t] if t in vecs else real(t)) if label.endswith(C) else swapped(kb):
            t = time.perf_counter()
            fns[label](q)
            return (time.perf_counter() - t) * 1e3

    for label in fns:
        call(label, "warm up")
    times: dict[str, list[float]] = {label: [] for label in fns}
    for i, q in enumerate(qs):
        call("bare" + C, q)  # untimed: compiles the question's name regexes, so no variant pays for going first
        for label in fns if i % 2 == 0 else reversed(fns):
            times[label].append(call(label, q))
    return times


def ratios(s: dict[str, dict]) -> dict[str, float]:
    """The ratios and differences of p50s the report shows."""
    p = {k: v["p50"] for k, v in s.items()}
    out = {"fusion / floor": p["invoke"] / p["floor"], "invoke / direct" + C: p["invoke" + C] / p["direct" + C],
           "direct / bare" + C: p["direct" + C] / p["bare" + C],
           "dispatch ms (invoke - direct)" + C: p["invoke" + C] - p["direct" + C],
           "node wrappers ms (direct - bare)" + C: p["direct" + C] - p["bare" + C],
           "dispatch beyond LangGraph alone ms" + C: p["invoke" + C] - p["direct" + C] - p[ALONE],
           "our graph's shape over a minimal one ms (LangGraph alone)": p[ALONE] - p[MINIMAL]}
    if (untooled := p.get("invoke, steps as plain calls" + C)) is not None:
        out["tool runs ms (invoke - steps as plain calls)" + C] = p["invoke" + C] - untooled
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
        key = ".".join(parts[parts.index("site-packages") + 1:][:3]) if "site-packages" in parts else (
            ".".join(parts[-2:]) if path.startswith(str(DOC.parents[1])) else
            f"builtin {func}" if path == "~" else f"stdlib {parts[-1]}")
        groups[key] = groups.get(key, 0.0) + own * 1e3 / len(qs)
    return sorted(groups.items(), key=lambda kv: -kv[1])[:top]


def run(n: int, kb_dir: Path | None = None, before: str | None = None, with_profile: bool = False,
        qs: list[str] | None = None) -> dict:
    """The whole benchmark: p50 / p95 / mean per variant, ratios, load averages, optional profile."""
    from graphs import context_for
    from graphs.common import resolve_kb

    ctx = context_for("fusion", kb=str(kb_dir or metaqa_kb_dir()))
    kb, qs, load = resolve_kb(ctx), qs or questions(n), [os.getloadavg()[0]]
    times = measure(kb, ctx, qs, before)
    load.append(os.getloadavg()[0])
    s = {k: {"p50": statistics.median(ts), "p95": sorted(ts)[round(0.95 * (len(ts) - 1))],
             "mean": statistics.fmean(ts), "n": len(ts)} for k, ts in times.items()}
    report = {"stats": s, "ratios": ratios(s), "load": load, "questions": len(qs)}
    if with_profile:
        import graphs.fusion as module

        report["profile"] = profile(module.graph, ctx, kb, qs[:200])
    return report


def render(report: dict, args: argparse.Namespace) -> str:
    """The markdown section: command, date, commit, machine, load, the table and the ratios."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=DOC.parents[1]).stdout.strip()
    cmd = " ".join(["python -m evals.bench_dispatch", f"--questions {args.questions}",
                    *([f"--before {args.before}"] if args.before else []), *(["--profile"] if args.profile else [])])
    s, load, when = report["stats"], report["load"], time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [SECTION, "", f"- Command: `{cmd}`",
             f"- Date: {when}; commit `{commit}`; {os.cpu_count()} cores, {platform.machine()}; full MetaQA KB; "
             f"1-minute load average {load[0]:.2f} before, {load[1]:.2f} after (a shared machine).",
             f"- {report['questions']} MetaQA 1-hop dev questions, every variant once per question, the order "
             "reversed on every other question; one warm-up call each and an untimed bare call per question first; "
             "times in ms.", "",
             "| variant | p50 | p95 | mean | p50 / floor p50 |", "|---|---|---|---|---|",
             *(f"| {k} | {v['p50']:.2f} | {v['p95']:.2f} | {v['mean']:.2f} | {v['p50'] / s['floor']['p50']:.2f}x |"
               for k, v in s.items()), "", "| ratio (of p50s) | value |", "|---|---|",
             *(f"| {k} | {v:.2f} |" for k, v in report["ratios"].items())]
    if report.get("profile"):
        lines += ["", "Own time of `graph.invoke` (embedding cached) by module, cProfile (inflates all times):", "",
                  "| module | ms per question |", "|---|---|", *(f"| {k} | {v:.3f} |" for k, v in report["profile"])]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Parse flags, run, rewrite this benchmark's section of the markdown file."""
    from evals.fusion_docs import write_section

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=1000)
    p.add_argument("--before", help="git revision whose graphs/common.py is the 'before' path")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--out", type=Path, default=DOC)
    args = p.parse_args()
    text = render(run(args.questions, before=args.before, with_profile=args.profile), args)
    write_section(args.out, text)  # the file's analysis sections are kept
    print(text)  # noqa: T201


if __name__ == "__main__":
    main()
