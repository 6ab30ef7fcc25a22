"""``python -m evals.bench_dispatch``: fusion against its floor, and what LangGraph dispatch costs.

On the full MetaQA KB and its 1-hop dev questions, in one process and one run, each question
goes through every variant below once, the order reversed on every other question so that
machine load hits each alike (one warm-up call of each first):

- *floor*: one query embedding (``kb.embed``) + one FAISS search + the 1-hop neighbours of the top hit;
- *bare*: the work of fusion's nodes (default settings) called as plain functions, no LangGraph,
  no context checks, no trace (:func:`bare_fusion`; its answer and ranking equal the graph's);
- *direct*: the graph's node functions called in order by hand, with the state merged by the
  state's reducers (what the nodes themselves add: context checks, KB lookup, trace, plain dicts);
- *invoke*: ``graph.invoke`` with the default context;
- each again with the query vector precomputed (*embedding cached*), isolating the dispatch;
- with ``--before REV``, *invoke, before*: the graph with ``context_of`` / ``resolve_kb`` taken from
  ``graphs/common.py`` at git revision REV, to show a change of ours in the same run.

``--profile`` adds a cProfile of ``graph.invoke`` (embedding cached), its own time grouped by module.
Results go to ``docs/benchmarks_dispatch.md`` (command, date, commit, machine, load average).
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

from evals.paths import datasets_dir, metaqa_kb_dir

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks_dispatch.md"
BASIS = ("floor", "bare", "direct", "invoke")


def questions(n: int, split: str = "dev_1hop.txt") -> list[str]:
    """The first ``n`` MetaQA questions of ``split``, brackets around the topic entity removed."""
    lines = (datasets_dir() / "metaqa" / split).read_text(encoding="utf-8").splitlines()[:n]
    if not lines:
        raise ValueError(f"no questions in {split}")
    return [ln.split("\t")[0].replace("[", "").replace("]", "") for ln in lines]


def floor(kb: Any, k: int) -> Callable[[str], Any]:
    """One query embedding + one FAISS search for ``k`` hits + the 1-hop triples of the top hit."""
    def run(q: str) -> Any:
        ids, _ = kb.dense.search(kb.embed(q), k)
        doc = kb.docs[int(ids[0])]
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
            fact = " / ".join(steps)
            graph.append(fs.Candidate(n, "entity", names[n], s, "graph", fact, steps, n, [fact]))
        subjects = kb.names([*seeds, *named])
        pool = fs.rank_by_evidence(kb, [*vec, *text], graph, ctx.epsilon, set(named), subjects, q, ctx.tokenizer)
        top = pool[: ctx.top_k]
        return {"answer": fs.answer_of(kb, q, pool, set(named), subjects, ctx.tokenizer),
                "ranked": [c.as_ranked() for c in top]}
    return run


def direct(builder: Any, ctx: Any, record: dict | None = None) -> Callable[[str], dict]:
    """Walk the builder's edges calling each node's function, merging updates by the state's reducers
    (each node's update is kept in ``record`` when given)."""
    from langgraph.graph import END, START
    from langgraph.runtime import Runtime

    hints = typing.get_type_hints(builder.state_schema, include_extras=True)
    reducers = {k: h.__metadata__[-1] for k, h in hints.items() if hasattr(h, "__metadata__")}
    edges = dict(builder.edges)
    out_keys = typing.get_type_hints(builder.output_schema)

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


def skeleton(builder: Any, updates: dict[str, dict]) -> Any:
    """The graph's shape (state, schemas, context, edges, routes) compiled with nodes that return
    ``updates`` (one real question's) at once: what LangGraph alone costs for this graph."""
    from langgraph.graph import StateGraph

    sk = StateGraph(builder.state_schema, context_schema=builder.context_schema,
                    input_schema=builder.input_schema, output_schema=builder.output_schema)
    for name in builder.nodes:
        sk.add_node(name, lambda state, runtime, u=updates.get(name, {}): u)
    for a, b in builder.edges:
        sk.add_edge(a, b)
    for src, branches in builder.branches.items():
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
def swapped(module: Any, **attrs: Any) -> Iterator[None]:
    """Temporarily replace ``module``'s attributes (for the 'before' variant and the cached embedding)."""
    saved = {k: module.__dict__.get(k, swapped) for k in attrs}
    module.__dict__.update(attrs)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is swapped:
                del module.__dict__[k]
            else:
                module.__dict__[k] = v


def variants(kb: Any, ctx: Any, module: Any, sample: str, before: str | None) -> dict[str, Callable[[str], Any]]:
    """Every variant's callable, by label (embedding cached ones marked); ``sample`` is the question
    whose node updates the no-op nodes of the LangGraph-alone variant return."""
    work = {"floor": floor(kb, ctx.k1), "bare": bare_fusion(kb, ctx), "direct": direct(module.builder, ctx),
            "invoke": lambda q: module.graph.invoke({"question": q}, context=ctx)}
    out = dict(work)
    out.update({f"{k}, embedding cached": v for k, v in work.items()})
    updates: dict[str, dict] = {}
    direct(module.builder, ctx, updates)(sample)
    alone = skeleton(module.builder, updates)
    out["LangGraph alone (no-op nodes)"] = lambda q: alone.invoke({"question": q}, context=ctx)
    if hasattr(module, "_step") and hasattr(module, "STEPS"):  # retrieval steps run as LangChain tools
        plain = {name: step.default(kb) for name, step in module.STEPS.items()}

        def untooled(q: str) -> dict:
            with swapped(module, _step=lambda _ctx, _kb, name, **args: plain[name](**args)[0]):
                return work["invoke"](q)
        out["invoke, steps as plain calls, embedding cached"] = untooled
    if before:
        old = before_common(before)

        def old_invoke(q: str) -> dict:
            with swapped(module, context_of=old.context_of, resolve_kb=old.resolve_kb):
                return work["invoke"](q)
        out["invoke, before, embedding cached"] = old_invoke
    return out


def measure(kb: Any, ctx: Any, qs: list[str], before: str | None = None) -> dict[str, list[float]]:
    """Milliseconds per question of every variant, interleaved per question, order alternating."""
    import graphs.fusion as module

    fns = variants(kb, ctx, module, qs[0], before)
    vecs = {q: kb.embed(q) for q in dict.fromkeys(["warm up", *qs])}
    real = kb.embed

    def cached(text: str) -> Any:
        vec = vecs.get(text)
        return real(text) if vec is None else vec

    def call(label: str, q: str) -> float:
        with swapped(kb, embed=cached) if "embedding cached" in label else swapped(kb):
            t = time.perf_counter()
            fns[label](q)
            return (time.perf_counter() - t) * 1e3

    for label in fns:
        call(label, "warm up")
    times: dict[str, list[float]] = {label: [] for label in fns}
    for i, q in enumerate(qs):
        for label in fns if i % 2 == 0 else reversed(fns):
            times[label].append(call(label, q))
    return times


def stats(ts: list[float]) -> dict[str, float]:
    """p50 / p95 / mean in ms, and n."""
    ordered = sorted(ts)
    return {"p50": statistics.median(ts), "p95": ordered[round(0.95 * (len(ts) - 1))],
            "mean": statistics.fmean(ts), "n": len(ts)}


def ratios(s: dict[str, dict]) -> dict[str, float]:
    """The ratios the issue asks for, of p50s."""
    c = ", embedding cached"
    out = {"fusion / floor": s["invoke"]["p50"] / s["floor"]["p50"],
           "invoke / direct" + c: s["invoke" + c]["p50"] / s["direct" + c]["p50"],
           "direct / bare" + c: s["direct" + c]["p50"] / s["bare" + c]["p50"],
           "dispatch ms (invoke - direct)" + c: s["invoke" + c]["p50"] - s["direct" + c]["p50"],
           "node wrappers ms (direct - bare)" + c: s["direct" + c]["p50"] - s["bare" + c]["p50"],
           "dispatch beyond LangGraph alone ms" + c: s["invoke" + c]["p50"] - s["direct" + c]["p50"]
           - s["LangGraph alone (no-op nodes)"]["p50"]}
    if "invoke, steps as plain calls" + c in s:
        out["tool runs ms (invoke - steps as plain calls)" + c] = s["invoke" + c]["p50"] - s[
            "invoke, steps as plain calls" + c]["p50"]
    if "invoke, before" + c in s:
        out["invoke before / after" + c] = s["invoke, before" + c]["p50"] / s["invoke" + c]["p50"]
    return out


def profile(graph: Any, ctx: Any, kb: Any, qs: list[str], top: int = 12) -> list[tuple[str, float]]:
    """Own time (ms per question) of ``graph.invoke`` (embedding cached) grouped by module, largest first."""
    vecs = {q: kb.embed(q) for q in qs}
    prof = cProfile.Profile()
    with swapped(kb, embed=lambda t: vecs[t] if t in vecs else type(kb).embed(kb, t)):
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
    """The whole benchmark: stats per variant, ratios, load averages, optional profile."""
    from graphs import context_for
    from graphs.common import resolve_kb

    ctx = context_for("fusion", kb=str(kb_dir or metaqa_kb_dir()))
    kb = resolve_kb(ctx)
    qs = qs or questions(n)
    load = [os.getloadavg()[0]]
    times = measure(kb, ctx, qs, before)
    load.append(os.getloadavg()[0])
    s = {label: stats(ts) for label, ts in times.items()}
    report = {"stats": s, "ratios": ratios(s), "load": load, "questions": len(qs)}
    if with_profile:
        import graphs.fusion as module

        report["profile"] = profile(module.graph, ctx, kb, qs[:200])
    return report


def render(report: dict, args: argparse.Namespace) -> str:
    """The markdown report: command, date, commit, machine, load, the table and the ratios."""
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=DOC.parents[1]).stdout.strip()
    cmd = f"python -m evals.bench_dispatch --questions {args.questions}" + (
        f" --before {args.before}" if args.before else "") + (" --profile" if args.profile else "")
    s, floor_p50 = report["stats"], report["stats"]["floor"]["p50"]
    rows = "\n".join(f"| {k} | {v['p50']:.2f} | {v['p95']:.2f} | {v['mean']:.2f} | {v['p50'] / floor_p50:.2f}x |"
                     for k, v in s.items())
    lines = [f"# Fusion dispatch and floor (`{cmd}`)", "",
             f"- Date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; commit `{commit}`; "
             f"{os.cpu_count()} cores, {platform.processor() or platform.machine()}; full MetaQA KB; "
             f"1-minute load average {report['load'][0]:.2f} before, {report['load'][1]:.2f} after.",
             f"- {report['questions']} MetaQA 1-hop dev questions, every variant once per question, the order "
             "reversed on every other question; one warm-up call each; times in ms.", "",
             "| variant | p50 | p95 | mean | p50 / floor p50 |", "|---|---|---|---|---|", rows, "",
             "| ratio (of p50s) | value |", "|---|---|",
             *(f"| {k} | {v:.2f} |" for k, v in report["ratios"].items())]
    if report.get("profile"):
        lines += ["", "Own time of `graph.invoke` (embedding cached) by module, cProfile (inflates all times):", "",
                  "| module | ms per question |", "|---|---|", *(f"| {k} | {v:.3f} |" for k, v in report["profile"])]
    return "\n".join(lines) + "\n"


def main() -> None:
    """Parse flags, run, write the markdown section."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=1000)
    p.add_argument("--before", help="git revision whose graphs/common.py is the 'before' path")
    p.add_argument("--profile", action="store_true")
    p.add_argument("--out", type=Path, default=DOC)
    args = p.parse_args()
    report = run(args.questions, before=args.before, with_profile=args.profile)
    text = render(report, args)
    args.out.write_text(text, encoding="utf-8")
    print(text)  # noqa: T201


if __name__ == "__main__":
    main()
