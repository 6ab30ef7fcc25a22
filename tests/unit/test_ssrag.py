"""SSRAG graph and roles on the scripted fake model and a tiny real KB (the web is never called)."""

from __future__ import annotations

from datetime import date
from types import SimpleNamespace

import pytest

from hybridrag.agents.ssrag import augment as aug
from hybridrag.agents.ssrag import cues as cues
from hybridrag.agents.ssrag import retrieval as ret
from hybridrag.agents.ssrag import unify as uni
from hybridrag.agents.ssrag.augment import AugmentedQuery, IntentCues, KeyEntities, NamedEntity, SubQuestions
from hybridrag.agents.ssrag.retrieval import GraphText
from hybridrag.agents.ssrag.routing import RouteLabel
from hybridrag.agents.ssrag.unify import Answer, Redundancy
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.graphs.ssrag import SSRAGContext, builder, graph
from hybridrag.kb.extract import ExtractedEntity, ExtractedRelation, Extraction
from hybridrag.kb.model import Entity
from hybridrag.prompts import Prompt
from hybridrag.prompts import ssrag as P
from hybridrag.tools import web

QUESTION = "which movies did Tom Hanks act in"
SUBS = SubQuestions(sub_questions=[QUESTION])
ENTS = KeyEntities(entities=[NamedEntity(name="Tom Hanks", type="person")])
INTENT = IntentCues(intent="which", subtopics=["filmography"], factual_cues=["Tom Hanks"])
REWRITE = AugmentedQuery(query="Which films did Tom Hanks act in?")
FACTUAL, TEMPORAL = RouteLabel(label="FACTUAL"), RouteLabel(label="TEMPORAL")
TOM_TEXT = GraphText(text="Tom Hanks starred in Big, A League of Their Own and Apollo 13.")
KEEP = Redundancy(reasoning="Nothing repeats.", redundant=[])
ANSWER = Answer(reasoning="The contexts list his films.", answer="Big, A League of Their Own, Apollo 13")
AUGMENT = [SUBS, ENTS, INTENT, REWRITE]
WEB_HITS = [
    {
        "kind": "web",
        "id": "https://news.example/hanks",
        "entity_id": None,
        "name": "Hanks news",
        "text": "Tom Hanks announced a new film this week.",
        "score": 0.9,
    },
    {
        "kind": "web",
        "id": "https://blog.example/ai",
        "entity_id": None,
        "name": "AI news",
        "text": "Researchers reported new results in machine learning.",
        "score": 0.8,
    },
]


@pytest.fixture(autouse=True)
def no_web_key(monkeypatch):
    """The real web search must fail fast: no Tavily key in unit tests."""
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)


def fake_web(monkeypatch, hits):
    """Replace the web search with a recorder returning ``hits``."""
    seen = []

    def search(query, k=5):
        seen.append((query, k))
        return hits

    monkeypatch.setattr(web, "web_search", search)
    return seen


def run(kb: str, question: str = QUESTION, **kw) -> dict:
    """One run; the paper's single pass (``max_iterations=1``) unless a test asks for the loop."""
    settings = {"top_k": 3, "vector_k": 3, "graph_k": 1, "max_iterations": 1, **kw}
    return graph.invoke({"question": question}, context=SSRAGContext(kb=kb, llm="fake:test", **settings))


def step(out: dict, node: str) -> dict:
    [found] = [s for s in out["trace"] if s["node"] == node]
    return found


def calls_by_role(out: dict) -> dict[str, int]:
    return {role: v["llm_calls"] for role, v in out["usage"]["by_role"].items()}


