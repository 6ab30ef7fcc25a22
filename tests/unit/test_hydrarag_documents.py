"""HydraRAG on a KB of documents only (no entity, as a user's folder of text files is).

A topic name no KB entity aligns to has the passages naming it as its documents, so the refined
round reaches the page of the bridge entity its follow-up names; the evidence ends with the
documents read that no path was built from; a side of an "X or Y" the question offers is an answer,
not the question's own entity; a number written with a comma stays one answer.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from fake_chat import ScriptedChatModel
from pydantic import Field

from hybridrag.agents.hydrarag import documents
from hybridrag.agents.hydrarag import roles as R
from hybridrag.agents.hydrarag.answering import offered_choice, without_own_entities
from hybridrag.graphs.hydrarag import HydraRAGContext, graph

Q = "Which school did the composer of the album Nightbook attend?"
DOCS = {
    "Nightbook.txt": "Nightbook is a studio album released in 2006. It was composed by Ludo Vance.",
    "Ludo_Vance.txt": "Ludo Vance is a pianist born in Turin. He studied at the Verdi School in Milan.",
    "Harbour_Lights.txt": "Harbour Lights is a 1998 novel about a lighthouse keeper on a rocky coast.",
    "Red_Kites.txt": "Red kites are birds of prey that nest in tall trees across Wales.",
}
FOLLOW_UP = R.FollowUp(
    missing="where the composer studied",
    question=Q,
    skyline="Ludo Vance - studied at - answer(school)",
    topic_entities=["Ludo Vance"],
)


class ReadsTheEvidence(ScriptedChatModel):
    """Answers each structured call by schema, as a model reading its prompt would.

    The path selection picks the paths naming the school (else the first); the answer check says
    {Yes} once its evidence names the school.
    """

    replies: dict[Any, Any] = Field(default_factory=dict)

    def _next(self, messages, schema):
        self.calls.append({"messages": messages, "schema": schema.__name__ if schema else None})
        prompt = str(messages[-1].content)
        if schema is R.Choice:
            blocks = re.findall(r'<data n="(\d+)"[^>]*>(.*?)</data>', prompt, flags=re.DOTALL)
            picked = [int(n) for n, body in blocks if SCHOOL in body] or [1]
            return R.Choice(reasoning="the school first", selected=picked)
        if schema is R.AnswerCheck:
            shown = SCHOOL in prompt
            return R.AnswerCheck(reasoning="read", sufficient="yes" if shown else "no", answer=SCHOOL if shown else "")
        return self.replies[schema]


SCHOOL = "Verdi School"
REPLIES = {
    R.TopicEntities: R.TopicEntities(entities=["Nightbook"]),
    R.QuestionAnalysis: R.QuestionAnalysis(split_questions=[Q], skyline="Nightbook - composed by - answer(person)"),
    R.TextPaths: R.TextPaths(paths=[]),
    R.Refinement: R.Refinement(summary=""),
    R.PathSummary: R.PathSummary(paths=[]),
    R.FollowUp: FOLLOW_UP,
    R.Predictions: R.Predictions(predictions=[]),
    R.FinalAnswer: R.FinalAnswer(reasoning="not found", answer=""),
}


@pytest.fixture(scope="module")
def folder_kb(tmp_path_factory) -> str:
    from hybridrag.agents.extraction import ingest_documents

    src = tmp_path_factory.mktemp("hydra-docs")
    for name, text in DOCS.items():
        (src / name).write_text(text, encoding="utf-8")
    out = tmp_path_factory.mktemp("hydra-docs-kb") / "kb"
    ingest_documents(out, [src], progress=False)
    return str(out)


@pytest.fixture
def reader(monkeypatch):
    from hybridrag.agents.llm.models import forget_model, register_model

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    model = ReadsTheEvidence(replies=REPLIES)
    register_model("fake:docs", model)
    yield model
    forget_model("fake:docs")


def _run(kb: str, **kw) -> dict:
    ctx = HydraRAGContext(kb=kb, llm="fake:docs", use_web=False, path_summary=False, **{"doc_pool": 1, **kw})
    return graph.invoke({"question": Q}, context=ctx)


def _files(items: list[dict]) -> list[str]:
    return [str(e["id"]).split("#")[0] for e in items]


def test_a_name_no_entity_aligns_to_has_the_passages_naming_it(folder_kb):
    from hybridrag.kb.base import open_kb

    kb = open_kb(folder_kb)
    assert not [d for d in kb.docs if d.kind != "passage"], "a folder of documents: passages only"
    found = _files([{"id": d[0]} for d in documents.gather_docs(kb, [], Q, 1, ["Ludo Vance"])])
    assert "Ludo_Vance.txt" in found and "Nightbook.txt" in found  # both name him
    assert "Ludo_Vance.txt" not in _files([{"id": d[0]} for d in documents.gather_docs(kb, [], Q, 1)])
    assert documents.gather_docs(kb, [], Q, 0, ["Ludo Vance"]) == []  # pool 0: attached passages only


def test_the_refined_round_reads_the_page_of_the_entity_the_follow_up_names(folder_kb, reader):
    out = _run(folder_kb)
    assert out["answer"] == SCHOOL, out["trace"][-4:]
    refined = [s for s in out["trace"] if s["node"] == "plan_refined_exploration"]
    assert refined and refined[0]["skyline"] == FOLLOW_UP.skyline
    files = _files(out["evidence"])
    assert files[0] == "Ludo_Vance.txt" and "Nightbook.txt" in files


def test_the_evidence_ends_with_the_documents_read_that_no_path_was_built_from(folder_kb, reader):
    out = _run(folder_kb, num_sentences=1, max_iterations=1, doc_pool=3)
    paths = [e for e in out["evidence"] if e["path"] is not None]
    read = [e for e in out["evidence"] if e["path"] is None]
    assert paths and read, out["evidence"]
    assert out["evidence"] == paths + read, "every path before every document read"
    assert not set(_files(paths)) & set(_files(read)), "a document a path cites is not listed again"
    assert [e["score"] for e in read] == sorted((e["score"] for e in read), reverse=True)
    ranked = [r["id"] for r in out["ranked"]]
    assert ranked[-len(read) :] == [e["id"] for e in read]
    assert len(_run(folder_kb, num_sentences=1, max_iterations=1, doc_pool=3, top_k=1)["ranked"]) == 1


def test_unread_keeps_each_document_once_at_its_best_score():
    docs = [
        {"doc_id": "a", "score": 0.2, "sentence": "x", "doc_name": "a", "source": "doc"},
        {"doc_id": "b", "score": 0.5, "sentence": "y", "doc_name": "b", "source": "doc"},
        {"doc_id": "a", "score": 0.9, "sentence": "z", "doc_name": "a", "source": "doc"},
        {"doc_id": "c", "score": 0.7, "sentence": "w", "doc_name": "c", "source": "doc"},
    ]
    assert [(d["doc_id"], d["score"]) for d in documents.unread(docs, {"c"})] == [("a", 0.9), ("b", 0.5)]
    assert documents.as_evidence(docs[2]) == {"source": "doc", "id": "a", "text": "z", "score": 0.9, "path": None}


def test_a_side_of_a_choice_the_question_offers_is_an_answer_not_its_own_entity():
    q = "Who was born first, Johan Leysen or George Clooney?"
    state = {"question": q, "topics": [], "mentions": ["Johan Leysen", "George Clooney"]}
    assert without_own_entities(state, "Johan Leysen") == "Johan Leysen"
    assert without_own_entities(state, "George Clooney") == "George Clooney"
    assert offered_choice("Which son was born first, Brent Robert Barry or Drew William Barry?", "Brent Robert Barry")
    assert not offered_choice("Who directed Big, and when?", "Big")
    plain = {"question": "who directed Big", "topics": [], "mentions": ["Big"]}
    assert without_own_entities(plain, "Big") == ""  # no choice offered: the question's own entity


def test_a_number_written_with_a_comma_stays_one_answer():
    state = {"question": "What was the population in 2010?", "topics": [], "mentions": ["Sochi"]}
    assert without_own_entities(state, "143,372") == "143,372"
    assert without_own_entities(state, "Sochi, Russia") == "Russia"
    assert without_own_entities(state, "Big; Sochi; Apollo 13") == "Big; Apollo 13"


def test_a_name_the_passages_know_is_no_topic_problem(folder_kb):
    from hybridrag.agents.hydrarag import audit
    from hybridrag.kb.base import open_kb

    kb = open_kb(folder_kb)
    st = {"mentions": ["Nightbook", "Zorblax"], "unlinked": ["Nightbook", "Zorblax"], "topics": []}
    assert audit.topic_problems(st, Q, kb) == [
        "extracted topic entity 'Zorblax' is not an entity of the knowledge base"
    ]
    assert len(audit.topic_problems(st, Q)) == 2, "without a KB to read, both are unknown"


def test_a_first_round_yes_on_a_name_the_passages_know_stands(folder_kb, reader):
    out = _run(folder_kb, doc_pool=4, num_sentences=10)
    checks = [s for s in out["trace"] if s["node"] == "check_answer"]
    assert out["answer"] == SCHOOL and len(checks) == 1, [(s["decision"], s.get("fallback")) for s in checks]


def test_a_name_too_many_passages_write_names_no_topic(folder_kb, monkeypatch):
    from hybridrag.kb.base import open_kb

    kb = open_kb(folder_kb)
    monkeypatch.setattr(kb, "dense_search", lambda *a, **k: [])
    monkeypatch.setattr(kb, "lexical_search", lambda *a, **k: [])  # only the names can bring a passage
    monkeypatch.setattr(documents, "NAMING_PER_POOL", 1)  # at most 1 passage a name (pool 1)
    assert _files([{"id": d[0]} for d in documents.gather_docs(kb, [], Q, 1, ["Verdi School"])]) == ["Ludo_Vance.txt"]
    assert documents.gather_docs(kb, [], Q, 1, ["Ludo Vance"]) == [], "two passages name him: too common a name"
