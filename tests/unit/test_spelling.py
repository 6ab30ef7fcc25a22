"""The question's names in the KB's spelling before any method reads it (issue 26, tools/spelling.py)."""

from __future__ import annotations

import pytest
from kb_fixtures import movie_kb
from langgraph.checkpoint.memory import InMemorySaver

from hybridrag.graphs import context_for, get_builder, get_graph
from hybridrag.kb.base import open_kb
from hybridrag.tools.spelling import kb_spelling

TRIPLES = """\
Juno|written_by|Diablo Cody
Jennifer's Body|written_by|Diablo Cody
Jennifer's Body|starred_actors|Megan Fox
Made|directed_by|Jon Favreau
Made|starred_actors|Vince Vaughn
The Jerk|starred_actors|Steve Martin
The Jerk|directed_by|Carl Reiner
Roxanne|starred_actors|Steve Martin
Roxanne|has_tags|steve martin
Oscar and Lucinda|directed_by|Gillian Armstrong
Dark Water|directed_by|Hideo Nakata
Dark water|directed_by|Walter Salles
"""
PASSAGES = [{"id": "p:Juno", "entity_id": "Juno", "text": "Juno is a comedy written by Diablo Cody."}]


@pytest.fixture(scope="module")
def spell_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    return movie_kb(tmp_path_factory, "spelling", TRIPLES, PASSAGES)


@pytest.fixture(scope="module")
def kb(spell_kb):
    return open_kb(spell_kb)


@pytest.mark.parametrize(
    ("question", "respelled", "changes"),
    [
        ("which films did Dibalo Cody write", "which films did Diablo Cody write", [("Dibalo Cody", "Diablo Cody")]),
        (
            "who directed Oscar and Lucidna",
            "who directed Oscar and Lucinda",
            [("Oscar and Lucidna", "Oscar and Lucinda")],
        ),
        (
            "which films did vince vaughn star in",
            "which films did Vince Vaughn star in",
            [("vince vaughn", "Vince Vaughn")],
        ),
        ("who directed the jerk?", "who directed The Jerk?", [("the jerk", "The Jerk")]),
        ("who starred in jennifer's body", "who starred in Jennifer's Body", [("jennifer's body", "Jennifer's Body")]),
        ("did dibalo cody write juno", "did Diablo Cody write juno", [("dibalo cody", "Diablo Cody")]),
        ("who directed dibalo cody's films", "who directed Diablo Cody's films", [("dibalo cody", "Diablo Cody")]),
        ("who starred in the jerk's sequel", "who starred in The Jerk's sequel", [("the jerk", "The Jerk")]),
    ],
)
def test_a_typo_or_a_lower_case_name_is_respelled_as_the_kb_spells_it(kb, question, respelled, changes):
    assert kb_spelling(kb, question) == (respelled, changes)


@pytest.mark.parametrize(
    "question",
    [
        "who made the films Vince Vaughn was in",  # "made" is the film Made only when written so
        "who directed made",  # a lone lower-case word is never read as a name
        "who directed juno",
        "which films did Juno's writer write",
        "who directed dark water",  # two spellings: "Dark Water" and "Dark water"
        "who directed dark watre",  # a typo of either: left as written
        "movies about steve martin",  # the KB spells the tag so: already its spelling
        "did Vince Vaughn star in the jerk",  # a name written as the KB does: the rest is the template's
        "who directed The Jerk",
        "what films are written by the director",  # only common words
        "which movies did Diablo Cody write",
    ],
)
def test_common_words_ambiguous_and_kb_spelled_names_are_left_as_written(kb, question):
    assert kb_spelling(kb, question) == (question, [])


def test_respelling_is_idempotent_and_bounded(kb):
    for question in ["which films did Dibalo Cody write", "who directed the jerk?", "who starred in jennifer's body"]:
        once = kb_spelling(kb, question)[0]
        assert once != question and kb_spelling(kb, once) == (once, [])
    long = "which films did Dibalo Cody write " + "and then some more words " * 20
    assert kb_spelling(kb, long) == (long, [])  # over MAX_WORDS words: left as written


def steps(out: dict) -> list[str]:
    return [s["node"] for s in out["trace"]]


def test_a_run_on_a_typo_gets_the_kb_spelling_and_one_trace_entry(spell_kb):
    graph = get_builder("fusion").compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t1"}}
    out = graph.invoke(
        {"question": "which films did Dibalo Cody write"}, config, context=context_for("fusion", kb=spell_kb)
    )
    assert out["trace"][0] == {
        "node": "read_question",
        "decision": "spelling",
        "changes": [["Dibalo Cody", "Diablo Cody"]],
    }
    assert graph.get_state(config).values["question"] == "which films did Diablo Cody write"
    assert steps(out).count("read_question") == 1
    assert {"Juno", "Jennifer's Body"} <= {r["name"] for r in out["ranked"][:3]}


def test_a_kb_spelled_question_or_the_setting_off_passes_no_spelling_node(spell_kb):
    graph = get_graph("fusion")
    spelled = graph.invoke(
        {"question": "which films did Diablo Cody write"}, context=context_for("fusion", kb=spell_kb)
    )
    assert "read_question" not in steps(spelled)
    off = context_for("fusion", kb=spell_kb, spelling=False)
    typo = graph.invoke({"question": "which films did Dibalo Cody write"}, context=off)
    assert "read_question" not in steps(typo)
    assert steps(typo) == steps(spelled)


def test_a_chat_turn_is_respelled_after_it_is_read(spell_kb):
    out = get_graph("fusion").invoke(
        {"messages": [{"role": "user", "content": "which films did dibalo cody write"}]},
        context=context_for("fusion", kb=spell_kb),
    )
    assert steps(out)[:2] == ["read_messages", "read_question"]
    assert out["trace"][1]["changes"] == [["dibalo cody", "Diablo Cody"]]
    reply = out["messages"][-1]
    assert reply.additional_kwargs["question"] == "which films did Diablo Cody write"
    assert reply.content.endswith("(Read as: which films did Diablo Cody write)")