def test_factual_question_local_corpus_happy_path(tiny_kb, fake_llm):
    fake = fake_llm(*AUGMENT, FACTUAL, TOM_TEXT, KEEP, ANSWER)
    out = run(tiny_kb)
    assert set(out) == {"answer", "ranked", "evidence", "trace", "usage"}
    assert out["answer"] == ANSWER.answer
    assert calls_by_role(out) == {
        "decomposer": 1,
        "entity_extractor": 1,
        "intent_detector": 1,
        "rewriter": 1,
        "router": 1,
        "graph_to_text": 1,
        "deduplicator": 1,
        "answerer": 1,
    }
    assert out["usage"]["llm_calls"] == 8 and out["usage"]["input_tokens"] > 0
    assert set(out["usage"]["stages"]) == {
        "decompose",
        "extract_entities",
        "detect_intent",
        "enhance_query",
        "route",
        "vector_retrieval",
        "graph_retrieval",
        "graph_to_text",
        "rerank",
        "dedup",
        "answer",
    }
    nodes = [s["node"] for s in out["trace"]]
    augment = ["decompose_query", "extract_entities", "detect_intent", "enhance_query"]
    assert nodes[:5] == [*augment, "route_query"]
    assert set(nodes[5:7]) == {"retrieve_vectors", "retrieve_graph"}
    assert nodes[7:] == [
        "convert_graph_to_text",
        "rerank_jointly",
        "deduplicate_contexts",
        "generate_answer",
        "verify_answer",
    ]
    assert step(out, "route_query")["decision"] == "FACTUAL → local"
    assert step(out, "enhance_query")["decision"] == REWRITE.query
    assert all(s["fallback"] is None for s in out["trace"])
    assert len(out["ranked"]) <= 3 and {e["source"] for e in out["evidence"]} <= {"kg", "doc"}
    bare = [e["text"] == e["id"] for e in out["evidence"]]
    assert bare == sorted(bare)  # contexts stating only their name come last (bare_contexts_last) ...
    for group in (False, True):  # ... and each group is in cosine order
        scores = [e["score"] for e, b in zip(out["evidence"], bare, strict=True) if b == group]
        assert scores == sorted(scores, reverse=True)
    own = [r["kind"] == "entity" and r["id"] == "Tom Hanks" for r in out["ranked"]]
    assert own == sorted(own)  # ranked: the question's own entity last
    kg = [e for e in out["evidence"] if e["source"] == "kg"]
    assert kg and kg[0]["text"] == TOM_TEXT.text and any("Tom Hanks" in f for f in kg[0]["path"])
    rewrite_prompt = fake.calls[3]["messages"][-1].content
    assert "Entities (quoted data):\n<data>\nTom Hanks\n</data>" in rewrite_prompt
    assert "Intent: which\nAspects to cover (quoted data):\n<data>\nfilmography\n</data>" in rewrite_prompt
    router_prompt = fake.calls[4]["messages"][-1].content
    assert "Query (quoted data):\n<data>\nWhich films did Tom Hanks act in?\n</data>" in router_prompt


def test_temporal_route_without_web_key_uses_local_corpus(tiny_kb, fake_llm):
    fake_llm(*AUGMENT, TEMPORAL, TOM_TEXT, KEEP, ANSWER)
    out = run(tiny_kb)
    assert step(out, "route_query")["decision"] == "TEMPORAL → web"
    vec = step(out, "retrieve_vectors")
    assert vec["source"] == "local" and "TAVILY_API_KEY" in vec["fallback"]
    assert out["evidence"] and all(e["source"] != "web" for e in out["evidence"])


def test_temporal_route_with_web_reranks_snippets(tiny_kb, fake_llm, monkeypatch):
    seen = fake_web(monkeypatch, WEB_HITS)
    hanks = Extraction(
        entities=[ExtractedEntity(name="Tom Hanks", type="person")],
        relations=[ExtractedRelation(head="Tom Hanks", relation="announced", tail="a new film")],
    )
    # one extraction call per web page (chunk): the second page states no fact
    fake_llm(*AUGMENT, TEMPORAL, hanks, Extraction(), GraphText(text="Tom Hanks announced a new film."), KEEP, ANSWER)
    out = run(tiny_kb, web_k=4)
    assert seen == [(REWRITE.query, 4)]  # one web search: the graph branch reads its results
    assert step(out, "retrieve_vectors")["source"] == "web"
    graph_step = step(out, "retrieve_web_graph")
    assert graph_step["source"] == "web" and graph_step["nodes"] == ["web:Tom Hanks"]
    assert not [s for s in out["trace"] if s["node"] == "retrieve_graph"]  # the local graph is not read
    sources = {r["source"] for r in out["ranked"]}
    assert "web" in sources and "kg" in sources
    cited = ["Tom Hanks announced a new film [https://news.example/hanks#0]"]  # the page URL and chunk
    assert all(e["path"] == cited for e in out["evidence"] if e["source"] == "kg")
    scores = [r["score"] for r in out["ranked"]]
    assert scores == sorted(scores, reverse=True)  # one cosine order over web texts and web-graph nodes
    web_ids = [r["id"] for r in out["ranked"] if r["source"] == "web"]
    assert web_ids[0] == "https://news.example/hanks"  # cosine to Q_aug, not Tavily's score


