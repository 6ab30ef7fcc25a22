"""SSRAG end to end with the real bundled SmolLM2-135M on the sample KB (no network)."""

from __future__ import annotations

import importlib.util

import pytest

pytestmark = pytest.mark.integration

NODES = {
    "decompose_query",
    "extract_entities",
    "detect_intent",
    "enhance_query",
    "route_query",
    "retrieve_vectors",
    "retrieve_graph",
    "convert_graph_to_text",
    "rerank_jointly",
    "deduplicate_contexts",
    "generate_answer",
    "verify_answer",
}


@pytest.mark.parametrize("judge", ["llm", "auto"])
def test_ssrag_runs_to_completion_with_smollm2(monkeypatch, judge):
    assert importlib.util.find_spec("llama_cpp") is not None, "pip install 'hybridrag[local]'"
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)  # a TEMPORAL label falls back to the local corpus
    from hybridrag.graphs.ssrag import SSRAGContext, graph

    ctx = SSRAGContext(kb="sample", llm="local:smollm2", top_k=3, vector_k=3, graph_k=2, judge=judge)
    out = graph.invoke({"question": "which movies did Tom Hanks star in"}, context=ctx)
    assert set(out) >= {"answer", "ranked", "evidence", "trace", "usage"}
    assert isinstance(out["answer"], str) and out["answer"]
    assert 1 <= len(out["ranked"]) <= 3 and len(out["evidence"]) == len(out["ranked"])
    assert {e["source"] for e in out["evidence"]} <= {"kg", "doc"}
    assert {s["node"] for s in out["trace"]} == NODES
    route = next(s for s in out["trace"] if s["node"] == "route_query")
    vectors = next(s for s in out["trace"] if s["node"] == "retrieve_vectors")
    assert vectors["source"] == "local"
    if route["decision"].startswith("TEMPORAL"):
        assert "TAVILY_API_KEY" in vectors["fallback"]
    usage = out["usage"]
    if judge == "llm":
        # 9 roles' calls a pass at most (2 graph nodes), each retried once; up to max_iterations passes
        assert 6 <= usage["llm_calls"] <= 2 * 9 * ctx.max_iterations
        assert usage["input_tokens"] > 0 and usage["by_role"]["rewriter"]["llm_calls"] >= 1
    else:  # a small model under the rules: entity extraction only, none when the question names one KB entity
        calls = {role: u["llm_calls"] for role, u in usage.get("by_role", {}).items()}
        assert set(calls) <= {"entity_extractor"} and usage.get("llm_calls", 0) <= 2 * ctx.max_iterations
    assert usage["stages"]["rerank"] >= 0 and "answer" in usage["stages"]
