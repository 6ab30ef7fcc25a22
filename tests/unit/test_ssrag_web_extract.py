"""SSRAG's web route builds its graph with the document extractor: web pages → chunks → extraction →
resolution → web-graph nodes whose facts cite the page URL and chunk (fake web tool, scripted model)."""

from __future__ import annotations

import pytest

from hybridrag.agents.extraction.rules import rule_extraction
from hybridrag.agents.llm.models import load_chat_model
from hybridrag.agents.ssrag import web_graph as wg
from hybridrag.agents.ssrag.augment import AugmentedQuery, IntentCues, KeyEntities, NamedEntity, SubQuestions
from hybridrag.agents.ssrag.retrieval import GraphText
from hybridrag.agents.ssrag.routing import RouteLabel
from hybridrag.agents.ssrag.unify import Answer, Redundancy
from hybridrag.graphs.ssrag import SSRAGContext, graph
from hybridrag.kb.documents import chunk_document, find_documents
from hybridrag.kb.extract import ExtractedEntity, ExtractedRelation, Extraction
from hybridrag.prompts import extract as extract_prompt
from hybridrag.tools import web

QUESTION = "which film will Tom Hanks star in next"
URL = "https://press.example/greyhound-2"
PAGE = "Tom Hanks will star in Greyhound 2. Apple Studios announced Greyhound 2 this week."
HITS = [{"kind": "web", "id": URL, "entity_id": None, "name": "Greyhound 2 news", "text": PAGE, "score": 0.9}]
AUGMENT = [
    SubQuestions(sub_questions=[QUESTION]),
    KeyEntities(entities=[NamedEntity(name="Tom Hanks", type="person")]),
    IntentCues(intent="which"),
    AugmentedQuery(query="Which film will Tom Hanks star in next?"),
]
TEMPORAL = RouteLabel(label="TEMPORAL")
KEEP = Redundancy(reasoning="Nothing repeats.", redundant=[])
ANSWER = Answer(reasoning="The page says so.", answer="Greyhound 2")
FACTS = Extraction(
    entities=[
        ExtractedEntity(name="Tom Hanks", type="person"),
        ExtractedEntity(name="Greyhound 2", type="film"),
        ExtractedEntity(name="Apple Studios", type="organization"),
    ],
    relations=[
        ExtractedRelation(head="Tom Hanks", relation="stars in", tail="Greyhound 2"),
        ExtractedRelation(head="Apple Studios", relation="announced", tail="Greyhound 2"),
    ],
)


@pytest.fixture(autouse=True)
def fake_search(monkeypatch):
    """No real web: the search returns ``HITS``; no cap set in the environment."""
    for name in ("PAGES", "CHUNKS", "CALLS"):
        monkeypatch.delenv(f"HYBRIDRAG_WEB_GRAPH_{name}", raising=False)
    monkeypatch.setattr(web, "web_search", lambda query, k=5: HITS)


def run(kb: str, **kw) -> dict:
    settings = {"top_k": 4, "vector_k": 3, "graph_k": 1, "max_iterations": 1, **kw}
    return graph.invoke({"question": QUESTION}, context=SSRAGContext(kb=kb, llm="fake:test", **settings))


def step(out: dict, node: str) -> dict:
    [found] = [s for s in out["trace"] if s["node"] == node]
    return found


def test_web_route_evidence_cites_the_page_url_and_chunk(tiny_kb, fake_llm):
    fake = fake_llm(*AUGMENT, TEMPORAL, FACTS, GraphText(text="Tom Hanks will star in Greyhound 2."), KEEP, ANSWER)
    out = run(tiny_kb)
    assert out["answer"] == "Greyhound 2"
    graph_step = step(out, "retrieve_web_graph")
    assert graph_step["nodes"] == ["web:Tom Hanks"] and graph_step["fallback"] is None
    [kg] = [e for e in out["evidence"] if e["source"] == "kg"]
    assert kg["id"] == "web:Tom Hanks" and kg["path"] == [f"Tom Hanks stars in Greyhound 2 [{URL}#0]"]
    assert URL in {e["id"] for e in out["evidence"] if e["source"] == "web"}
    extraction = fake.calls[5]  # after 4 augmentation calls and the router: the ingest's prompt and schema
    assert extraction["schema"] == "Extraction"
    assert extraction["messages"][0].content.startswith(extract_prompt.SYSTEM.format()[:60])
    assert PAGE in extraction["messages"][-1].content
    assert out["usage"]["by_role"]["triple_extractor"]["llm_calls"] == 1


def test_unparseable_extraction_falls_back_to_rules_with_the_chunk_cited(tiny_kb, fake_llm):
    fake_llm(
        *AUGMENT,
        TEMPORAL,
        "not json",
        "still not json",
        GraphText(text="Tom Hanks will star in Greyhound 2."),
        KEEP,
        ANSWER,
    )
    out = run(tiny_kb)
    graph_step = step(out, "retrieve_web_graph")
    assert graph_step["fallback"].startswith("unparseable extraction of 1 chunks")
    assert graph_step["nodes"] == ["web:Tom Hanks"]  # the question entity, from the rule's triples
    [kg] = [e for e in out["evidence"] if e["source"] == "kg"]
    assert kg["path"] == [f"Tom Hanks will star in Greyhound 2 [{URL}#0]"]
    assert out["usage"]["by_role"]["triple_extractor"] == {
        **out["usage"]["by_role"]["triple_extractor"],
        "llm_calls": 2,
        "parse_failures": 2,
        "fallbacks": 1,
    }


