"""The variants ``python -m benchmarks dispatch`` times (see its docstring), each a callable of one question.

*floor*, *bare* (:func:`bare_fusion`), *direct* (:func:`direct`), *invoke*, *LangGraph alone*
(:func:`skeleton`), and ``invoke`` with one part of fusion put back as it was (:func:`variants`).
"""

from __future__ import annotations

import subprocess
import sys
import types
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import typing_extensions

from benchmarks.common import ROOT

C = ", embedding cached"
ALONE, MINIMAL = "LangGraph alone (no-op nodes)", "LangGraph alone, minimal graph"


def floor(kb: Any, k: int) -> Callable[[str], Any]:
    """One query embedding + one FAISS search for ``k`` hits + the 1-hop triples of the top hit."""

    def run(q: str) -> Any:
        doc = kb.docs[int(kb.dense.search(kb.embed(q), k)[0][0])]
        return kb.graph.neighbors([doc.entity_id or doc.id])

    return run


def plain_steps(kb: Any) -> Callable[..., Any]:
    """A step runner calling fusion's retrieval steps directly (``step(name, **args) -> result``), no tool run."""
    from hybridrag.agents.fusion.tools import STEPS

    plain = {name: step.default(kb) for name, step in STEPS.items()}
    return lambda name, **args: plain[name](**args)[0]


def bare_fusion(kb: Any, ctx: Any) -> Callable[[str], dict]:
    """Fusion's default path (hybrid mode, 'evidence' scoring, 1 hop) as plain calls.

    Fusion's own branch functions, in the graph's order, with the retrieval steps called directly:
    no node wrappers, no tool runs, no LangGraph.
    """
    from hybridrag.agents.fusion import branches

    if (ctx.mode, ctx.scoring, ctx.hops) != ("hybrid", "evidence", 1):
        raise ValueError("bare_fusion reproduces the default settings only (hybrid, evidence, 1 hop)")
    step = plain_steps(kb)

    def run(q: str) -> dict:
        *texts, seeds, named = branches.vector_branch(kb, ctx, q, step)  # the text hits (and their fused ranking)
        graph, text = branches.graph_branch(kb, ctx, q, seeds, step) if seeds else ([], [])
        found = (texts[0], graph, text, *texts[1:])
        _, top, answer = branches.merge_branches(kb, ctx, q, found, seeds, set(named))
        return {"answer": answer, "ranked": [c.as_ranked() for c in top]}

    return run


def direct(builder: Any, ctx: Any, record: dict | None = None) -> Callable[[str], dict]:
    """Walk the builder's edges calling each node's function, merging updates by the state's reducers.

    Each node's update is kept in ``record`` when given.
    """
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


def _returning(update: dict) -> Callable[[Any], dict]:
    """A node that returns ``update`` whatever the state."""
    return lambda _state: update


def skeleton(builder: Any, updates: dict[str, dict], minimal: bool = False) -> Any:
    """The graph's shape compiled with nodes that return ``updates`` at once: what LangGraph alone costs.

    The shape is the state with its reducers, the input/output/context schemas, the edges and the
    route; ``updates`` are one real question's. ``minimal``: the same nodes in a row over a plain
    state (no reducer, schema, route or context).
    """
    from langgraph.graph import END, START, StateGraph

    if minimal:
        plain = typing_extensions.TypedDict(
            "Plain", dict.fromkeys(typing.get_type_hints(builder.state_schema), Any), total=False
        )
        sk = StateGraph(plain)
    else:
        sk = StateGraph(
            builder.state_schema,
            context_schema=builder.context_schema,
            input_schema=builder.input_schema,
            output_schema=builder.output_schema,
        )
    for name in builder.nodes:
        sk.add_node(name, _returning(updates.get(name, {})))
    for a, b in zip([START, *builder.nodes], [*builder.nodes, END], strict=True) if minimal else builder.edges:
        sk.add_edge(a, b)
    for src, branches in {} if minimal else builder.branches.items():
        for br in branches.values():
            sk.add_conditional_edges(src, br.path.func, br.ends)
    return sk.compile()


def before_common(rev: str) -> types.ModuleType:
    """``graphs/runtime.py`` as it was at git revision ``rev`` (a separate module object)."""
    src = subprocess.run(
        ["git", "show", f"{rev}:graphs/runtime.py"], check=True, capture_output=True, text=True, cwd=ROOT
    ).stdout
    mod = sys.modules["hybridrag.graphs._common_before"] = types.ModuleType("hybridrag.graphs._common_before")
    exec(compile(src, f"graphs/runtime.py@{rev}", "exec"), mod.__dict__)  # noqa: S102 - our own file
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

    def patched(fn: Callable, target: Any = module, **attrs: Any) -> Callable[[str], Any]:
        def run(q: str) -> Any:
            with swapped(target, **attrs):
                return fn(q)

        return run

    work = {
        "floor": floor(kb, ctx.k1),
        "bare": bare_fusion(kb, ctx),
        "direct": direct(module.builder, ctx),
        "invoke": invoke,
    }
    updates: dict[str, dict] = {}
    direct(module.builder, ctx, updates)(sample)
    alone, minimal = skeleton(module.builder, updates), skeleton(module.builder, updates, minimal=True)
    out = {
        **work,
        **{k + C: v for k, v in work.items()},
        ALONE: lambda q: alone.invoke({"question": q}, context=ctx),
        MINIMAL: lambda q: minimal.invoke({"question": q}),
    }
    if hasattr(module, "_step") and hasattr(module, "STEPS"):  # retrieval steps run as LangChain tools
        plain = plain_steps(kb)
        out["invoke, steps as plain calls" + C] = patched(invoke, _step=lambda _c, _k, name, **a: plain(name, **a))
    from hybridrag.agents.fusion import scoring  # seed passages searched for on any KB, even one holding none

    out["invoke, seed passages searched" + C] = patched(invoke, scoring, has_passages=lambda _kb: True)
    if before:
        old = before_common(before)
        out["invoke, before" + C] = patched(invoke, context_of=old.context_of, resolve_kb=old.resolve_kb)
    return out