def test_factual_with_nothing_local_goes_to_web(tiny_kb, fake_llm, monkeypatch):
    fake_web(monkeypatch, WEB_HITS)
    einstein = "where was Albert Einstein born"
    fake_llm(
        SubQuestions(sub_questions=[einstein]),
        KeyEntities(entities=[NamedEntity(name="Albert Einstein", type="person")]),
        IntentCues(intent="where"),
        AugmentedQuery(query="Where was Albert Einstein born?"),
        FACTUAL,
        Extraction(),
        Extraction(),
        KEEP,
        Answer(reasoning="none of the contexts say", answer="I do not know"),
    )
    out = run(tiny_kb, question=einstein, local_min_score=0.99)
    route = step(out, "route_query")
    assert route["decision"] == "FACTUAL → web" and "nothing local" in route["reason"]
    assert not route["local"]["linked"] and step(out, "retrieve_web_graph")["nodes"] == []
    assert "graph_to_text" not in calls_by_role(out)  # no node, no conversion call
    assert {r["source"] for r in out["ranked"]} == {"web"}


def test_web_returning_nothing_falls_back_to_local(tiny_kb, fake_llm, monkeypatch):
    fake_web(monkeypatch, [])
    fake_llm(*AUGMENT, TEMPORAL, TOM_TEXT, KEEP, ANSWER)
    vec = step(run(tiny_kb), "retrieve_vectors")
    assert vec["source"] == "local" and vec["fallback"].startswith("web returned nothing")


def test_rule_routing_makes_no_router_call(tiny_kb, fake_llm):
    question = "what are the latest Tom Hanks movies"
    fake_llm(
        SubQuestions(sub_questions=[question]),
        ENTS,
        IntentCues(intent="what", time_hints=["latest"]),
        AugmentedQuery(query="latest movies starring Tom Hanks"),
        TOM_TEXT,
        KEEP,
        ANSWER,
    )
    out = run(tiny_kb, question=question, routing="rules")
    assert "router" not in calls_by_role(out)
    route = step(out, "route_query")
    assert route["decision"] == "TEMPORAL → web" and route["rule_label"] == "TEMPORAL"
    assert step(out, "detect_intent")["recency"] is True


def top_answer(out: dict) -> str:
    """The answer the top ranked context gives (its name, or its span for a passage about no entity)."""
    top, texts = out["ranked"][0], {e["id"]: e["text"] for e in out["evidence"]}
    return uni.fallback_answer([{**top, "text": texts.get(top["id"], "")}], question=QUESTION)


def test_every_unparseable_reply_takes_its_fallback(tiny_kb, fake_llm):
    fake_llm(*["not json"] * 16)
    out = run(tiny_kb)
    assert set(calls_by_role(out).values()) == {2}  # each role retried once
    assert out["usage"]["llm_calls"] == 16
    assert step(out, "decompose_query")["sub_questions"] == [QUESTION]
    assert step(out, "extract_entities")["decision"] == "Tom Hanks"  # marked spans and KB mentions
    assert step(out, "detect_intent")["decision"] == "which"  # the question word, by rule
    assert step(out, "enhance_query")["decision"] == QUESTION
    assert step(out, "route_query")["decision"] == "FACTUAL → local"  # no recency cue
    assert "facts kept as text" in step(out, "convert_graph_to_text")["fallback"]
    assert step(out, "deduplicate_contexts")["fallback"] == "unparseable filter reply: nothing removed"
    assert out["answer"] == top_answer(out)
    for node in (
        "decompose_query",
        "extract_entities",
        "detect_intent",
        "enhance_query",
        "route_query",
        "generate_answer",
    ):
        assert step(out, node)["fallback"], node


