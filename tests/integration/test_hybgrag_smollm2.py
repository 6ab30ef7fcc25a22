"""HybGRAG end to end with the real bundled SmolLM2-135M on the sample KB (no network)."""

from __future__ import annotations

import importlib.util

import pytest

from hybridrag.tools.list_answer import split

pytestmark = pytest.mark.integration


def test_hybgrag_runs_to_completion_with_smollm2(tmp_path, monkeypatch):
    assert importlib.util.find_spec("llama_cpp") is not None, "needs: pip install 'hybridrag[local]'"
    monkeypatch.setenv("HYBRIDRAG_CACHE", str(tmp_path))
    from hybridrag.graphs.hybgrag import HybGRAGContext, graph, render_trace

    ctx = HybGRAGContext(kb="sample", llm="local:smollm2", max_iterations=2)
    out = graph.invoke({"question": "which movies did Tom Hanks star in"}, context=ctx)
    assert set(out) >= {"answer", "ranked", "evidence", "trace", "usage"}
    assert out["ranked"] and split(out["answer"])[0] == out["ranked"][0]["name"]  # a list question: the list
    routes = [s for s in out["trace"] if s["node"] == "route_question"]
    assert 1 <= len(routes) <= 2
    usage = out["usage"]
    # a small model judges by rule (judge=auto): the router is the only LLM role, once an iteration
    # (each call retried once at most); a first routing the rule accepts takes one call
    assert 1 <= usage["llm_calls"] <= 2 * 2 and set(usage["by_role"]) == {"router"}
    assert usage["input_tokens"] > 0 and usage["by_role"]["router"]["llm_calls"] == usage["llm_calls"]
    assert "Action 1" in render_trace(out["trace"])
