"""Chat-shaped graphs (issue 28 item 4): every method takes LangGraph's ``messages``, reads a
follow-up through the previous turn and answers with an AI message; ``{question}`` runs are as
before; an input that asks nothing is refused by name (issue 28 item 7)."""

from __future__ import annotations

import re

import pytest
from fake_chat import ScriptedChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.constants import END, START

from hybridrag.agents.followup import follow_up
from hybridrag.graphs import context_for, get_builder, get_graph, list_graphs
from hybridrag.graphs.chat import READ, REPLY, InputError

NAMES = ["Big", "The Big Picture", "Forrest Gump", "Penny Marshall", "Tom Hanks"]


def names_in(text: str) -> list[str]:
    """A stand-in for the KB's names: the NAMES a text writes as whole words, longest first."""
    found = [n for n in sorted(NAMES, key=len, reverse=True) if re.search(rf"\b{re.escape(n)}\b", text, re.I)]
    return [n for n in found if not any(n != m and n.casefold() in m.casefold() for m in found)]


ASKED, ANSWER = "who directed Big?", "Penny Marshall"


@pytest.mark.parametrize(
    ("message", "read_as"),
    [
        ("and who wrote it?", "who wrote Big?"),  # "it": the previous question's topic
        ("when was that movie released", "when was Big released"),
        ("what is its genre?", "what is Big's genre?"),
        ("what else did she direct?", "what else did Penny Marshall direct?"),  # a person: the previous answer
        ("which films did his studio make", "which films did Penny Marshall's studio make"),
        ("and Forrest Gump?", "who directed Forrest Gump?"),  # the same question about another entity
        ("what about Forrest Gump", "who directed Forrest Gump?"),
        ("who wrote?", "who wrote Big?"),  # a short follow-up naming nothing gets the topic
        ("and the writer?", "the writer of Big?"),
        ("who starred in Forrest Gump", "who starred in Forrest Gump"),  # a new question: as written
        ("what movies are about space travel", "what movies are about space travel"),  # not a follow-up's shape
    ],
)
def test_a_follow_up_is_read_through_the_previous_turn(message, read_as):
    assert follow_up(message, ASKED, ANSWER, names_in) == read_as


def test_the_first_message_and_a_turn_without_topic_or_answer():
    assert follow_up("who directed it?", "", "", names_in) == "who directed it?"
    assert follow_up("and who wrote it?", "what is a comedy about growing up", "Big", names_in) == "who wrote Big?"
    assert follow_up("what else did he direct", "who directed Big?", "", names_in) == "what else did Big direct"


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_fusion_answers_a_chat_and_its_follow_up(tiny_kb):
    graph, ctx = get_graph("fusion"), context_for("fusion", kb=tiny_kb)
    first = graph.invoke({"messages": [user("who directed Big?")]}, context=ctx)
    reply = first["messages"][-1]
    assert isinstance(reply, AIMessage) and reply.content.split("\n")[0] == first["answer"] == "Penny Marshall"
    assert "\nEvidence:\n[1] " in reply.content and "Penny Marshall" in reply.content.split("[1] ")[1].split("\n")[0]
    assert [s["node"] for s in first["trace"]] == [READ, "retrieve_vectors", "expand_seeds", "fuse_results"]
    second = graph.invoke({"messages": [*first["messages"], user("and what year was it released?")]}, context=ctx)
    assert second["trace"][0]["question"] == "what year was Big released?"
    assert second["answer"] == "1988" and second["messages"][-1].content.startswith("1988\n")
    assert "(Read as: what year was Big released?)" in second["messages"][-1].content
    assert len(second["messages"]) == 4


def test_content_blocks_as_agent_chat_ui_sends_them(tiny_kb):
    blocks = {"type": "human", "content": [{"type": "text", "text": "who directed"}, {"type": "text", "text": "Big?"}]}
    out = get_graph("fusion").invoke({"messages": [blocks]}, context=context_for("fusion", kb=tiny_kb))
    assert out["trace"][0]["question"] == "who directed Big?" and out["answer"] == "Penny Marshall"


def test_a_question_runs_only_the_methods_own_nodes(tiny_kb):
    out = get_graph("fusion").invoke({"question": "who directed Big"}, context=context_for("fusion", kb=tiny_kb))
    assert [s["node"] for s in out["trace"]] == ["retrieve_vectors", "expand_seeds", "fuse_results"]
    assert "messages" not in out and out["answer"] == "Penny Marshall"


def chat_twice(tiny_kb, model) -> dict:
    """HybGRAG on a thread: "who directed Big?", then "and when was it released?"; the second output."""
    graph = get_builder("hybgrag").compile(checkpointer=InMemorySaver())
    config, ctx = (
        {"configurable": {"thread_id": "chat"}},
        context_for("hybgrag", kb=tiny_kb, llm=model, max_iterations=1),
    )
    graph.invoke({"messages": [user("who directed Big?")]}, config, context=ctx)
    return graph.invoke({"messages": [user("and when was it released?")]}, config, context=ctx)


