"""benchmarks.speed.dispatch on the sample KB (report shape, variants doing the graph's work), and the
per-run memo of graphs.runtime that the benchmark's dispatch numbers measure."""

from __future__ import annotations

import argparse
import math

import pytest
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from typing_extensions import TypedDict

import hybridrag.graphs.runtime as common
import hybridrag.graphs.runtime as run_memo
from benchmarks.speed import dispatch as bd
from hybridrag.agents.context import Context
from hybridrag.graphs import context_for, get_graph
from hybridrag.graphs.runtime import context_of, resolve_kb
from hybridrag.kb.sample import sample_kb_dir

QUESTIONS = ["who directed Alien", "what films did Tom Hanks star in", "when was Big released"]


@pytest.fixture(scope="module")
def sample():
    ctx = context_for("fusion", kb=str(sample_kb_dir()))
    return ctx, resolve_kb(ctx)


def test_every_variant_does_what_the_graph_does(sample):
    import hybridrag.graphs.fusion as module

    ctx, kb = sample
    fns = bd.variants(kb, ctx, module, QUESTIONS[0], None)
    assert "invoke, steps as plain calls, embedding cached" in fns  # fusion's steps are tool runs
    for q in QUESTIONS:
        out = get_graph("fusion").invoke({"question": q}, context=ctx)
        assert out["ranked"], q
        for label, fn in fns.items():
            if label.startswith(("floor", "LangGraph alone")):  # not fusion's work
                continue
            mine = fn(q)
            assert mine["answer"] == out["answer"], label
            assert [r["id"] for r in mine["ranked"]] == [r["id"] for r in out["ranked"]], label
    walked = bd.direct(module.builder, ctx)(QUESTIONS[0])
    assert [s["node"] for s in walked["trace"]] == ["retrieve_vectors", "expand_seeds", "fuse_results"]


def test_bare_refuses_settings_it_does_not_reproduce(sample):
    _, kb = sample
    with pytest.raises(ValueError, match="default settings only"):
        bd.bare_fusion(kb, context_for("fusion", kb=str(sample_kb_dir()), scoring="paper"))


def test_floor_returns_the_top_hits_neighbours(sample):
    ctx, kb = sample
    triples = bd.floor(kb, ctx.k1)("who directed Alien")
    assert triples and all(hasattr(t, "head") for t in triples)


def test_report_shape_on_the_sample_kb(sample):
    report = bd.measure_all(0, kb_dir=sample_kb_dir(), before=None, qs=QUESTIONS[:2])
    labels = {
        *bd.BASIS,
        *(f"{b}, embedding cached" for b in bd.BASIS),
        "LangGraph alone (no-op nodes)",
        "LangGraph alone, minimal graph",
        "invoke, steps as plain calls, embedding cached",
        "invoke, seed passages searched, embedding cached",
    }
    assert set(report["stats"]) == labels
    for st in report["stats"].values():
        assert st["n"] == 2 and 0 < st["p50"] <= st["p95"] and st["mean"] > 0 and 0 < st["cpu_p50"]
    assert report["ratios"]["fusion / floor"] == pytest.approx(
        report["stats"]["invoke"]["p50"] / report["stats"]["floor"]["p50"]
    )
    assert all(math.isfinite(v) for v in report["ratios"].values())
    assert len(report["load"]) == 2 and report["questions"] == 2
    text = bd.render(report, argparse.Namespace(questions=2, before="HEAD", profile=False))
    assert "`python -m benchmarks dispatch --questions 2 --before HEAD`" in text
    assert "| fusion / floor |" in text and "| LangGraph alone (no-op nodes) |" in text
    assert report["ratios"]["fusion / floor, CPU time"] == pytest.approx(
        report["stats"]["invoke"]["cpu_p50"] / report["stats"]["floor"]["cpu_p50"]
    )
    assert "| CPU p50 |" in text


def test_profile_groups_own_time_by_module(sample):
    ctx, kb = sample
    groups = bd.profile(get_graph("fusion"), ctx, kb, QUESTIONS[:1])
    assert any(name.startswith("langgraph.") for name, _ in groups)
    assert all(ms >= 0 for _, ms in groups)


def test_questions_come_from_the_dev_split():
    qs = bd.questions(3)
    assert len(qs) == 3 and not any("[" in q for q in qs)


# ----- graphs.runtime: what every node works out alike is worked out once per run -----


class S(TypedDict, total=False):
    question: str
    seen: list


def _two_nodes(record: list):
    def node(state: S, runtime: Runtime[Context]) -> dict:
        record.append((context_of(runtime, Context), resolve_kb(context_of(runtime, Context))))
        return {}

    b = StateGraph(S, context_schema=Context)
    b.add_node("a", node)
    b.add_node("b", node)
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", END)
    return b.compile()


def test_context_and_kb_are_worked_out_once_per_run(monkeypatch):
    calls = {"configurable": 0, "open": 0}
    real_with, real_open = common.with_configurable, run_memo.open_kb

    def counting_with(*a, **k):
        calls["configurable"] += 1
        return real_with(*a, **k)

    def counting_open(*a, **k):
        calls["open"] += 1
        return real_open(*a, **k)

    monkeypatch.setattr(common, "with_configurable", counting_with)
    monkeypatch.setattr(run_memo, "open_kb", counting_open)
    record: list = []
    g, ctx = _two_nodes(record), Context(kb="sample")
    g.invoke({"question": "q"}, context=ctx)
    assert calls == {"configurable": 1, "open": 1}
    assert record[0][0] is record[1][0] and record[0][1] is record[1][1]
    g.invoke({"question": "q"}, context=ctx)  # a new run works them out again
    assert calls == {"configurable": 2, "open": 2}


def test_configurable_precedence_holds_per_run():
    record: list = []
    g = _two_nodes(record)
    g.invoke({"question": "q"}, {"configurable": {"top_k": 3}}, context=Context(kb="sample"))
    assert [c.top_k for c, _ in record] == [3, 3]
    g.invoke({"question": "q"}, context=Context(kb="sample"))  # nothing carried over from the last run
    g.invoke({"question": "q"}, {"configurable": {"top_k": 4}}, context=Context(kb="sample", top_k=7))
    assert [c.top_k for c, _ in record[2:]] == [10, 10, 7, 7]


def test_a_node_called_by_hand_gets_no_memo():
    ctx = Context(kb="sample")
    assert run_memo.run_memo(Runtime(context=ctx)) is None
    assert run_memo.run_memo() is None  # outside a run
    assert context_of(Runtime(context=ctx), Context) is ctx
