"""A documents KB (no graph: passages only) answering an entity question with every LLM method.

The answer is a short answer read off the text, never a chunk id, a file name or empty, and no
method refuses a name only the passages write ("Charles Babbage" is no KB entity). The models are
scripted fakes replying by schema (no real LLM): under the small-model rules (``judge="rules"``;
MoR's plans name types the KB does not have, so it falls back to the text), and in QA mode with an
answerer that copies a passage's id, which is not kept.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_chat import ScriptedChatModel
from pydantic import Field

from hybridrag.agents.extraction import ingest_documents
from hybridrag.graphs import context_for, get_graph
from hybridrag.tools.answer_span import answer_span, names_passage, passage_answer

QUESTION = "who worked with Charles Babbage"
ANSWER = "Ada Lovelace"
DOCUMENTS = {
    "ada.txt": "Ada Lovelace was an English mathematician. She worked with Charles Babbage on the Analytical Engine.",
    "grace.txt": "Grace Hopper was an American computer scientist. She developed the first compiler.",
    "engine.txt": "The Analytical Engine was a proposed mechanical computer. It was never completed.",
}
REPLIES: dict[str, Any] = {  # schema name -> reply (a model that reads the question plainly)
    "RouterAction": {"entities": [{"name": "Charles Babbage", "type": "person"}], "relations": [], "module": "text"},
    "Plan": {"routes": [{"nodes": [{"type": "person", "restriction": "Charles Babbage"}, {"type": "person"}]}]},
    "KeyEntities": {"entities": [{"name": "Charles Babbage", "type": "person"}]},
    "TopicEntities": {"entities": ["Charles Babbage"]},
    "SkylinePlan": {"topic": "Charles Babbage", "relations": ["worked with"], "answer_type": "person"},
}
SMALL = {"hybgrag": {"judge": "rules"}, "mor": {}, "hydrarag": {"judge": "rules"}, "ssrag": {"judge": "rules"}}


class ReplyBySchema(ScriptedChatModel):
    """Fake chat model replying to each structured call with the JSON registered for its schema's name.

    A schema built on one of them (a bounded or constrained variant) gets the same reply; any other
    call gets an unparseable reply, as a small model's would be.
    """

    replies: dict[str, Any] = Field(default_factory=dict)

    def _next(self, messages, schema):
        self.calls.append({"messages": messages, "schema": schema.__name__ if schema else None})
        names = [c.__name__ for c in (schema.__mro__ if schema else ())]
        reply = next((self.replies[n] for n in names if n in self.replies), None)
        return json.dumps(reply) if reply is not None else "not json"


@pytest.fixture(scope="module")
def documents_kb(tmp_path_factory) -> str:
    """Three text documents ingested without extraction: passages only, no entity, no triple."""
    src = tmp_path_factory.mktemp("answer-docs")
    for name, text in DOCUMENTS.items():
        (src / name).write_text(text + "\n", encoding="utf-8")
    kb = tmp_path_factory.mktemp("answer-kb") / "kb"
    ingest_documents(kb, [src], progress=False)
    return str(kb)


@pytest.fixture
def reply_by_schema():
    """Factory: ``make(**replies)`` registers a :class:`ReplyBySchema` as ``fake:answers``."""
    from hybridrag.agents.llm.models import forget_model, register_model

    def make(**extra: Any) -> ReplyBySchema:
        model = ReplyBySchema(replies={**REPLIES, **extra})
        register_model("fake:answers", model)
        return model

    yield make
    forget_model("fake:answers")


def _ask(kb: str, method: str, **settings: Any) -> dict:
    ctx = context_for(method, kb=kb, llm="fake:answers", **settings)
    return get_graph(method).invoke({"question": QUESTION}, context=ctx)


def _not_an_id(answer: str) -> bool:
    return bool(answer.strip()) and "#" not in answer and not any(n.removesuffix(".txt") in answer for n in DOCUMENTS)


@pytest.mark.parametrize("method", list(SMALL))
def test_small_model_rules_answer_with_a_span_of_the_top_passage(documents_kb, reply_by_schema, method):
    model = reply_by_schema()
    out = _ask(documents_kb, method, **SMALL[method])
    assert out["answer"] == ANSWER, (method, out["answer"], [s["node"] for s in out["trace"]])
    assert _not_an_id(out["answer"])
    assert out["ranked"] and out["ranked"][0]["id"] == "ada.txt#0"
    assert model.calls, "the method asked the model"


QA = {"hybgrag": {"answer": True, "judge": "rules"}, "mor": {"answer": True}, "ssrag": {"judge": "llm"}}
READER = {  # the other roles of a model that runs every role (judge="llm")
    "SubQuestions": {"sub_questions": [QUESTION]},
    "IntentCues": {"intent": "who"},
    "AugmentedQuery": {"query": "Who worked with Charles Babbage?"},
    "RouteLabel": {"label": "FACTUAL"},
    "Redundancy": {"reasoning": "Nothing repeats.", "redundant": []},
}
COPIED_ID = {"reasoning": "The first context says so.", "answer": "ada.txt#0"}
READ = {"reasoning": "She worked with him.", "answer": ANSWER}


@pytest.mark.parametrize("method", list(QA))
def test_an_answerer_copying_a_passage_id_is_not_kept(documents_kb, reply_by_schema, method):
    reply_by_schema(**READER, Answer=COPIED_ID)
    out = _ask(documents_kb, method, **QA[method])
    [step] = [s for s in out["trace"] if s["node"] == "generate_answer"][-1:]
    assert out["answer"] == ANSWER, (method, step)
    assert "by its id" in step["decision"] or "a passage's id" in step["fallback"], step


@pytest.mark.parametrize("method", list(QA))
def test_an_answerer_reading_the_text_is_kept(documents_kb, reply_by_schema, method):
    reply_by_schema(**READER, Answer=READ)
    out = _ask(documents_kb, method, **QA[method])
    [step] = [s for s in out["trace"] if s["node"] == "generate_answer"][-1:]
    assert out["answer"] == ANSWER and not step.get("fallback") and "fallback" not in step["decision"], (method, step)


def test_a_who_question_reads_he_or_she_as_the_passage_topic():
    ada = DOCUMENTS["ada.txt"]
    assert answer_span(QUESTION, [ada]) == ANSWER
    assert answer_span("what was worked on with Charles Babbage", [ada]) == "Analytical Engine"  # not a who question
    jeff = "Jeffrey Perry is an American actor. He stars in Scandal."
    assert answer_span("who stars in Scandal, Jeff Perry or Tony Goldwyn", [jeff]) != "Jeffrey Perry"  # the question's


def test_passage_labels_are_never_answers():
    items = [{"kind": "passage", "id": "ada.txt#0", "name": "ada.txt#0", "text": DOCUMENTS["ada.txt"]}]
    assert names_passage("ada.txt#0", items) and names_passage("ada.txt", items) and not names_passage(ANSWER, items)
    assert not names_passage("Big", [{"kind": "passage", "id": "p:Big", "entity_id": "Big", "name": "Big"}])
    assert passage_answer(QUESTION, [{"kind": "entity", "text": "Charles Babbage"}, *items]) == ANSWER
