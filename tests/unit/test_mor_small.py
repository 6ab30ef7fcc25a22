"""MoR with a small llama.cpp model: the planner prompt leaves the KB schema to the grammar."""

from __future__ import annotations

import json

import pytest

from hybridrag.agents.mor.context import MoRContext
from hybridrag.graphs.mor import graph

PLAN = '{"routes":[{"nodes":[{"type":"movie","restriction":"Big"},{"type":"person","relation":"directed_by"}]}]}'


@pytest.mark.parametrize(("setting", "listed"), [("auto", False), ("full", True)])
def test_small_model_planner_prompt_lists_the_schema_only_when_asked(tiny_kb, tiny_llama, setting, listed):
    model = tiny_llama(PLAN)
    ctx = MoRContext(kb=tiny_kb, llm="local:tiny", planner_schema=setting, ground_plan="off")  # the prompt is asked
    out = graph.invoke({"question": "who directed Big"}, context=ctx)
    prompt = model.calls[0]["messages"][-1].content
    assert prompt.startswith("Examples:\nQuestion: ") and prompt.endswith("Question: who directed Big\nPlan:")
    assert ("Relation types: " in prompt) is listed
    assert '"directed_by"' in json.dumps(model.formats[0]["schema"])  # the grammar holds the relations
    assert "Penny Marshall" in [r["name"] for r in out["ranked"][:3]]