def test_retrieval_only_mode(tiny_kb, fake_llm):
    fake_llm(*AUGMENT, FACTUAL)
    out = run(tiny_kb, graph_k=3, graph_to_text="template", llm_dedup=False, answer=False)
    assert out["usage"]["llm_calls"] == 5 and "generate_answer" not in [s["node"] for s in out["trace"]]
    assert out["answer"] == top_answer(out)
    kg = [e for e in out["evidence"] if e["source"] == "kg"]
    assert kg and all(e["text"] == ". ".join(e["path"]) + "." for e in kg)


def test_top_2k_pool_then_top_k(tiny_kb, fake_llm):
    fake_llm(*AUGMENT, FACTUAL)
    out = run(tiny_kb, top_k=2, vector_k=5, graph_k=4, graph_to_text="template", llm_dedup=False, answer=False)
    assert step(out, "rerank_jointly")["decision"].startswith("top 4:")
    assert len(out["ranked"]) == 2


def test_unrelated_sub_questions_are_dropped(fake_llm):
    model = fake_llm(
        SubQuestions(sub_questions=["Tom Hanks films", "The Shawshank Redemption"]),
        SubQuestions(sub_questions=["Shawshank"]),
    )
    subs, _, note = aug.decompose(model, QUESTION, "function_calling")
    assert subs == ["Tom Hanks films"] and note.startswith("dropped 1 sub-questions")
    subs, _, note = aug.decompose(model, QUESTION, "function_calling")
    assert subs == [QUESTION] and note.startswith("no sub-question shares a word")


def test_entities_absent_from_question_are_dropped(tiny_kb, fake_llm):
    model = fake_llm(KeyEntities(entities=[NamedEntity(name="Tom Hanks"), NamedEntity(name="Meg Ryan")]))
    kb = resolve_kb(SSRAGContext(kb=tiny_kb))
    found, usage, note = aug.extract_entities(model, kb, QUESTION, [QUESTION], "function_calling")
    assert [e["name"] for e in found] == ["Tom Hanks"]
    assert note == "dropped 1 entities absent from the question"
    assert usage["by_role"]["entity_extractor"]["llm_calls"] == 1


ENTITY = [{"name": "Tom Hanks", "type": "person", "id": "Tom Hanks", "surfaces": ["Tom Hanks"]}]
CUES = {"intent": "which", "subtopics": [], "time_hints": [], "recency": False, "factual_cues": []}


@pytest.mark.parametrize(
    ("reply", "query", "note"),
    [
        (AugmentedQuery(query="Which films star the actor?"), QUESTION, "rewrite dropped Tom Hanks"),
        (AugmentedQuery(query="Tom Hanks " + "films " * 50), "Tom Hanks films films films", "rewrite cut to 5 tokens"),
        (
            AugmentedQuery(query="Tom Hanks: films, comedy?"),
            "Tom Hanks: films,",
            "rewrite cut to 5 tokens (was 7)",
        ),  # four words, seven tokens
        (AugmentedQuery(query="   "), QUESTION, "unparseable or empty rewrite"),
    ],
)
def test_rewrite_checks(fake_llm, reply, query, note):
    model = fake_llm(reply)
    text, _, got = aug.enhance_query(model, QUESTION, ENTITY, CUES, 5, "function_calling")
    assert text == query and got.startswith(note)


def test_token_count_is_not_a_word_count():
    assert cues.count_tokens("Tom Hanks films") == 3
    assert cues.count_tokens("Apollo 13 (1995), U.S.") == 11  # words: 4
    assert cues.count_tokens("supercalifragilistic 1234567") == 3 + 3
    assert cues.cut_tokens("Apollo 13 (1995)", 3) == "Apollo 13 (" and cues.cut_tokens("Big", 40) == "Big"


