"""The LLM methods' retrieval steps as tool runs on the scripted fake model and the tiny KB: the events
name each step with its inputs, a user's tool replaces a step and its output reaches the result, and a
bad override is refused by name."""

from __future__ import annotations

import json

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import tool

from hybridrag.agents.hybgrag.roles import RouterAction, TopicEntity, Validation
from hybridrag.agents.hydrarag import roles as HR
from hybridrag.agents.mor.plan import Plan, PlanNode, PlanRoute
from hybridrag.agents.ssrag.augment import AugmentedQuery, IntentCues, KeyEntities, NamedEntity, SubQuestions
from hybridrag.agents.ssrag.retrieval import GraphText
from hybridrag.agents.ssrag.routing import RouteLabel
from hybridrag.agents.ssrag.unify import Answer, Redundancy
from hybridrag.graphs import context_for, get_graph
from hybridrag.tools.steps import StepError

MARK_ID = "p:marker"
MARK_TEXT = "Tom Hanks acted in Zebulon Marker, a comedy about a boy who wakes up as an adult."


class ToolEvents(BaseCallbackHandler):
    """Each tool run's name with its inputs, and its output."""

    def __init__(self) -> None:
        self.started: list[tuple[str, object]] = []
        self.ended: list[object] = []

    def on_tool_start(self, serialized, input_str, *, inputs=None, **kwargs):
        self.started.append((serialized["name"], input_str if inputs is None else inputs))

    def on_tool_end(self, output, **kwargs):
        self.ended.append(output)

    def names(self) -> set[str]:
        return {n for n, _ in self.started}


class MarkerRetriever(BaseRetriever):
    """A user's own retriever: always the marker passage."""

    def _get_relevant_documents(self, query, *, run_manager):
        return [Document(MARK_TEXT, metadata={"id": MARK_ID, "score": 0.99})]


@tool
def prose(query: str, k: int = 3) -> str:
    """A broken override: prose instead of the step's output."""
    return "Tom Hanks acted in many films."


def run(method: str, question: str, events: ToolEvents | None = None, **settings) -> dict:
    ctx = context_for(method, llm="fake:test", **settings)
    return get_graph(method).invoke(
        {"question": question}, context=ctx, config={"callbacks": [events]} if events else None
    )


def inputs_of(events: ToolEvents, name: str) -> list:
    return [i for n, i in events.started if n == name]


# -- hybgrag ---------------------------------------------------------------------------------

YES = Validation(reasoning="fits", verdict="yes")
TOM = [TopicEntity(name="Tom Hanks", type="person")]


def test_hybgrag_steps_are_tool_runs(tiny_kb, fake_llm):
    fake_llm(RouterAction(module="hybrid", entities=TOM, relations=["starred_actors"]), YES)
    events = ToolEvents()
    run("hybgrag", "which movies did Tom Hanks act in", events, kb=tiny_kb)
    [args] = inputs_of(events, "hybrid_retrieve")
    assert args["entities"] == ["Tom Hanks"] and args["relations"] == ["starred_actors"]
    assert any(r["name"] == "Big" for r in events.ended[0]["references"])
    json.dumps(events.ended)


def test_hybgrag_text_module_runs_a_users_retriever(tiny_kb, fake_llm):
    fake_llm(RouterAction(module="text", entities=TOM, relations=[]), YES)
    events = ToolEvents()
    out = run(
        "hybgrag",
        "which movies did Tom Hanks act in",
        events,
        kb=tiny_kb,
        tools={"dense_search": MarkerRetriever().as_tool(name="dense_search")},
    )
    assert inputs_of(events, "dense_search") == ["which movies did Tom Hanks act in"]  # a one-string tool
    assert out["ranked"][0]["id"] == MARK_ID and out["evidence"][0]["text"] == MARK_TEXT


def test_hybgrag_bad_overrides(tiny_kb):
    with pytest.raises(StepError, match="hybgrag has no retrieval step.*its steps: dense_search, hybrid_retrieve"):
        context_for("hybgrag", kb=tiny_kb, tools={"text_search": prose})


# -- mor -------------------------------------------------------------------------------------


def plan(*nodes: tuple[str, str, str]) -> Plan:
    return Plan(routes=[PlanRoute(nodes=[PlanNode(type=t, restriction=r, relation=rel) for t, r, rel in nodes])])


HANKS = plan(("person", "Tom Hanks", ""), ("movie", "", "starred_actors"))
TEXT_ONLY = plan(("movie", "a boy who wakes up as an adult", ""))


def test_mor_steps_are_tool_runs(tiny_kb, fake_llm):
    fake_llm(HANKS)
    events = ToolEvents()
    run("mor", "which movies did Tom Hanks act in", events, kb=tiny_kb, max_iterations=1)
    [args] = inputs_of(events, "structural_traversal")
    assert args["route"]["nodes"][0]["restriction"] == "Tom Hanks" and args["question"].startswith("which")
    assert "Big" in events.ended[0]["candidates"]


