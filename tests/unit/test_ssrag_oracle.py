"""SSRAG's corrective loop under the perfect-LLM stand-in: each injected error type is named and repaired."""

from __future__ import annotations

import pytest

from hybridrag.evals.datasets import Question
from hybridrag.evals.oracle import GoldSet, build_oracle

BIG = "who directed Big"
QUESTIONS = [Question("big", BIG, ("Penny Marshall",), qtype="movie_to_director", topic="Big", hops=1)]


@pytest.fixture
def registered():
    from hybridrag.agents.llm.models import forget_model, register_model

    specs = []

    def make(spec: str):
        m = build_oracle(spec, GoldSet.from_questions(QUESTIONS, ("kg",)))
        register_model(spec, m)
        specs.append(spec)
        return m

    yield make
    for spec in specs:
        forget_model(spec)


def run(tiny_kb: str, spec: str, **kw) -> dict:
    from hybridrag.graphs import context_for, get_graph

    ctx = context_for("ssrag", kb=tiny_kb, llm=spec, graph_to_text="template", top_k=5, graph_k=3, **kw)
    return get_graph("ssrag").invoke({"question": BIG}, context=ctx)


@pytest.mark.parametrize("etype", ["wrong_entity", "missing_entity", "wrong_module"])
def test_loop_names_and_repairs_each_error_type(tiny_kb, registered, etype):
    spec = f"oracle:p=1,types={etype}"
    m = registered(spec)
    out = run(tiny_kb, spec)
    [entry] = m.log.entries()
    assert entry["applied"] and entry["repaired"] and entry["repaired_at"] == 1, entry
    assert out["answer"] == "Penny Marshall"
    if etype == "wrong_module":
        [route] = [s for s in out["trace"] if s["node"] == "route_query"]
        assert route["decision"] == "FACTUAL → local" and "no time cue" in route["feedback"]
    else:
        first, second = [s for s in out["trace"] if s["node"] == "extract_entities"]
        assert first["problem"] and second["linked"] == ["Big"]


@pytest.mark.parametrize("etype", ["wrong_entity", "missing_entity", "wrong_module"])
def test_single_pass_never_repairs(tiny_kb, registered, etype):
    spec = f"oracle:p=1,types={etype}"
    m = registered(spec)
    run(tiny_kb, spec, max_iterations=1)
    [entry] = m.log.entries()
    assert entry["applied"] and not entry["repaired"] and entry["later_decisions"] == 0