def test_canonicalise_keeps_longest_surface():
    churchill = Entity("Q8016", "Winston Churchill", "person", aliases=("Churchill", "Sir Winston"))
    table = {s.lower(): [churchill] for s in ("Churchill", "Sir Winston", "Winston Churchill")}
    kb = SimpleNamespace(graph=SimpleNamespace(lookup=lambda s: table.get(s.lower(), [])))
    mentions = [
        {"name": "Churchill", "type": "person"},
        {"name": "Sir Winston", "type": ""},
        {"name": "RL", "type": "concept"},
    ]
    found = aug.canonicalise(kb, mentions)
    assert [(e["name"], e["id"]) for e in found] == [("Winston Churchill", "Q8016"), ("RL", None)]
    assert aug.canonical_question("What did Churchill say?", found) == "What did Winston Churchill say?"


def test_rule_cues():
    assert cues.rule_cues("who directed Big")["intent"] == "who"
    latest = cues.rule_cues("What are the latest breakthroughs in AI?")
    assert latest["recency"] and latest["time_hints"] == ["latest"]
    old = cues.rule_cues("films released in 1988 during World War II")
    assert (
        not old["recency"] and "in 1988" in old["time_hints"] and {"1988", "World War II"} <= set(old["factual_cues"])
    )
    assert cues.rule_cues(f"elections in {date.today().year}")["recency"]
    assert cues.rule_cues("Albert Einstein's birth place")["intent"] is None


def test_graph_nodes_seeds_first_then_by_cosine(tiny_kb):
    kb = resolve_kb(SSRAGContext(kb=tiny_kb))
    seeds = ret.seed_entities(kb, "films with Tom Hanks", ENTITY, 0.8)
    assert seeds == ["Tom Hanks"]
    nodes = ret.relevant_nodes(kb, seeds, kb.embed("comedy films"), hops=1, k=3, max_facts=25)
    assert [n["id"] for n in nodes][0] == "Tom Hanks" and len(nodes) == 3
    priors = [n["prior"] for n in nodes[1:]]
    assert priors == sorted(priors, reverse=True)
    assert ret.relevant_nodes(kb, [], kb.embed("x"), 1, 3, 25) == []


def test_node_keeps_its_facts_most_relevant_to_the_question(tiny_kb):
    kb = resolve_kb(SSRAGContext(kb=tiny_kb))
    assert ret.node_facts(kb, "Big", 1)["facts"] == ["Big directed by Penny Marshall"]  # storage order
    qv = kb.embed("what year was Big released")
    node = ret.node_facts(kb, "Big", 1, qv)
    assert node["facts"] == ["Big release year 1988"] and node["triples"] == [["Big", "release_year", "1988"]]
    assert len(ret.node_facts(kb, "Big", 25, qv)["facts"]) == 4


def test_relevant_fact_beyond_the_cap_reaches_the_answerer(tiny_kb, fake_llm):
    question = "what year was Big released"
    answer = Answer(reasoning="Big was released in 1988.", answer="1988")
    fake = fake_llm(
        SubQuestions(sub_questions=[question]),
        KeyEntities(entities=[NamedEntity(name="Big", type="film")]),
        IntentCues(intent="what"),
        AugmentedQuery(query="In what year was the film Big released?"),
        FACTUAL,
        KEEP,
        answer,
    )
    out = run(tiny_kb, question=question, max_node_facts=1, graph_to_text="template")
    [kg] = [e for e in out["evidence"] if e["source"] == "kg"]
    assert kg["path"] == ["Big release year 1988"]
    assert "Big release year 1988." in fake.calls[-1]["messages"][-1].content
    assert out["answer"] == "1988"


