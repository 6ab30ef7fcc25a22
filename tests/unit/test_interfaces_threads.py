"""Checkpointed threads (Studio, the Agent Server, a user's checkpointer), issue 14: a thread asked
two questions reports only the second question's trace and usage, and every value the thread
stores is a plain type (LangGraph warns that unregistered types will be blocked)."""

from __future__ import annotations

import importlib
import operator
from typing import Annotated

import pytest
from fake_chat import ScriptedChatModel
from langgraph.channels.binop import BinaryOperatorAggregate
from langgraph.channels.last_value import LastValue
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.event_hooks import register_serde_event_listener
from langgraph.graph import START, StateGraph
from langgraph.types import Command, Send, interrupt

from hybridrag.agents.hybgrag.roles import RouterAction, Validation
from hybridrag.agents.llm.usage import with_counters
from hybridrag.graphs import context_for, get_builder, list_graphs
from hybridrag.graphs.runtime import InputState, OutputState, traced
from hybridrag.graphs.threads import NEW_QUESTION, NODE, ResettableAggregate, ResettableValue, per_question

FIRST, SECOND = "who directed Big", "who directed Apollo 13"
PLAIN = (str, int, float, bool, type(None))
OUTPUT_KEYS = ("answer", "ranked", "evidence", "trace", "usage")


def plain(value) -> bool:
    """Whether ``value`` is made only of JSON types (what a checkpoint may hold without a warning)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(plain(v) for v in value)
    return isinstance(value, PLAIN)


@pytest.fixture
def serde_events():
    """Every serde allowlist event (LangGraph logs "unregistered type" only once per process)."""
    events: list[dict] = []
    unregister = register_serde_event_listener(events.append)
    yield events
    unregister()


def ask_twice(graph, context, thread: str = "t") -> tuple[dict, dict, dict]:
    config = {"configurable": {"thread_id": thread}}
    first = graph.invoke({"question": FIRST}, config, context=context)
    second = graph.invoke({"question": SECOND}, config, context=context)
    return first, second, config


def check_thread(graph, config, second: dict) -> None:
    """The thread shows the second question's output, and its outputs are plain values."""
    state = graph.get_state(config)
    assert state.values["trace"] == second["trace"] and state.values["usage"] == second["usage"]
    for snapshot in graph.get_state_history(config):
        bad = sorted(k for k, v in snapshot.values.items() if k in OUTPUT_KEYS and not plain(v))
        assert not bad, f"checkpoint {snapshot.config['configurable']['checkpoint_id']} stores non-JSON {bad}"


def stored_classes(graph, config, serde_events: list[dict]) -> list[str]:
    """Classes LangGraph read back from the thread's checkpoints and pending writes without knowing them."""
    list(graph.get_state_history(config))  # read every checkpoint with its writes
    return sorted({f"{e['module']}.{e['name']}" for e in serde_events if e["kind"] != "msgpack_allowed"})


class Tiny(InputState, OutputState, total=False):
    seen: int
    parts: Annotated[list[str], operator.add]


def _tiny_node(state: Tiny) -> dict:
    return {
        "trace": [traced("answer", state["question"], seen=state.get("seen", 0))],
        "usage": {"llm_calls": 1},
        "answer": state["question"].upper(),
        "seen": state.get("seen", 0) + 1,
    }


def test_the_trace_usage_and_working_state_start_over_with_each_question(serde_events):
    builder = StateGraph(Tiny, input_schema=InputState, output_schema=OutputState)
    builder.add_node("answer", _tiny_node)
    builder.add_edge(START, "answer")
    graph = per_question(builder).compile(checkpointer=InMemorySaver())
    _, second, config = ask_twice(graph, None)
    assert [(s["decision"], s["seen"]) for s in second["trace"]] == [(SECOND, 0)], "nothing of the first kept"
    assert second["usage"] == with_counters({"llm_calls": 1})  # every counter, this question's only
    check_thread(graph, config, second)
    assert stored_classes(graph, config, serde_events) == []


def test_a_fan_out_keeps_its_trace_until_the_question_ends():
    """Send tasks run after LangGraph told the channels "finished" (no edge triggered them): the
    trace and the gathered results of the question survive them."""

    def plan(state: Tiny) -> dict:
        return {"trace": [traced("plan", "two parts")], "seen": 1}

    def part(task: dict) -> dict:
        return {"parts": [task["part"]], "trace": [traced("part", task["part"])]}

    def join(state: Tiny) -> dict:
        return {"answer": "+".join(sorted(state["parts"])), "trace": [traced("join", str(state["seen"]))]}

    builder = StateGraph(Tiny, input_schema=InputState, output_schema=OutputState)
    builder.add_node(plan)
    builder.add_node("part", part)
    builder.add_node(join)
    builder.add_edge(START, "plan")
    builder.add_conditional_edges("plan", lambda s: [Send("part", {"part": p}) for p in "ab"], ["part"])
    builder.add_edge("part", "join")
    graph = per_question(builder).compile(checkpointer=InMemorySaver())
    first, second, _ = ask_twice(graph, None)
    for out in (first, second):
        assert out["answer"] == "a+b" and [s["node"] for s in out["trace"]] == ["plan", "part", "part", "join"]
        assert out["trace"][-1]["decision"] == "1"


