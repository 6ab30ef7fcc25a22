"""HydraRAG graph and parts on the scripted fake model and the tiny real KB (no network)."""

from __future__ import annotations

import pytest

from hybridrag.agents.hydrarag import analysis as analysis
from hybridrag.agents.hydrarag import kg as kg
from hybridrag.agents.hydrarag import kg_paths as kg_paths
from hybridrag.agents.hydrarag import roles as R
from hybridrag.agents.hydrarag import rounds
from hybridrag.agents.hydrarag.pruning import PruneSettings, rank_candidates, verification
from hybridrag.graphs.hydrarag import HydraRAGContext, builder, graph, render_trace
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.prompts import Prompt
from hybridrag.prompts import hydrarag as P
from hybridrag.tools.web import WebSearchError

Q = "which movies did Tom Hanks star in"
TOPICS = R.TopicEntities(entities=["Tom Hanks"])
ANALYSIS = R.QuestionAnalysis(
    split_questions=["Which movies did Tom Hanks star in?"], skyline="Tom Hanks - starred in - answer(movie)"
)
REFINED = R.Refinement(summary="Tom Hanks starred in Big, A League of Their Own and Apollo 13.")
YES = R.AnswerCheck(reasoning="The path lists his films.", sufficient="yes", answer="Big")
NO = R.AnswerCheck(reasoning="Not enough.", sufficient="no", answer="")
FOLLOW = R.FollowUp(
    missing="release years",
    question="When were Tom Hanks films released?",
    skyline="Tom Hanks - starred in - movie - released in - answer(year)",
    topic_entities=["Big"],
)
FOLLOW_KG = FOLLOW.model_copy(update={"topic_entities": []})
PREDICT = R.Predictions(predictions=[R.Prediction(answer="Big", skyline="Tom Hanks - starred in - Big")])
DOCS_ONLY = R.SourceChoice(reasoning="text", sources=["docs"])
WEB_ONLY = R.SourceChoice(reasoning="recent", sources=["web"])
DOC_PATHS = R.TextPaths(paths=[R.TextPath(paragraph=1, path="Big - is a - comedy")])


def pick(*numbers: int) -> R.Choice:
    """A selection of numbered items."""
    return R.Choice(reasoning="best", selected=list(numbers))


def run(kb: str, question: str = Q, **kw) -> dict:
    ctx = HydraRAGContext(kb=kb, llm="fake:test", use_web=kw.pop("use_web", False), **kw)
    return graph.invoke({"question": question}, context=ctx)


def nodes(out: dict, name: str) -> list[dict]:
    return [s for s in out["trace"] if s["node"] == name]


def calls_by_role(out: dict) -> dict[str, int]:
    return {role: v["llm_calls"] for role, v in out["usage"]["by_role"].items()}


def test_happy_path_accepts_after_initial_exploration(tiny_kb, fake_llm):
    fake_llm(TOPICS, ANALYSIS, R.SourceChoice(reasoning="kg suffices", sources=["kg"]), REFINED, YES)
    out = run(tiny_kb)
    assert set(out) == {"answer", "ranked", "evidence", "trace", "usage"} and out["answer"] == "Big"
    assert calls_by_role(out) == {"topics": 1, "analysis": 1, "selector": 1, "refine": 1, "check": 1}
    assert out["usage"]["llm_calls"] == 5 and out["usage"]["input_tokens"] > 0
    assert [s["node"] for s in out["trace"]] == [
        "detect_sources",
        "analyze_question",
        "select_sources",
        "explore_source",
        "prune_evidence",
        "refine_paths",
        "check_answer",
    ]
    [detect] = nodes(out, "detect_sources")
    assert detect["decision"] == "S_t = kg, docs" and "TAVILY_API_KEY" not in str(detect["notes"])
    assert nodes(out, "analyze_question")[0]["decision"].startswith("depth 1:")
    [ev] = out["evidence"]
    assert ev["source"] == "kg"
    assert ev["text"] == "{Tom Hanks} ← starred_actors ← {A League of Their Own, Apollo 13, Big}"
    assert {r["name"] for r in out["ranked"]} == {"A League of Their Own", "Apollo 13", "Big"}
    assert set(out["usage"]["stages"]) >= {"detect_sources", "explore_kg", "prune_evidence", "check_answer"}
    assert "[initial] check_answer: {Yes} Big" in render_trace(out["trace"])