def test_no_model_for_the_graph_branch_extracts_by_rule(tiny_kb, fake_llm):
    fake_llm(*AUGMENT, TEMPORAL, KEEP, ANSWER)  # template graph-to-text: no extraction or conversion call
    out = run(tiny_kb, graph_to_text="template")
    [kg] = [e for e in out["evidence"] if e["source"] == "kg"]
    assert kg["path"] == [f"Tom Hanks will star in Greyhound 2 [{URL}#0]"]
    assert "triple_extractor" not in out["usage"]["by_role"]


def test_rule_fallback_is_the_documented_one():
    found = rule_extraction(PAGE)
    assert [(r.head, r.relation, r.tail) for r in found.relations] == [
        ("Tom Hanks", "will star in", "Greyhound 2"),
        ("Apple Studios", "announced", "Greyhound 2"),
    ]


def pages(n: int, sentences: int = 1) -> list[dict]:
    body = " ".join(f"Ada Lovelace met Charles Babbage in London number {i}." for i in range(sentences))
    return [{"id": f"https://site{p}.example/", "name": f"page {p}", "text": body} for p in range(n)]


def test_caps_on_pages_chunks_and_calls_are_respected(fake_llm):
    fake = fake_llm(*["not json"] * 3)
    model = load_chat_model("fake:test")
    caps = wg.WebCaps(pages=3, chunks=4, calls=3, chunk_size=200, chunk_overlap=0)
    facts, usage, note = wg.extract(model, pages(5, sentences=6), "function_calling", caps=caps)
    assert len(fake.calls) == 3 == usage["llm_calls"]  # chunk 1: asked and retried; chunk 2: asked once
    assert "2 pages over the cap of 3 not read" in note
    assert "chunks over the cap of 4 not read" in note
    assert "LLM call cap of 3 reached: 2 chunks extracted by rule" in note
    cited = {c for f in facts for c in f.chunks}
    # two chunks a page: the first 4 chunks are read (2 asked, both unparseable; 2 past the call cap), each by rule
    assert cited == {
        "https://site0.example/#0",
        "https://site0.example/#1",
        "https://site1.example/#0",
        "https://site1.example/#1",
    }
    assert "2 chunks over the cap of 4 not read" in note


def test_a_zero_call_cap_from_the_environment_asks_nothing(fake_llm, monkeypatch):
    fake = fake_llm()
    monkeypatch.setenv("HYBRIDRAG_WEB_GRAPH_CALLS", "0")
    facts, usage, note = wg.extract(load_chat_model("fake:test"), pages(1), "function_calling")
    assert fake.calls == [] and usage == {} and "LLM call cap of 0 reached" in note
    assert (facts[0].head, facts[0].tail, facts[0].chunks) == (
        "Ada Lovelace",
        "Charles Babbage",
        ("https://site0.example/#0",),
    )
    monkeypatch.setenv("HYBRIDRAG_WEB_GRAPH_PAGES", "many")
    with pytest.raises(ValueError, match="HYBRIDRAG_WEB_GRAPH_PAGES must be a whole number"):
        wg.extract(None, pages(1), "function_calling")
    with pytest.raises(ValueError, match="cap chunks must be 0 or more"):
        wg.WebCaps(chunks=-1)


def test_pages_are_split_like_ingested_documents(tmp_path):
    text = " ".join(f"Sentence {i} names Ada Lovelace and Charles Babbage." for i in range(60))
    (tmp_path / "page.txt").write_text(text, encoding="utf-8")
    [doc], _ = find_documents([tmp_path / "page.txt"])
    ingested = [c.text for c in chunk_document(doc)]
    chunks, notes = wg.web_chunks([{"id": URL, "text": text}], wg.WebCaps(chunks=100))
    assert len(ingested) > 1 and [c.text for c in chunks] == ingested and notes == []
    assert [c.id for c in chunks] == [f"{URL}#{n}" for n in range(len(ingested))]


def test_a_web_mention_of_a_question_entity_resolves_to_it(fake_llm):
    reply = Extraction(
        entities=[ExtractedEntity(name="tom hanks"), ExtractedEntity(name="Greyhound 2")],
        relations=[ExtractedRelation(head="tom hanks", relation="stars_in", tail="Greyhound 2")],
    )
    fake_llm(reply)
    facts, _, _ = wg.extract(
        load_chat_model("fake:test"),
        [{"id": URL, "text": "tom hanks stars in Greyhound 2."}],
        "function_calling",
        entities=["Tom Hanks"],
    )
    assert [(f.head, f.relation, f.tail, f.chunks) for f in facts] == [
        ("Tom Hanks", "stars_in", "Greyhound 2", (f"{URL}#0",))
    ]