def test_a_paused_run_keeps_its_trace_when_resumed():
    """A run stopped by interrupt() resumes without passing START: it adds to the same question's trace."""

    def ask(state: Tiny) -> dict:
        return {"trace": [traced("ask", "asked")]}

    def wait(state: Tiny) -> dict:
        return {"trace": [traced("wait", interrupt("approve?"))]}

    builder = StateGraph(Tiny, input_schema=InputState, output_schema=OutputState)
    builder.add_node(ask)
    builder.add_node(wait)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "wait")
    graph = per_question(builder).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "pause"}}
    graph.invoke({"question": FIRST}, config)
    out = graph.invoke(Command(resume="yes"), config)
    assert [s["decision"] for s in out["trace"]] == ["asked", "yes"]
    out = graph.invoke({"question": SECOND}, config)
    assert [s["node"] for s in out["trace"]] == ["ask"], "the new question starts a new trace"
    out = graph.invoke(Command(resume="no"), config)
    assert [s["decision"] for s in out["trace"]] == ["asked", "no"]


def test_the_reset_write_empties_each_kind_of_channel():
    value = ResettableValue(int)
    value.update([3])
    assert value.update([NEW_QUESTION]) and not value.is_available() and not value.update([NEW_QUESTION])
    trace = ResettableAggregate(list, operator.add)
    trace.update([[1], [2]])
    trace.update([[3], NEW_QUESTION, [4]])
    assert trace.get() == [4]
    assert trace.update([NEW_QUESTION]) and trace.get() == []


@pytest.mark.parametrize("method", list_graphs())
def test_every_method_starts_each_question_clean(method):
    """get_builder's graph: START → start_question → the method's first node; every key but the
    question resettable; the method's own builder unchanged."""
    builder, own = get_builder(method), importlib.import_module(f"hybridrag.graphs.{method}").builder
    assert (START, NODE) in builder.edges and NODE not in own.nodes
    kinds = {name: type(ch) for name, ch in builder.channels.items() if name != "question"}
    assert {"trace", "usage", "answer"} <= set(kinds)
    inherited = sorted(n for n, k in kinds.items() if k in (LastValue, BinaryOperatorAggregate))
    assert not inherited, f"{method}: keys a new question would inherit: {inherited}"


@pytest.fixture(scope="module")
def fusion_thread(tiny_kb):
    graph = get_builder("fusion").compile(checkpointer=InMemorySaver())
    first, second, config = ask_twice(graph, context_for("fusion", kb=tiny_kb))
    return graph, config, first, second


def test_fusion_on_a_thread(fusion_thread):
    graph, config, first, second = fusion_thread
    assert first["answer"] == "Penny Marshall" and second["answer"] == "Ron Howard"
    assert [s["node"] for s in second["trace"]] == ["retrieve_vectors", "expand_seeds", "fuse_results"]
    check_thread(graph, config, second)


def test_a_fusion_thread_stores_no_unregistered_class(fusion_thread, serde_events):
    graph, config, _, _ = fusion_thread
    assert stored_classes(graph, config, serde_events) == []


def test_mor_on_a_thread(tiny_kb):
    """MoR fans its plan out with Send: the second question's trace holds its plan and traversals."""
    from hybridrag.agents.mor.plan import Plan, PlanNode, PlanRoute

    route = PlanRoute(
        nodes=[PlanNode(type="person", restriction="Tom Hanks"), PlanNode(type="movie", relation="starred_actors")]
    )
    model = ScriptedChatModel(script=[Plan(routes=[route])] * 2)
    graph = get_builder("mor").compile(checkpointer=InMemorySaver())
    first, second, _ = ask_twice(graph, context_for("mor", kb=tiny_kb, llm=model, max_iterations=1))
    for out in (first, second):
        assert [s["node"] for s in out["trace"]][:3] == ["plan_question", "traverse_route", "intersect_routes"]
        assert out["usage"]["llm_calls"] == 1


def test_hybgrag_on_a_thread(tiny_kb, serde_events):
    """An LLM method: the second question starts at the router's first iteration, not the first's."""
    script = [RouterAction(module="text"), Validation(reasoning="names the director", verdict="yes")]
    model = ScriptedChatModel(script=script * 2)
    graph = get_builder("hybgrag").compile(checkpointer=InMemorySaver())
    first, second, config = ask_twice(graph, context_for("hybgrag", kb=tiny_kb, llm=model))
    assert [s["node"] for s in second["trace"]] == ["route_question", "retrieve_text", "validate_retrieval"]
    assert second["trace"][0]["iteration"] == 1, "the second question continued the first's loop"
    assert second["usage"]["llm_calls"] == 2
    check_thread(graph, config, second)
    assert stored_classes(graph, config, serde_events) == []


def test_a_hybgrag_thread_can_be_forked_at_its_validator(tiny_kb):
    """update_state runs the node's conditional edge outside a run step: a router that reads the
    runtime failed there with "Missing required config key 'N/A' for 'route_after_validation'"."""
    script = [RouterAction(module="text"), Validation(reasoning="names the director", verdict="yes")]
    graph = get_builder("hybgrag").compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "fork"}}
    ctx = context_for("hybgrag", kb=tiny_kb, llm=ScriptedChatModel(script=script))
    graph.invoke({"question": FIRST}, config, context=ctx)
    validated = next(s for s in graph.get_state_history(config) if s.next == ("validate_retrieval",))
    rejected = graph.update_state(validated.config, {"verdict": "no"}, as_node="validate_retrieval")
    assert graph.get_state(rejected).next == ("comment_on_routing",)
    accepted = graph.update_state(validated.config, {"verdict": "yes"}, as_node="validate_retrieval")
    assert graph.get_state(accepted).next == ()


@pytest.mark.parametrize("method", list_graphs())
def test_no_router_needs_a_run_to_be_called(method):
    import inspect

    for specs in get_builder(method).branches.values():
        for name, spec in specs.items():
            func = getattr(spec.path, "func", None)
            assert not (callable(func) and "runtime" in inspect.signature(func).parameters), (method, name)
