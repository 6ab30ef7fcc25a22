"""Human in the loop (issue 14): ``approve=True`` pauses before retrieval with the method's
decision; ``Command(resume=...)`` approves it or edits it, and the edited value is what runs."""

from __future__ import annotations

import importlib

import pytest
from fake_chat import ScriptedChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from hybridrag.agents.hybgrag.roles import RouterAction, TopicEntity, Validation
from hybridrag.graphs import context_for, get_builder, get_graph, list_graphs
from hybridrag.graphs.approval import POINTS, ApprovalError, apply_answer

QUESTION = "who directed Big"
HYBRID = RouterAction(module="hybrid", entities=[TopicEntity(name="Big", type="movie")], relations=["directed_by"])
YES = Validation(reasoning="it names the director", verdict="yes")


def paused_hybgrag(tiny_kb, *script, thread="hitl"):
    model = ScriptedChatModel(script=list(script))
    graph = get_builder("hybgrag").compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": thread}}
    ctx = context_for("hybgrag", kb=tiny_kb, llm=model, approve=True)
    out = graph.invoke({"question": QUESTION}, config, context=ctx)
    return graph, config, ctx, out


def test_the_run_pauses_with_the_routers_action(tiny_kb):
    graph, config, _, out = paused_hybgrag(tiny_kb, HYBRID, YES)
    (pause,) = out["__interrupt__"]
    assert pause.value["proposal"]["action"]["module"] == "hybrid"
    assert pause.value["proposal"]["action"]["linked"][0]["id"] == "Big"
    assert graph.get_state(config).next == ("approve_action",)
    assert [s["node"] for s in out["trace"]] == ["route_question"], "nothing was retrieved yet"


def test_approved_as_proposed(tiny_kb):
    graph, config, ctx, _ = paused_hybgrag(tiny_kb, HYBRID, YES)
    out = graph.invoke(Command(resume=True), config, context=ctx)
    nodes = [s["node"] for s in out["trace"]]
    assert nodes == ["route_question", "approve_action", "retrieve_hybrid", "validate_retrieval"]
    assert out["trace"][1]["decision"] == "approved" and out["answer"] == "Penny Marshall"


def test_an_edited_action_is_the_one_retrieved_with(tiny_kb):
    graph, config, ctx, _ = paused_hybgrag(tiny_kb, HYBRID, YES)
    out = graph.invoke(Command(resume={"action": {"module": "text"}}), config, context=ctx)
    nodes = [s["node"] for s in out["trace"]]
    assert nodes == ["route_question", "approve_action", "retrieve_text", "validate_retrieval"]
    assert out["trace"][1]["decision"] == "edited action"
    edited = [s for s in graph.get_state_history(config) if s.next == ("retrieve_text",)][0]
    assert edited.values["action"]["module"] == "text" and edited.values["action"]["relations"] == ["directed_by"]


def test_without_approve_the_graph_runs_through(tiny_kb):
    model = ScriptedChatModel(script=[HYBRID, YES])
    graph = get_builder("hybgrag").compile(checkpointer=InMemorySaver())
    out = graph.invoke(
        {"question": QUESTION},
        {"configurable": {"thread_id": "x"}},
        context=context_for("hybgrag", kb=tiny_kb, llm=model),
    )
    assert "__interrupt__" not in out and out["answer"] == "Penny Marshall"
    assert "approve_action" not in [s["node"] for s in out["trace"]]