def test_an_llm_method_keeps_the_conversation_and_its_model_rewrites_the_follow_up(tiny_kb):
    from hybridrag.agents.followup import Rewrite
    from hybridrag.agents.hybgrag.roles import RouterAction, Validation

    turn = [RouterAction(module="text"), Validation(reasoning="names it", verdict="yes")]
    model = ScriptedChatModel(script=[*turn, Rewrite(question="in which year was Big released?"), *turn])
    out = chat_twice(tiny_kb, model)
    assert [m.type for m in out["messages"]] == ["human", "ai", "human", "ai"]
    assert out["trace"][0] == {
        "node": READ,
        "decision": "follow-up rewritten by the chat model",
        "question": "in which year was Big released?",
    }
    assert [s["node"] for s in out["trace"]][1:] == ["route_question", "retrieve_text", "validate_retrieval"]
    assert out["messages"][-1].content.split("\n")[0] == (out["answer"] or "I found no answer in the knowledge base.")
    assert out["usage"]["by_role"]["follow_up"]["llm_calls"] == 1 and not model.script
    prompt = "\n".join(str(m.content) for m in model.calls[2]["messages"])
    assert '<data source="chat">\nquestion: who directed Big?\nanswer: ' in prompt  # the previous turn is data
    assert "Latest message: and when was it released?" in prompt and "Security rule" in prompt


def test_a_small_model_or_one_without_a_reply_leaves_the_rules_reading(tiny_kb):
    from fake_chat import ChatLlamaCpp

    from hybridrag.agents.hybgrag.roles import RouterAction, Validation

    small = ChatLlamaCpp(script=[RouterAction(module="text")] * 2)  # a local model: validated by rule, no rewrite
    turn = [RouterAction(module="text"), Validation(reasoning="names it", verdict="yes")]
    no_reply = ScriptedChatModel(script=[*turn, LookupError("no reply for this call"), *turn])
    for model in (small, no_reply):
        out = chat_twice(tiny_kb, model)
        assert out["trace"][0]["decision"] == "follow-up read through the previous turn"
        assert out["trace"][0]["question"] == "when was Big released?" and not model.script


def test_the_follow_up_prompt_declares_its_inputs():
    from hybridrag.prompts.chat import ALL

    assert all(p.fields() == set(p.inputs) for p in ALL)


@pytest.mark.parametrize("name", list_graphs())
@pytest.mark.parametrize("make", [get_graph, lambda n: get_builder(n).compile()])
def test_every_method_reads_messages_first_and_replies_last(name, make):
    edges = {(e.source, e.target): e for e in make(name).get_graph().edges}
    first = START if (START, READ) in edges else "start_question"  # a thread's graph empties the state first
    assert (first, READ) in edges and edges[(first, READ)].conditional
    enders = {s for s, t in edges if t == END and s != REPLY}
    assert enders and all((s, REPLY) in edges for s in enders), f"{name}: an end route without the reply"
    assert (REPLY, END) in edges


EXAMPLE = re.escape('e.g. {"question": "who directed Big"}')


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"q": "who directed Big"}, r"^input: no `question` and no `messages`"),
        ({}, r"^input: no `question` and no `messages`"),
        ({"messages": [{"role": "assistant", "content": "hello"}]}, r"^input: no `question` and no `messages`"),
        ({"question": ""}, rf"^question: empty; ask a question, {EXAMPLE}"),
        ({"question": "  \n"}, r"^question: empty"),
        ({"question": 7}, r"^question: must be a string, not int"),
        ({"messages": [user(" ")]}, r"^messages: empty"),
    ],
)
def test_an_input_that_asks_nothing_is_refused_by_name(given, message, tiny_kb):
    with pytest.raises(InputError, match=message):
        get_graph("fusion").invoke(given, context=context_for("fusion", kb=tiny_kb))


def test_a_server_bounds_the_question(monkeypatch, tmp_path):
    import json

    import hybridrag.app.server_policy  # noqa: F401 - installs the server's run policy

    path = tmp_path / "server.json"
    path.write_text(json.dumps({"max_question_chars": 20}), encoding="utf-8")
    monkeypatch.setenv("HYBRIDRAG_SERVER_MODE", "1")
    monkeypatch.setenv("HYBRIDRAG_SERVER_CONFIG", str(path))
    for given, field, size in (
        ({"question": "x" * 21}, "question", 21),
        ({"messages": [user("y" * 25)]}, "messages", 25),
    ):
        with pytest.raises(InputError, match=rf"^{field}: at most 20 characters, not {size}\b"):
            get_graph("fusion").invoke(given)
    assert get_graph("fusion").invoke({"question": "who directed Big"})["answer"]  # 16 characters: admitted
    # the history is the client's too: an earlier turn is read only up to the same bound
    from hybridrag.graphs.chat import previous_turn

    history = [HumanMessage(content="z" * 5000), AIMessage(content="w" * 5000), HumanMessage(content="and who?")]
    asked, answer = previous_turn(history)
    assert (len(asked), len(answer)) == (20, 20)
