"""A run's usage carries every counter, 0 when nothing was counted: readers need no ``.get(k, 0)``."""

from __future__ import annotations

import json

import pytest

from hybridrag.agents.llm.usage import COUNTERS, add_usage, usage_record, with_counters
from hybridrag.graphs import context_for, get_graph, list_graphs
from hybridrag.graphs.runtime import merge_usage


def test_a_run_without_llm_calls_has_zero_counters(tiny_kb):
    out = get_graph("fusion").invoke({"question": "who directed Big"}, context=context_for("fusion", kb=tiny_kb))
    usage = out["usage"]
    assert {k: usage[k] for k in COUNTERS} == COUNTERS
    assert usage["llm_calls"] == 0 and set(usage["stages"]) == {"retrieve_vectors", "expand_seeds", "fuse_results"}
    assert json.loads(json.dumps(usage)) == usage  # the schema's plain dict, as the server sends it


@pytest.mark.parametrize("method", list_graphs())
def test_every_method_adds_its_usage_with_the_counting_reducer(method):
    assert get_graph(method).channels["usage"].operator is merge_usage


def test_the_reducer_adds_up_and_keeps_nested_dicts_as_counted():
    call = usage_record("router", 1, 10, 2, 0.5)
    total = merge_usage(merge_usage(None, {"stages": {"route": 0.25}}), call)
    assert total["llm_calls"] == 1 and total["input_tokens"] == 10 and total["fallbacks"] == 0
    assert total["by_role"] == {"router": {"llm_calls": 1, "input_tokens": 10, "output_tokens": 2, "llm_seconds": 0.5}}
    assert total["stages"] == {"route": 0.25}
    again = merge_usage(total, {**call, "fallbacks": 1})
    assert (again["llm_calls"], again["fallbacks"], again["by_role"]["router"]["llm_calls"]) == (2, 1, 2)
    assert merge_usage(None, None) == COUNTERS


def test_with_counters_keeps_what_was_counted():
    assert with_counters(None) == COUNTERS
    assert with_counters({"llm_calls": 3, "stages": {"a": 1.0}}) == {**COUNTERS, "llm_calls": 3, "stages": {"a": 1.0}}
    assert add_usage({"llm_calls": 1}, {"llm_calls": 2, "by_role": {"r": {"llm_calls": 2}}}) == {
        "llm_calls": 3,
        "by_role": {"r": {"llm_calls": 2}},
    }