def test_whole_contexts_reach_the_answerer_within_the_budget(fake_llm):
    long = "Sex and the City follows four friends in New York. " * 6 + "It was released in 2008."
    items = [_item("a", long), _item("b", "b" * 400), _item("c", "c" * 100)]
    model = fake_llm(ANSWER, ANSWER)
    uni.generate(model, "when", items, "function_calling", budget=2000)
    prompt = model.calls[-1]["messages"][-1].content
    assert len(long) > 300 and long in prompt and "b" * 400 in prompt and "c" * 100 in prompt
    uni.generate(model, "when", items, "function_calling", budget=len(long) + 150)
    prompt = model.calls[-1]["messages"][-1].content
    assert long in prompt and "b" * 400 not in prompt and "c" * 100 in prompt  # b skipped, c fits
    shown = uni.fit_budget(items, 120)
    assert [i["id"] for i in shown] == ["a"] and shown[0]["text"] == long[:120]  # the top item, cut
    assert sum(len(i["text"]) for i in uni.fit_budget(items, len(long) + 150)) <= len(long) + 150


def test_llm_filter_sees_only_contexts_within_the_budget(fake_llm):
    items = [_item("a", "a" * 50), _item("b", "b" * 500), _item("c", "c" * 50)]
    model = fake_llm(Redundancy(reasoning="c repeats a", redundant=[2]))
    kept, removed, _, _ = uni.llm_filter(model, "q", items, "function_calling", budget=200)
    prompt = model.calls[-1]["messages"][-1].content
    assert "b" * 500 not in prompt and "c" * 50 in prompt
    assert [i["id"] for i in kept] == ["a", "b"] and [r["id"] for r in removed] == ["c"]


def test_graph_text_that_drops_the_name_keeps_facts(fake_llm):
    node = {"id": "Big", "name": "Big", "facts": ["Big directed by Penny Marshall"], "triples": []}
    model = fake_llm(GraphText(text="A film by Penny Marshall."))
    text, _, note = ret.node_to_text(model, node, "function_calling")
    assert text == "Big directed by Penny Marshall." and "dropped the entity name" in note


def _item(i: str, text: str, source: str = "doc") -> dict:
    return {
        "id": i,
        "kind": "passage",
        "name": i,
        "text": text,
        "source": source,
        "entity_id": None,
        "path": None,
        "score": 0.0,
    }


def test_text_dedup_exact_then_cosine(tiny_kb):
    kb = resolve_kb(SSRAGContext(kb=tiny_kb))
    items = [
        _item("a", "Big is a comedy film."),
        _item("b", "big is a  COMEDY film."),
        _item("c", "Big is a comedy film!"),
        _item("d", "Apollo 13 follows astronauts."),
    ]
    kept, removed = uni.text_dedup(kb, items, threshold=0.95)
    assert [i["id"] for i in kept] == ["a", "d"]
    assert removed[0] == {"id": "b", "reason": "exact duplicate of a"} and removed[1]["id"] == "c"
    assert [i["id"] for i in uni.text_dedup(kb, items, threshold=1.01)[0]] == ["a", "c", "d"]


def test_llm_filter_drops_named_items_but_never_the_first(fake_llm):
    items = [_item(x, x * 3) for x in "abc"]
    model = fake_llm(Redundancy(reasoning="c repeats a", redundant=[1, 3, 9]))
    kept, removed, usage, note = uni.llm_filter(model, "q", items, "function_calling")
    assert [i["id"] for i in kept] == ["a", "b"] and [r["id"] for r in removed] == ["c"] and note is None
    assert usage["by_role"]["deduplicator"]["llm_calls"] == 1
    assert uni.llm_filter(model, "q", items[:1], "function_calling")[2] == {}  # one item: no call


@pytest.mark.parametrize("prompt", P.ALL, ids=lambda p: p.name)
def test_prompt_inputs_match_template(prompt: Prompt):
    assert prompt.fields() == set(prompt.inputs)


def test_context_defaults_env_and_builder(monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_LLM_DEDUP", "false")
    monkeypatch.setenv("HYBRIDRAG_TOP_K", "7")
    ctx = SSRAGContext()
    assert ctx.llm_dedup is False and ctx.top_k == 7
    assert (ctx.vector_k, ctx.graph_k, ctx.max_query_tokens, ctx.routing, ctx.graph_to_text) == (
        20,
        20,
        40,
        "llm",
        "llm",
    )
    assert ctx.context_budget == 8000
    assert builder.compile(name="again").get_graph().nodes.keys() >= {"route_query", "rerank_jointly"}
