"""Every method as a LangChain retriever and as a tool in a user's own LangGraph agent."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from fake_chat import ScriptedChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.retrievers import BaseRetriever

from hybridrag.app.retriever import as_tool, documents, get_retriever
from hybridrag.graphs import list_graphs

QUESTION = "who directed Forrest Gump"


def test_fusion_retriever_returns_scored_documents_sync_and_async():
    retriever = get_retriever("fusion", top_k=3)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke(QUESTION)
    assert 1 <= len(docs) <= 3 and "Robert Zemeckis" in docs[0].page_content
    for rank, doc in enumerate(docs, 1):
        meta = doc.metadata
        assert meta["source"] in ("kg", "doc", "web") and isinstance(meta["score"], float)
        assert isinstance(meta["path"], list) and meta["rank"] == rank and meta["method"] == "fusion"
        assert meta["answer"] == "Robert Zemeckis" and meta["trace_id"] == docs[0].metadata["trace_id"]
    assert [d.metadata["score"] for d in docs] == sorted((d.metadata["score"] for d in docs), reverse=True)
    again = asyncio.run(retriever.ainvoke(QUESTION))
    assert [d.page_content for d in again] == [d.page_content for d in docs]
    assert again[0].metadata["trace_id"] != docs[0].metadata["trace_id"], "one trace id per question"


def test_settings_reach_the_method_and_mistakes_fail_when_the_retriever_is_made(tiny_kb):
    docs = get_retriever("fusion", kb=tiny_kb, mode="vector", top_k=2).invoke("who directed Big")
    assert len(docs) <= 2 and all(d.metadata["source"] == "doc" for d in docs)
    with pytest.raises(TypeError, match="no setting.*nope"):
        get_retriever("fusion", nope=1)
    with pytest.raises(KeyError, match="unknown method 'rag'"):
        get_retriever("rag")


@pytest.mark.parametrize("method", list_graphs())
def test_every_method_has_a_retriever_and_a_tool(method):
    extra = {"llm": ScriptedChatModel(script=[])} if method != "fusion" else {}
    assert get_retriever(method, **extra).method == method
    assert as_tool(method, **extra).name == f"hybridrag_{method}"


def test_documents_fall_back_to_the_ranked_items():
    out = {"answer": "x", "ranked": [{"id": "e1", "name": "E One", "score": 0.5, "source": "kg"}]}
    doc = documents(out, "mor", "t1")[0]
    assert doc.page_content == "E One" and doc.metadata["source"] == "kg" and doc.id == "t1:1"


class ToolCallingModel(ScriptedChatModel):
    """The scripted fake, also replaying AIMessage items as they are (tool calls included)."""

    def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        if self.script and isinstance(self.script[0], AIMessage):
            return ChatResult(generations=[ChatGeneration(message=self._next(messages, None))])
        return super()._generate(messages, stop, run_manager, **kwargs)


def test_a_users_own_langgraph_agent_calls_the_hybridrag_tool():
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    tool = as_tool("fusion", top_k=3)
    call = {"name": tool.name, "args": {"query": QUESTION}, "id": "call-1", "type": "tool_call"}
    model = ToolCallingModel(
        script=[AIMessage(content="", tool_calls=[call]), AIMessage(content="Robert Zemeckis directed Forrest Gump.")]
    )
    bound = model.bind_tools([tool])

    def agent(state: MessagesState) -> dict:
        return {"messages": [bound.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([tool]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    out = builder.compile().invoke({"messages": [HumanMessage(QUESTION)]})

    tool_msgs = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_msgs) == 1 and tool_msgs[0].tool_call_id == "call-1"
    assert tool_msgs[0].content.startswith("[kg ") and "Robert Zemeckis" in tool_msgs[0].content
    assert out["messages"][-1].content == "Robert Zemeckis directed Forrest Gump."
    assert not model.script and len(model.calls) == 2
    assert "Robert Zemeckis" in str(model.calls[1]["messages"][-1].content), "the agent read the evidence"
