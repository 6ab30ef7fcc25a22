"""Approval edits are checked before they run (issue 28 item 7): a value outside the decision's choices or of
the wrong kind is refused with a message naming the allowed values, never run as something else."""

from __future__ import annotations

import pytest
from fake_chat import ScriptedChatModel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from hybridrag.agents.hybgrag.roles import RouterAction, TopicEntity, Validation
from hybridrag.graphs import context_for, get_builder
from hybridrag.graphs.approval import POINTS, ApprovalError, apply_answer

ACTION = {"module": "hybrid", "entities": [{"name": "Big", "type": "movie"}], "relations": ["directed_by"]}


def _edit(method: str, proposal: dict, answer: dict) -> dict:
    return apply_answer(proposal, answer, choices=POINTS[method].choices)


@pytest.mark.parametrize(
    ("method", "proposal", "answer", "message"),
    [
        (
            "hybgrag",
            {"action": ACTION},
            {"action": {"module": "sql"}},
            "action.module: 'sql' is not allowed; one of hybrid, text",
        ),
        ("hybgrag", {"action": ACTION}, {"action": {"relations": [3]}}, "action.relations[]: expected a str"),
        (
            "hybgrag",
            {"action": ACTION},
            {"action": {"entities": [{"nam": "Big"}]}},
            "action.entities[].nam: not a field",
        ),
        (
            "hydrarag",
            {"probe": {"sources": ["kg"], "depth": 2}},
            {"probe": {"sources": ["sql"]}},
            "one of kg, docs, web",
        ),
        (
            "hydrarag",
            {"probe": {"sources": ["kg"], "depth": 2}},
            {"probe": {"depth": True}},
            "probe.depth: expected a int",
        ),
        ("ssrag", {"route": "FACTUAL", "source": "local"}, {"route": "temporal"}, "one of TEMPORAL, FACTUAL"),
        (
            "ssrag",
            {"route": "FACTUAL", "source": "local"},
            {"source": "sql"},
            "source: 'sql' is not allowed; one of web, local",
        ),
    ],
)
def test_an_edit_outside_the_choices_is_refused_naming_them(method, proposal, answer, message) -> None:
    with pytest.raises(ApprovalError) as err:
        _edit(method, proposal, answer)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_allowed_edits_still_apply() -> None:
    assert _edit("hybgrag", {"action": ACTION}, {"action": {"module": "text"}})["action"]["module"] == "text"
    assert _edit(
        "hydrarag", {"probe": {"sources": ["kg"], "depth": 2}}, {"probe": {"sources": ["docs", "web"], "depth": 3}}
    )["probe"] == {"sources": ["docs", "web"], "depth": 3}
    assert _edit("ssrag", {"route": "FACTUAL", "source": "local"}, {"route": "TEMPORAL"}) == {"route": "TEMPORAL"}


def test_the_graph_refuses_sql_and_retrieves_nothing(tiny_kb) -> None:
    """Through the real pause and resume: the refused edit stops the run before any retrieval."""
    hybrid = RouterAction(module="hybrid", entities=[TopicEntity(name="Big", type="movie")], relations=["directed_by"])
    model = ScriptedChatModel(script=[hybrid, Validation(reasoning="ok", verdict="yes")])
    graph = get_builder("hybgrag").compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "sql-edit"}}
    ctx = context_for("hybgrag", kb=tiny_kb, llm=model, approve=True)
    graph.invoke({"question": "who directed Big"}, config, context=ctx)
    with pytest.raises(ApprovalError, match="one of hybrid, text"):
        graph.invoke(Command(resume={"action": {"module": "sql"}}), config, context=ctx)
    assert graph.get_state(config).next == ("approve_action",), "still paused at the approval, nothing retrieved"
