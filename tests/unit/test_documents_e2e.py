"""End to end: documents written here → KB (graph extracted on the fake model) → every method answers
a question about them, with evidence that leads back to a chunk of the documents.

The LLM methods run on a fake chat model that replies by schema (what a perfect model would say for
this question), like the scripted fake of the other unit tests but independent of call order.
"""

from __future__ import annotations

from typing import Any

import pytest
from fake_chat import ScriptedChatModel
from ingest_documents_corpus import EXTRACTIONS, write_corpus
from pydantic import Field

from hybridrag.agents.extraction import ingest_documents
from hybridrag.agents.hybgrag import roles as hyb
from hybridrag.agents.hydrarag import roles as hydra
from hybridrag.agents.mor import roles as mor_roles
from hybridrag.agents.mor.plan import Plan, PlanNode, PlanRoute
from hybridrag.agents.ssrag import augment as aug
from hybridrag.agents.ssrag import retrieval as ss_ret
from hybridrag.agents.ssrag import unify as ss_unify
from hybridrag.agents.ssrag.routing import RouteLabel
from hybridrag.graphs import context_for, get_graph, list_graphs
from hybridrag.kb.provenance import Provenance

QUESTION = "who designed the Kestrel"
ANSWER = "Tomas Reyes"
DESIGNER = "Tomas Reyes was the chief designer of the Kestrel."


class ReplyBySchema(ScriptedChatModel):
    """Fake chat model answering each structured call with the reply registered for its schema."""

    replies: dict[Any, Any] = Field(default_factory=dict)

    def _next(self, messages, schema):
        self.calls.append({"messages": messages, "schema": schema.__name__ if schema else None})
        if schema not in self.replies:
            raise AssertionError(f"unexpected LLM call (schema={schema and schema.__name__})")
        return self.replies[schema]


REPLIES = {
    # HybGRAG: route to the designer relation, accept, answer
    hyb.RouterAction: hyb.RouterAction(
        entities=[hyb.TopicEntity(name="Kestrel", type="product")], relations=["designed_by"], module="hybrid"
    ),
    hyb.Validation: hyb.Validation(reasoning="The path names the designer.", verdict="yes"),
    hyb.Answer: hyb.Answer(reasoning=DESIGNER, answer=ANSWER),
    # MoR: product<Kestrel> -designed_by-> person
    Plan: Plan(
        routes=[
            PlanRoute(
                nodes=[PlanNode(type="product", restriction="Kestrel"), PlanNode(type="person", relation="designed_by")]
            )
        ]
    ),
    mor_roles.Answer: mor_roles.Answer(reasoning=DESIGNER, answer=ANSWER),
    # HydraRAG: topic, analysis, the KG, an accepted answer
    hydra.TopicEntities: hydra.TopicEntities(entities=["Kestrel"]),
    hydra.QuestionAnalysis: hydra.QuestionAnalysis(
        split_questions=["Who designed the Kestrel?"], skyline="Kestrel - designed by - answer(person)"
    ),
    hydra.SourceChoice: hydra.SourceChoice(reasoning="the graph holds designers", sources=["kg", "docs"]),
    hydra.Choice: hydra.Choice(reasoning="the designer path", selected=[1]),
    hydra.TextPaths: hydra.TextPaths(paths=[]),
    hydra.Refinement: hydra.Refinement(summary=DESIGNER),
    hydra.AnswerCheck: hydra.AnswerCheck(reasoning=DESIGNER, sufficient="yes", answer=ANSWER),
    hydra.FinalAnswer: hydra.FinalAnswer(reasoning=DESIGNER, answer=ANSWER),
    # SSRAG: augment, route locally, unify, answer
    aug.SubQuestions: aug.SubQuestions(sub_questions=[QUESTION]),
    aug.KeyEntities: aug.KeyEntities(entities=[aug.NamedEntity(name="Kestrel", type="product")]),
    aug.IntentCues: aug.IntentCues(intent="who", factual_cues=["Kestrel"]),
    aug.AugmentedQuery: aug.AugmentedQuery(query="Who designed the Kestrel survey drone?"),
    RouteLabel: RouteLabel(label="FACTUAL"),
    ss_ret.GraphText: ss_ret.GraphText(text="The Kestrel was designed by Tomas Reyes."),
    ss_unify.Redundancy: ss_unify.Redundancy(reasoning="Nothing repeats.", redundant=[]),
    ss_unify.Answer: ss_unify.Answer(reasoning=DESIGNER, answer=ANSWER),
}


@pytest.fixture(scope="module")
def document_kb(tmp_path_factory) -> str:
    """The corpus's four documents (Markdown, text, HTML, PDF) ingested with extraction."""
    from hybridrag.agents.llm.models import forget_model, register_model

    src = write_corpus(tmp_path_factory.mktemp("e2e-docs"))
    kb = tmp_path_factory.mktemp("e2e-kb") / "kb"
    register_model("fake:extract-e2e", ScriptedChatModel(script=list(EXTRACTIONS)))
    try:
        ingest_documents(kb, src, extract_llm="fake:extract-e2e", progress=False)
    finally:
        forget_model("fake:extract-e2e")
    return str(kb)


@pytest.fixture
def answering_model(monkeypatch):
    from hybridrag.agents.llm.models import forget_model, register_model

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    model = ReplyBySchema(replies=REPLIES)
    register_model("fake:e2e", model)
    yield model
    forget_model("fake:e2e")


SETTINGS = {
    "fusion": {},
    "hybgrag": {"answer": True},
    "mor": {"answer": True},
    "hydrarag": {"use_web": False},
    "ssrag": {},
}


GRAPH_FACTS = {"fusion", "hybgrag", "mor", "hydrarag"}  # ssrag's graph evidence is the model's prose


def test_every_method_is_covered():
    assert set(SETTINGS) == set(list_graphs())


@pytest.mark.parametrize("method", list(SETTINGS))
def test_method_answers_from_the_documents_with_evidence_in_a_chunk(document_kb, answering_model, method):
    llm = {} if method == "fusion" else {"llm": "fake:e2e"}
    ctx = context_for(method, kb=document_kb, **llm, **SETTINGS[method])
    out = get_graph(method).invoke({"question": QUESTION}, context=ctx)
    assert ANSWER in out["answer"], (method, out["answer"], out["trace"][-3:])
    prov = Provenance.load(document_kb)
    chunks = _chunk_texts(document_kb)
    backed = [(e, prov.source_chunks(e)) for e in out["evidence"]]
    cited = [c for e, cs in backed for c in cs if ANSWER.casefold() in chunks[c].casefold()]
    assert cited, (method, [(e["source"], e.get("id"), e.get("text", "")[:80]) for e in out["evidence"]])
    assert set(cited) == {"kestrel.txt#0"}, "the answer's chunk is the document that states it"
    if method in GRAPH_FACTS:  # a graph fact with the answer leads back to the chunk it was extracted from
        assert any(e["source"] == "kg" and ANSWER in e["text"] and cs for e, cs in backed), method
    if method != "fusion":
        assert answering_model.calls, "the LLM method asked the model"


def _chunk_texts(kb: str) -> dict[str, str]:
    from hybridrag.kb.kb_dir import resolve_build
    from hybridrag.kb.text_index import load_docs

    return {d.id: d.text for d in load_docs(resolve_build(kb).path / "docs.jsonl") if d.kind == "passage"}