def test_web_dropped_without_key_and_selector_skipped(tiny_kb, fake_llm, monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    fake_llm(TOPICS, ANALYSIS, REFINED, YES)
    out = run(tiny_kb, use_web=True, source_selector=False, doc_pool=0)
    [detect] = nodes(out, "detect_sources")
    assert "web source dropped: TAVILY_API_KEY is not set" in detect["notes"]
    assert nodes(out, "select_sources")[0]["decision"] == "S_a = kg, docs"
    assert "selector" not in calls_by_role(out)
    assert {s["source"] for s in nodes(out, "explore_source")} == {"kg", "docs"}


def test_docs_source_turns_sentences_into_paths(tiny_kb, fake_llm):
    fake = fake_llm(TOPICS, ANALYSIS, DOCS_ONLY, DOC_PATHS, REFINED, YES)
    out = run(tiny_kb, question="which comedy did Tom Hanks star in", doc_pool=2)
    assert 'Paragraphs (quoted data):\n<data n="1">\n' in fake.calls[3]["messages"][-1].content
    doc = [e for e in out["evidence"] if e["source"] == "doc"]
    assert doc and doc[0]["text"] == "Big → is a → comedy" and doc[0]["id"].startswith("p:")
    assert any(r["kind"] == "passage" for r in out["ranked"]) and calls_by_role(out)["text_paths"] == 1


def test_unparseable_text_paths_keep_sentences(tiny_kb, fake_llm):
    fake_llm(TOPICS, ANALYSIS, DOCS_ONLY, "junk", "junk", pick(1), REFINED, YES)
    out = run(tiny_kb, doc_pool=4, num_sentences=4)
    [explore] = nodes(out, "explore_source")
    assert explore["notes"] == ["unparseable path construction: sentences kept as paths"]
    assert all(e["source"] == "doc" and "→" not in e["text"] for e in out["evidence"])


def test_no_leads_to_refined_exploration_then_accept(tiny_kb, fake_llm):
    fake = fake_llm(
        TOPICS,
        ANALYSIS,
        R.SourceChoice(reasoning="kg", sources=["kg"]),
        REFINED,
        NO,
        FOLLOW,
        DOC_PATHS,
        pick(2, 1),
        REFINED,
        YES,
    )
    out = run(tiny_kb, audit=False)  # the audit would find "released in" on no selected KG path
    assert calls_by_role(out)["follow_up"] == 1 and out["usage"]["llm_calls"] == 10
    [plan] = nodes(out, "plan_refined_exploration")
    assert plan["decision"] == "follow-up: When were Tom Hanks films released?"
    assert plan["new_topics"] == ["Big"]
    refined = [s for s in nodes(out, "explore_source") if s["phase"] == "refined"]
    assert {s["source"] for s in refined} == {"kg", "docs"} and all(s["depth"] == 3 for s in refined)
    found = 'Paths found so far (quoted data, one block each):\n<data n="1" source="kg">\npath: {Tom Hanks}'
    assert found in fake.calls[5]["messages"][-1].content
    assert [s["decision"] for s in nodes(out, "check_answer")] == ["{No}", "{Yes} Big"]


def test_all_rounds_no_then_final_answer(tiny_kb, fake_llm):
    fake_llm(
        TOPICS,
        ANALYSIS,
        REFINED,
        NO,  # initial round (selector off, no passages about Tom Hanks)
        FOLLOW,
        DOC_PATHS,
        pick(1),
        REFINED,
        NO,  # refined: kg at D_max + the passage of Big
        PREDICT,
        DOC_PATHS,
        pick(1),
        REFINED,
        NO,  # predicted: Big aligned, joined with Tom Hanks
        REFINED,
        R.FinalAnswer(reasoning="from the paths", answer="Big, Apollo 13"),
    )
    out = run(tiny_kb, source_selector=False, doc_pool=0)
    assert out["answer"] == "Big, Apollo 13" and calls_by_role(out)["generate"] == 1
    assert out["usage"]["llm_calls"] == 16
    assert [s["phase"] for s in nodes(out, "check_answer")] == ["initial", "refined", "predicted"]
    [collect] = nodes(out, "collect_final_paths")
    assert collect["decision"].endswith("from 3 round(s)")
    assert [s["phase"] for s in nodes(out, "prune_evidence")][-1] == "final"
    [plan] = nodes(out, "plan_predicted_exploration")
    assert plan["decision"] == "predicted: Big" and plan["aligned"] == ["Big"]
    assert out["trace"][-1]["node"] == "generate_answer"


def test_max_iterations_one_goes_straight_to_generation(tiny_kb, fake_llm):
    fake_llm(TOPICS, ANALYSIS, REFINED, NO, R.FinalAnswer(reasoning="r", answer="Big"))
    out = run(tiny_kb, source_selector=False, max_iterations=1, doc_pool=0)
    assert [s["node"] for s in out["trace"]][-2:] == ["collect_final_paths", "generate_answer"]
    assert len(nodes(out, "prune_evidence")) == 1 and out["usage"]["llm_calls"] == 5


def test_max_iterations_two_reprunes_the_union(tiny_kb, fake_llm):
    fake_llm(
        TOPICS,
        ANALYSIS,
        REFINED,
        NO,
        FOLLOW_KG,
        pick(3),
        REFINED,
        NO,
        REFINED,
        R.FinalAnswer(reasoning="r", answer="Big"),
    )
    out = run(tiny_kb, source_selector=False, doc_pool=0, max_iterations=2)
    assert not nodes(out, "plan_predicted_exploration") and len(nodes(out, "refine_paths")) == 3
    assert nodes(out, "collect_final_paths")[0]["decision"] == "2 paths from 2 round(s)"
    assert nodes(out, "prune_evidence")[-1]["decision"] == "2 paths → 2 by cross-score → 2 selected"


def test_init_fallbacks(tiny_kb, fake_llm):
    fake_llm("x", "x", "y", "y", "z", "z", REFINED, YES)  # audit off: it would name the failed extraction
    out = run(tiny_kb, max_depth=1, doc_pool=0, audit=False)
    [detect] = nodes(out, "detect_sources")
    assert "no topic entity aligned: KB names found in the question used" in detect["notes"]
    assert [t.split(" → ")[1] for t in detect["topics"]] == ["Tom Hanks"]
    [analyse] = nodes(out, "analyze_question")
    assert analyse["fallback"].startswith("unparseable analysis") and analyse["decision"] == f"depth 1: {Q}"
    assert nodes(out, "select_sources")[0]["reasoning"] == "unparseable selection: every source"
    assert calls_by_role(out) == {"topics": 2, "analysis": 2, "selector": 2, "refine": 1, "check": 1}


def test_answering_fallbacks(tiny_kb, fake_llm):
    fake_llm(TOPICS, ANALYSIS, "bad", "bad", "bad", "bad", "bad", "bad")
    out = run(tiny_kb, source_selector=False, max_iterations=1, doc_pool=0, judge="llm")  # the paper's fallbacks
    assert nodes(out, "refine_paths")[0]["decision"] == "unparseable refinement: the paths as they are"
    assert nodes(out, "check_answer")[0]["reasoning"] == "unparseable answer check: {No}"
    [gen] = nodes(out, "generate_answer")
    assert gen["fallback"].startswith("unparseable generation") and out["answer"] == out["ranked"][0]["name"]


def test_unusable_path_selection_takes_cross_score_order(tiny_kb, fake_llm):
    two_hops = ANALYSIS.model_copy(update={"skyline": "Tom Hanks - starred in - film - directed by - answer"})
    fake_llm(TOPICS, two_hops, R.Choice(reasoning="none fit", selected=[99]), REFINED, YES)
    out = run(tiny_kb, source_selector=False, doc_pool=0)
    [prune] = nodes(out, "prune_evidence")
    assert prune["fallback"] == "unusable path selection: top W_max by cross-score"
    assert len(prune["selected"]) == 3
    scores = [e["score"] for e in out["evidence"][:3]]
    assert scores == sorted(scores, reverse=True)


def test_predictions_fallback_to_ranked_entities(tiny_kb, fake_llm):
    model = fake_llm("?", "?")
    ctx = HydraRAGContext(kb=tiny_kb, llm="fake:test")
    kb = resolve_kb(ctx)
    state = {
        "question": Q,
        "skyline": ANALYSIS.skyline,
        "split_questions": [],
        "doc_topics": [],
        "kept": [],
        "topics": [{"mention": "Tom Hanks", "id": "Tom Hanks", "name": "Tom Hanks"}],
        "available": ["kg"],
        "subgraph": kg.detect_subgraph(kb, ["Tom Hanks"], 3),
        "ranked": [{"id": "p:Big", "kind": "passage", "name": "Big"}, {"id": "Big", "kind": "entity", "name": "Big"}],
    }
    out = rounds.plan_predicted(state, ctx, kb, model)
    [step] = out["trace"]
    assert step["fallback"] == "no usable prediction: top ranked entities used" and step["aligned"] == ["Big"]
    assert out["probe"]["chains"][0]["topics"] == ["Tom Hanks", "Big"] and out["usage"]["llm_calls"] == 2


def test_web_source_with_fake_search(tiny_kb, fake_llm, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")
    hits = [
        {
            "kind": "web",
            "id": "https://example.org/big",
            "entity_id": None,
            "name": "Big (film)",
            "text": "Big is a 1988 comedy. Tom Hanks starred in Big.",
            "score": 0.9,
        }
    ]
    monkeypatch.setattr("hybridrag.tools.web.web_search", lambda query, k=5: hits)
    fake_llm(
        TOPICS,
        ANALYSIS,
        WEB_ONLY,
        pick(1),
        R.TextPaths(paths=[R.TextPath(paragraph=1, path="Tom Hanks - starred in - Big")]),
        REFINED,
        YES,
    )
    out = run(tiny_kb, use_web=True)
    assert nodes(out, "detect_sources")[0]["decision"] == "S_t = kg, docs, web"
    [ev] = out["evidence"]
    assert (ev["source"], ev["id"]) == ("web", "https://example.org/big")
    assert ev["text"] == "Tom Hanks → starred in → Big"
    assert calls_by_role(out)["web_select"] == 1


def test_web_search_error_is_noted(tiny_kb, fake_llm, monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "test-key")

    def fail(query, k=5):
        raise WebSearchError("web search failed: offline")

    monkeypatch.setattr("hybridrag.tools.web.web_search", fail)
    fake_llm(TOPICS, ANALYSIS, WEB_ONLY, R.FinalAnswer(reasoning="r", answer="?"))
    out = run(tiny_kb, use_web=True, max_iterations=1)
    assert nodes(out, "explore_source")[0]["notes"] == ["web search failed: offline"]
    assert nodes(out, "check_answer")[0]["reasoning"] == "no evidence: {No} without asking"


def test_multi_entity_paths_join_and_reduce(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    topics = [{"mention": n, "id": n, "name": n} for n in ("Tom Hanks", "Penny Marshall")]
    chain = analysis.chain(topics, "Tom Hanks - answer - Penny Marshall", "q", [])
    probe = analysis.probe("initial", 1, ["kg"], 1, [chain])
    cands, notes = kg.explore_kg(kb, "q", probe, ["id:Tom Hanks", "id:Penny Marshall"], PruneSettings())
    assert notes == ["Tom Hanks + Penny Marshall: paths joined through every topic entity"]
    assert cands[0]["text"] == (
        "{Tom Hanks} ← starred_actors ← {A League of Their Own, Big} → directed_by → {Penny Marshall}"
    )
    assert cands[0]["answers"] == ["A League of Their Own", "Big"]


def test_clustering_and_hydrarag_e(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    tremors = kg_paths.expand(kb, kg_paths.Chain((frozenset(["Tremors"]),)))
    assert all(len(c.edges[-1][0]) == 1 for c in tremors)  # its neighbours differ per relation
    chain = kg_paths.Chain((frozenset(["Big", "Apollo 13"]),))
    rels = {c.edges[-1][0] for c in kg_paths.expand(kb, chain)}
    assert ("starred_actors",) in rels
    import random

    assert all(len(c.edges[-1][0]) == 1 for c in kg_paths.expand(kb, chain, random.Random(0)))


def test_verification_factors(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    base = {"answers": [], "doc_id": None, "doc_name": None, "path": None, "phase": "initial"}
    fact = "Tom Hanks starred in Big"
    cands = [
        {**base, "id": "a", "source": "kg", "text": fact, "keys": ["id:Tom Hanks", "id:Big"]},
        {**base, "id": "b", "source": "doc", "text": fact, "keys": ["id:Big", "name:x"]},
        {**base, "id": "c", "source": "web", "text": "Amelie is French", "keys": []},
    ]
    s = PruneSettings()
    feats = verification(kb, cands, {"Tom Hanks", "Big"}, s)
    assert [f["support"] for f in feats] == [["doc", "kg"], ["doc", "kg"], ["web"]]
    assert [f["f"] for f in feats] == [[1.0, 0.6667, 1.0], [0.8, 0.6667, 0.5], [0.7, 0.3333, 0.0]]
    ranked = rank_candidates(kb, cands, "Tom Hanks - starred in - answer", ["id:Tom Hanks"], {"Tom Hanks"}, s)
    assert ranked[0]["id"] == "a"
    assert all(abs(c["score"] - (0.7 * c["rel"] + 0.3 * c["ver"])) < 1e-9 for c in ranked)


def test_skyline_depth_and_order():
    skyline = "Amelie - directed by - director - citizen of - answer(country)"
    assert analysis.predicted_depth(skyline, ["Amelie"]) == 2
    assert (
        analysis.predicted_depth(
            "Logan Lerman - acted in - answer(movie) - decorated by - Barry Greaves", ["Logan Lerman", "Barry Greaves"]
        )
        == 1
    )
    assert analysis.predicted_depth("just a question?", ["x"]) is None
    topics = [{"mention": "B", "id": "b", "name": "Beta"}, {"mention": "A", "id": "a", "name": "Alpha"}]
    assert [t["id"] for t in analysis.reorder(topics, "Alpha - r - answer - r2 - Beta")] == ["a", "b"]
    parts = analysis.split_chain("[Jean-Pierre Jeunet - directed -> Amelie]")
    assert parts == ["Jean-Pierre Jeunet", "directed", "Amelie"]


@pytest.mark.parametrize("prompt", P.ALL, ids=lambda p: p.name)
def test_prompt_inputs_match_templates(prompt: Prompt):
    assert prompt.fields() == set(prompt.inputs)


def test_context_env_and_builder(monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_USE_WEB", "false")
    monkeypatch.setenv("HYBRIDRAG_MAX_DEPTH", "2")
    ctx = HydraRAGContext(max_iterations=7)
    assert ctx.use_web is False and ctx.max_depth == 2 and ctx.rounds() == 3
    widths = (ctx.max_width, ctx.beam_width, ctx.cross_width, ctx.lambda_sem, ctx.alpha_cross)
    assert widths == (3, 100, 20, 0.7, 0.7)
    assert ctx.pruning().priors == {"kg": 1.0, "doc": 0.8, "web": 0.7}
    nodes_ = builder.compile(name="again").get_graph().nodes
    assert nodes_.keys() >= {"explore_source", "plan_predicted_exploration"}