def test_approve_without_a_checkpointer_or_on_fusion_is_a_clear_error(tiny_kb):
    model = ScriptedChatModel(script=[HYBRID])
    with pytest.raises(ApprovalError, match="^approve: a pause needs a checkpointed thread"):
        get_graph("hybgrag").invoke(
            {"question": QUESTION}, context=context_for("hybgrag", kb=tiny_kb, llm=model, approve=True)
        )
    graph = get_builder("fusion").compile(checkpointer=InMemorySaver())
    with pytest.raises(ApprovalError, match="^approve: fusion has no decision to approve"):
        graph.invoke(
            {"question": QUESTION},
            {"configurable": {"thread_id": "f"}},
            context=context_for("fusion", kb=tiny_kb, approve=True),
        )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("no", "resume with true"),
        ({"plan": {}}, "plan: not an approvable key"),
        ({"action": {"modul": "text"}}, r"action.modul: not a field of the proposed action"),
        ({"action": "text"}, "action: expected a dict"),
        ({"action": {"module": "x" * 60}}, "at most 40$"),
    ],
)
def test_a_bad_answer_names_the_problem(answer, message):
    with pytest.raises(ApprovalError, match=message):
        apply_answer({"action": {"module": "hybrid", "relations": []}}, answer, limit=40)


@pytest.mark.parametrize("method", list(POINTS))
def test_each_point_shows_state_keys_its_method_writes(method):
    from hybridrag.graphs import get_builder as builder_of

    point, builder = POINTS[method], importlib.import_module(f"hybridrag.graphs.{method}").builder
    assert point.after in builder.nodes and set(point.keys) <= set(builder.channels)
    assert builder_of(method).nodes.keys() - builder.nodes.keys() == {
        point.node,
        "start_question",
        "read_messages",
        "read_question",
        "reply",
    }


def test_a_point_that_does_not_fit_the_graph_is_named(monkeypatch):
    from hybridrag.graphs.approval import ApprovalPoint, with_approval

    monkeypatch.setitem(POINTS, "hybgrag", ApprovalPoint("route_questions", ("action",), "a renamed node"))
    with pytest.raises(ValueError, match="^hybgrag: approval point after 'route_questions'"):
        with_approval(importlib.import_module("hybridrag.graphs.hybgrag").builder, "hybgrag")


@pytest.mark.parametrize("method", list_graphs())
def test_every_llm_method_has_its_approval_node_after_its_decision(method):
    drawn = get_builder(method).compile().get_graph()
    if method not in POINTS:
        assert not any(n.startswith("approve_") for n in drawn.nodes)
        return
    point = POINTS[method]
    outgoing = {(e.source, e.target) for e in drawn.edges if e.source == point.after}
    assert outgoing == {(point.after, point.node)}, "every edge of the decision now passes the approval"
    assert any(e.source == point.node for e in drawn.edges)


def test_an_edited_mor_plan_is_the_one_traversed(tiny_kb):
    """MoR fans out one traversal per route of the approved plan: an edit keeping one route runs one."""
    from hybridrag.agents.mor.plan import Plan, PlanNode, PlanRoute

    two_routes = Plan(
        routes=[
            PlanRoute(
                nodes=[
                    PlanNode(type="person", restriction="Tom Hanks"),
                    PlanNode(type="movie", relation="starred_actors"),
                ]
            ),
            PlanRoute(nodes=[PlanNode(type="year", restriction="1995"), PlanNode(type="movie")]),
        ]
    )
    graph = get_builder("mor").compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "mor"}}
    ctx = context_for("mor", kb=tiny_kb, llm=ScriptedChatModel(script=[two_routes]), approve=True, max_iterations=1)
    out = graph.invoke({"question": "which movies starring Tom Hanks were released in 1995"}, config, context=ctx)
    plan = out["__interrupt__"][0].value["proposal"]["plan"]
    assert len(plan["routes"]) == 2
    out = graph.invoke(Command(resume={"plan": {"routes": plan["routes"][:1]}}), config, context=ctx)
    nodes = [s["node"] for s in out["trace"]]
    assert nodes[:3] == ["plan_question", "approve_plan", "traverse_route"] and nodes.count("traverse_route") == 1
    assert "Tom Hanks" not in [item["name"] for item in out["ranked"]]


def test_the_registry_knows_every_method_that_pauses():
    from hybridrag.graphs import APPROVABLE

    assert set(APPROVABLE) == set(POINTS)
