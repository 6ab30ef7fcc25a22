"""Retrieval steps as LangChain tools: traced as tool runs, swappable from the context (fusion, shared parts)."""

from __future__ import annotations

import asyncio
import importlib
import json

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.tools import tool
from pydantic import TypeAdapter

from hybridrag.app.policy import PolicyError, build_context, server_context
from hybridrag.app.server_config import ServerConfig
from hybridrag.graphs import context_class, context_for, get_graph, list_graphs, retrieval_steps
from hybridrag.tools.steps import StepError

MARK = "p:marker-passage"
MARK_TEXT = "Forrest Gump was directed by Zebulon Marker in a parallel universe."


class ToolEvents(BaseCallbackHandler):
    """Records every tool run: (event, tool name, inputs or output)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, object]] = []
        self._names: dict = {}

    def on_tool_start(self, serialized, input_str, *, run_id, inputs=None, **kwargs):
        self._names[run_id] = serialized["name"]
        self.events.append(("start", serialized["name"], inputs))

    def on_tool_end(self, output, *, run_id, **kwargs):
        self.events.append(("end", self._names.get(run_id), output))

    def started(self) -> dict[str, list]:
        out: dict[str, list] = {}
        for kind, name, data in self.events:
            if kind == "start":
                out.setdefault(name, []).append(data)
        return out


@tool
def marker_search(query: str, k: int = 3) -> list[Document]:
    """A user's own passage search: always the marker passage."""
    return [Document(page_content=MARK_TEXT, metadata={"id": MARK, "score": 0.99, "entity_id": "Forrest Gump"})]


@tool
def talkative_search(query: str, k: int = 3) -> str:
    """A broken override: returns prose instead of passages."""
    return "Here are some passages about " + query


def test_fusion_steps_are_tool_runs_with_their_inputs_and_outputs():
    events = ToolEvents()
    out = get_graph("fusion").invoke(
        {"question": "who directed Forrest Gump"}, context=context_for("fusion"), config={"callbacks": [events]}
    )
    started = events.started()
    assert set(started) == {"dense_search", "lexical_search", "seed_passages", "graph_expand"}
    assert started["dense_search"] == [{"query": "who directed Forrest Gump", "k": 10}]  # k1 = 3 of top_k = 10
    assert started["graph_expand"][0]["seeds"] == ["Forrest Gump"]
    ends = {name: data for kind, name, data in events.events if kind == "end"}
    assert any(p["entity"] == "Robert Zemeckis" for p in ends["graph_expand"])
    json.dumps([data for _, _, data in events.events])  # inputs and outputs are JSON-friendly
    assert out["answer"] == "Robert Zemeckis"


def test_fusion_bm25_mode_runs_the_lexical_step():
    events = ToolEvents()
    get_graph("fusion").invoke(
        {"question": "Forrest Gump"}, context=context_for("fusion", mode="bm25"), config={"callbacks": [events]}
    )
    assert set(events.started()) == {"lexical_search"}


def test_a_user_tool_replaces_fusion_dense_search():
    ctx = context_for("fusion", mode="vector", tools={"dense_search": marker_search})
    out = get_graph("fusion").invoke({"question": "who directed Forrest Gump"}, context=ctx)
    assert out["ranked"][0]["id"] == MARK
    assert any(MARK_TEXT in e["text"] for e in out["evidence"])


def test_a_user_graph_expand_tool_keeps_the_paths_contract():
    @tool
    def my_expand(question: str, seeds: list[str], k: int, hops: int = 1) -> list[dict]:
        """A user's graph expansion (e.g. a Cypher query)."""
        return [
            {
                "entity": "Zebulon Marker",
                "score": 0.9,
                "path": [{"head": seeds[0], "relation": "directed_by", "tail": "Zebulon Marker"}],
            }
        ]

    ctx = context_for("fusion", mode="graph", tools={"graph_expand": my_expand})
    out = get_graph("fusion").invoke({"question": "who directed Forrest Gump"}, context=ctx)
    assert out["ranked"][0]["id"] == "Zebulon Marker"
    assert any("Zebulon Marker" in e["text"] for e in out["evidence"])


def test_an_unknown_step_name_lists_the_methods_steps():
    ctx = context_for("fusion", tools={"vector_search": marker_search})
    with pytest.raises(
        StepError,
        match=r"no retrieval step\(s\) vector_search; its steps: dense_search, "
        r"lexical_search, seed_passages, graph_expand",
    ):
        get_graph("fusion").invoke({"question": "who directed Forrest Gump"}, context=ctx)


def test_a_tool_returning_a_string_is_refused_naming_the_step_and_contract():
    ctx = context_for("fusion", tools={"dense_search": talkative_search})
    with pytest.raises(StepError, match=r"step 'dense_search': returned a str .*expected a list of passages"):
        get_graph("fusion").invoke({"question": "who directed Forrest Gump"}, context=ctx)


def test_an_override_that_is_not_a_tool_is_refused():
    ctx = context_for("fusion", tools={"dense_search": lambda query, k: []})
    with pytest.raises(StepError, match="expected a LangChain tool"):
        get_graph("fusion").invoke({"question": "who directed Forrest Gump"}, context=ctx)


@pytest.mark.parametrize("method", list_graphs())
def test_no_client_can_set_tools(method, monkeypatch):
    cls = context_class(method)
    config = ServerConfig(kbs={"sample": "sample"})
    with pytest.raises(PolicyError, match="^tools: server-side setting: Python objects .*never set by a client"):
        build_context(cls, {"tools": {"dense_search": "x"}}, config)
    monkeypatch.setattr("hybridrag.app.policy.active_config", lambda: config)
    step = next(iter(importlib.import_module(f"hybridrag.agents.{method}.tools").STEPS))
    with pytest.raises(PolicyError, match="^tools: "):
        server_context(cls(tools={step: marker_search}), cls)
    for schema in (TypeAdapter(cls).json_schema(), get_graph(method).get_context_jsonschema()):
        assert '"tools"' not in json.dumps(schema)  # neither Studio nor the Agent Server offers it


def test_tools_ignores_the_environment(monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_TOOLS", "{}")
    assert context_class("fusion")().tools is None


def test_retrieval_steps_lists_each_methods_steps_with_their_descriptions():
    steps = retrieval_steps("ssrag")
    assert list(steps) == ["vector_retrieval", "graph_retrieval", "web_graph_retrieval"]
    assert all(isinstance(d, str) and d for d in steps.values())
    assert set(retrieval_steps("fusion")) == {"dense_search", "lexical_search", "seed_passages", "graph_expand"}
    with pytest.raises(KeyError, match="unknown method"):
        retrieval_steps("nope")


def test_astream_events_show_the_tool_steps():
    async def tool_events() -> list[tuple[str, str]]:
        return [
            (e["event"], e["name"])
            async for e in get_graph("fusion").astream_events(
                {"question": "who directed Forrest Gump"}, context=context_for("fusion"), version="v2"
            )
            if e["event"] in ("on_tool_start", "on_tool_end")
        ]

    seen = asyncio.run(tool_events())
    assert seen[:2] == [("on_tool_start", "dense_search"), ("on_tool_end", "dense_search")]
    assert {n for _, n in seen} == {"dense_search", "lexical_search", "seed_passages", "graph_expand"}