def test_mor_textual_retrieval_runs_a_users_tool(tiny_kb, fake_llm):
    @tool
    def my_entities(query: str, k: int, categories: list[str] | None = None) -> list[dict]:
        """A user's entity search."""
        return [{"id": "Apollo 13", "score": 5.0}]

    fake_llm(TEXT_ONLY)
    events = ToolEvents()
    out = run(
        "mor",
        "a comedy about a boy who wakes up as an adult",
        events,
        kb=tiny_kb,
        max_iterations=1,
        tools={"textual_retrieval": my_entities},
    )
    [args] = inputs_of(events, "my_entities")  # the user's tool runs under its own name
    assert args["query"] == "a comedy about a boy who wakes up as an adult"
    assert [r["id"] for r in out["ranked"]] == ["Apollo 13"]  # the default finds Big


def test_mor_tool_returning_a_string_is_refused(tiny_kb, fake_llm):
    fake_llm(TEXT_ONLY)
    with pytest.raises(StepError, match="step 'textual_retrieval': returned a str"):
        run("mor", "a comedy about a boy", kb=tiny_kb, max_iterations=1, tools={"textual_retrieval": prose})


# -- hydrarag --------------------------------------------------------------------------------

TOPICS = HR.TopicEntities(entities=["Tom Hanks"])
ANALYSIS = HR.QuestionAnalysis(
    split_questions=["Which movies did Tom Hanks star in?"], skyline="Tom Hanks - starred in - answer(movie)"
)
REFINED = HR.Refinement(summary="Tom Hanks starred in Big.")
CHECK = HR.AnswerCheck(reasoning="The path lists his films.", sufficient="yes", answer="Big")


def test_hydrarag_steps_are_tool_runs(tiny_kb, fake_llm):
    fake_llm(TOPICS, ANALYSIS, HR.SourceChoice(reasoning="kg", sources=["kg"]), REFINED, CHECK)
    events = ToolEvents()
    run("hydrarag", "which movies did Tom Hanks star in", events, kb=tiny_kb)
    [args] = inputs_of(events, "kg_exploration")
    assert args["question"] == "which movies did Tom Hanks star in" and args["probe"]["phase"] == "initial"
    assert "Big" in events.ended[0]["candidates"][0]["text"]


def test_hydrarag_document_exploration_runs_a_users_retriever(tiny_kb, fake_llm):
    fake_llm(TOPICS, ANALYSIS, HR.SourceChoice(reasoning="text", sources=["docs"]), REFINED, CHECK)
    out = run(
        "hydrarag",
        "which movies did Tom Hanks star in",
        kb=tiny_kb,
        tools={"document_exploration": MarkerRetriever().as_tool(name="document_exploration")},
    )
    assert any(e["text"] == MARK_TEXT.rstrip(".") or MARK_TEXT in e["text"] for e in out["evidence"])


def test_hydrarag_unknown_step_is_refused(tiny_kb, fake_llm):
    fake_llm()
    with pytest.raises(StepError, match="its steps: kg_exploration, document_exploration, web_exploration"):
        run("hydrarag", "which movies did Tom Hanks star in", kb=tiny_kb, tools={"doc_search": prose})


# -- ssrag -----------------------------------------------------------------------------------

Q = "which movies did Tom Hanks act in"
AUGMENT = [
    SubQuestions(sub_questions=[Q]),
    KeyEntities(entities=[NamedEntity(name="Tom Hanks", type="person")]),
    IntentCues(intent="which", subtopics=["filmography"], factual_cues=["Tom Hanks"]),
    AugmentedQuery(query="Which films did Tom Hanks act in?"),
]
FACTUAL = RouteLabel(label="FACTUAL")
SSRAG = {"top_k": 3, "vector_k": 3, "graph_k": 1, "max_iterations": 1}


def test_ssrag_steps_are_tool_runs(tiny_kb, fake_llm):
    fake_llm(
        *AUGMENT,
        FACTUAL,
        GraphText(text="Tom Hanks starred in Big."),
        Redundancy(reasoning="none", redundant=[]),
        Answer(reasoning="listed", answer="Big"),
    )
    events = ToolEvents()
    run("ssrag", Q, events, kb=tiny_kb, **SSRAG)
    assert events.names() == {"vector_retrieval", "graph_retrieval"}
    [vec] = inputs_of(events, "vector_retrieval")
    assert vec == {"query": "Which films did Tom Hanks act in?", "k": 3, "source": "local", "web_k": 5}
    [graph] = inputs_of(events, "graph_retrieval")
    assert graph["entities"][0]["name"] == "Tom Hanks" and graph["k"] == 1


def test_ssrag_vector_retrieval_runs_a_users_retriever(tiny_kb, fake_llm):
    fake_llm(*AUGMENT, FACTUAL)
    out = run(
        "ssrag",
        Q,
        kb=tiny_kb,
        **SSRAG,
        graph_to_text="template",
        llm_dedup=False,
        answer=False,
        tools={"vector_retrieval": MarkerRetriever().as_tool(name="vector_retrieval")},
    )
    assert any(e["id"] == MARK_ID and e["text"] == MARK_TEXT for e in out["evidence"])


def test_ssrag_graph_step_returning_a_string_is_refused(tiny_kb, fake_llm):
    fake_llm(*AUGMENT, FACTUAL)
    with pytest.raises(StepError, match="step 'graph_retrieval': returned a str .*expected a list of graph nodes"):
        run(
            "ssrag",
            Q,
            kb=tiny_kb,
            **SSRAG,
            graph_to_text="template",
            llm_dedup=False,
            answer=False,
            tools={"graph_retrieval": prose},
        )
