"""HydraRAG with a small model: constrained analysis, rules for the judging roles, fewer LLM calls.

The small model is a scripted fake named like the llama.cpp integration (it records the grammar
schema it is asked with) registered as ``local:tiny``, so ``judge=auto`` takes the rules; the same
graph with a model that is not small keeps the paper's roles (tests/unit/test_hydrarag.py).
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from fake_chat import ChatLlamaCpp, ScriptedChatModel

from hybridrag.agents.hydrarag import analysis as analysis
from hybridrag.agents.hydrarag import answering as answering
from hybridrag.agents.hydrarag import initial, rounds
from hybridrag.agents.hydrarag import roles as R
from hybridrag.agents.hydrarag import shots as shots
from hybridrag.graphs.hydrarag import HydraRAGContext, graph
from hybridrag.graphs.runtime import resolve_kb

Q = "which movies did Tom Hanks star in"
PLAN = R.SkylinePlan(topic="Tom Hanks", relations=["starred_actors"], answer_type="movie")


@pytest.fixture
def small(tiny_llama):
    """Factory: a scripted llama.cpp-like model registered as ``local:tiny`` (conftest ``tiny_llama``)."""
    return tiny_llama


def run(kb: str, question: str = Q, **kw) -> dict:
    ctx = HydraRAGContext(kb=kb, llm=kw.pop("llm", "local:tiny"), use_web=False, examples="bundled", **kw)
    return graph.invoke({"question": question}, context=ctx)


def by_node(out: dict, name: str) -> list[dict]:
    return [s for s in out["trace"] if s["node"] == name]


def test_small_model_answers_1hop_with_one_constrained_call(tiny_kb, small):
    model = small(PLAN.model_dump_json())
    out = run(tiny_kb, doc_pool=0)
    # a list question: every film the skyline path reaches (tools/list_answer.py)
    assert out["answer"].split("; ") == ["A League of Their Own", "Apollo 13", "Big"]
    assert {r: v["llm_calls"] for r, v in out["usage"]["by_role"].items()} == {"analysis": 1}
    [detect] = by_node(out, "detect_sources")
    assert detect["mentions"] == ["Tom Hanks"] and "taken without a call" in detect["notes"][-1]
    assert by_node(out, "analyze_question")[0]["decision"] == "depth 1: Tom Hanks - starred actors - answer(movie)"
    schema = model.formats[0]["schema"]
    assert "starred_actors" in schema["properties"]["relations"]["items"]["enum"]
    assert "movie" in schema["properties"]["answer_type"]["enum"]
    assert "Tom Hanks" in schema["properties"]["topic"]["enum"]
    assert "selector" not in out["usage"]["by_role"] and "judge rules" in by_node(out, "select_sources")[0]["reasoning"]
    assert "judge rules" in by_node(out, "refine_paths")[0]["decision"]
    [check] = by_node(out, "check_answer")
    assert check["reasoning"].startswith("rule: a list question; skyline paths reach 3")


def test_plan_outside_the_kb_names_is_unparseable_and_the_question_is_the_skyline(tiny_kb, small):
    bad = '{"topic": "Tom Hanks", "relations": ["acted_in"], "answer_type": "movie"}'
    small(bad, bad, "x", "x")  # the analysis twice, then an unusable final answer (the best ranked entity)
    out = run(tiny_kb, doc_pool=0, max_iterations=1)
    [step] = by_node(out, "analyze_question")
    assert step["fallback"] == "unparseable analysis: the question is the skyline, depth D_max"
    assert out["usage"]["by_role"]["analysis"]["fallbacks"] == 1


def test_topic_extraction_decodes_within_the_kb_names_of_the_question(tiny_kb):
    question = "which films did Tom Hanks and Kevin Bacon both star in"
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny", examples="bundled")
    model = ChatLlamaCpp(script=['{"entities": ["Kevin Bacon", "Tom Hanks"]}'])
    out = initial.detect({"question": question}, ctx, resolve_kb(ctx), model)
    assert out["mentions"] == ["Kevin Bacon", "Tom Hanks"] and len(out["topics"]) == 2
    assert sorted(model.formats[0]["schema"]["properties"]["entities"]["items"]["enum"]) == ["Kevin Bacon", "Tom Hanks"]
    assert model.formats[0]["schema"]["properties"]["entities"]["maxItems"] == 2  # no list past the choices


def test_the_one_cased_name_among_lower_case_tags_is_taken_without_a_call(tiny_kb):
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny", examples="bundled")
    kb = resolve_kb(ctx)
    question = "which giant worms films did Kevin Bacon star in"  # "giant worms" is a lower-case tag
    assert sorted(analysis.topic_choices(kb, question)) == ["Kevin Bacon", "giant worms"]
    out = initial.detect({"question": question}, ctx, kb, ChatLlamaCpp(script=[]))  # any call fails
    assert out["mentions"] == ["Kevin Bacon"] and out["usage"] == {}
    assert analysis.lone_topic(kb, "which giant worms films did kevin bacon star in") is None  # all lower case
    assert analysis.lone_topic(kb, "which Tremors films did Kevin Bacon star in") is None  # two cased names
    model = ChatLlamaCpp(script=['{"entities": ["kevin bacon"]}'])
    out = initial.detect({"question": "which giant worms films did kevin bacon star in"}, ctx, kb, model)
    assert out["mentions"] == ["kevin bacon"] and len(model.formats) == 1  # the model was asked


def test_the_examples_topic_type_picks_the_topic_and_its_same_named_entity(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb, llm="local:tiny"))
    person = frozenset({"person"})
    assert analysis.example_types([{"topic_types": ["person"]}, {"topic_types": []}]) == person
    question = "which giant worms films did kevin bacon star in"  # all lower case: no cased name
    assert analysis.lone_topic(kb, question) is None
    assert analysis.lone_topic(kb, question, person) == "kevin bacon"
    assert analysis.lone_topic(kb, question, frozenset({"movie"})) is None  # neither name is a movie
    tag = SimpleNamespace(id="tag:steve martin", name="steve martin", type="tag")
    actor = SimpleNamespace(id="Steve Martin", name="Steve Martin", type="person")
    assert analysis._prefer([tag, actor], "steve martin") == "tag:steve martin"  # the exact spelling
    assert analysis._prefer([tag, actor], "steve martin", person) == "Steve Martin"
    bacon = {"mention": "kevin bacon", "id": "Kevin Bacon", "name": "Kevin Bacon"}
    sky = "giant worms - has tags - answer(movie)"  # the plan starts from a tag the examples do not
    assert analysis.planned_topic(kb, [bacon], sky, 0.9, False, person) == ([bacon], [], {})
    assert analysis.planned_topic(kb, [bacon], sky, 0.9, False)[0][0]["name"] == "giant worms"


def test_the_plan_is_held_to_the_topic_a_rule_chose_among_several_names(tiny_kb):
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny", examples="bundled")
    kb = resolve_kb(ctx)
    question = "which giant worms films did Kevin Bacon star in"
    assert analysis.pinned_topic(kb, question) == "Kevin Bacon"
    assert analysis.pinned_topic(kb, "which films did Kevin Bacon star in") is None  # one name: any span
    bacon = {"mention": "Kevin Bacon", "id": "Kevin Bacon", "name": "Kevin Bacon"}
    plan = R.SkylinePlan(topic="Kevin Bacon", relations=["starred_actors"], answer_type="movie")
    model = ChatLlamaCpp(script=[plan.model_dump_json()])
    state = {"question": question, "topics": [bacon], "mentions": ["Kevin Bacon"], "shots": []}
    out = initial.analyse(state, ctx, kb, model)
    assert model.formats[0]["schema"]["properties"]["topic"]["enum"] == ["Kevin Bacon"]
    assert out["skyline"] == "Kevin Bacon - starred actors - answer(movie)"
    system, human = (m.content for m in model.calls[0]["messages"])
    # the KB's lists are in the fixed system prefix (llama.cpp reuses it across questions); the question last
    assert "Relations: directed_by," in system and "Answer kinds:" in system and "Relations" not in human
    assert human.startswith(f"Question: {question}")


def test_examples_sharing_one_path_and_a_ruled_topic_write_the_plan_without_a_call(tiny_kb):
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny", examples="kb")
    kb = resolve_kb(ctx)
    shown = {"question": "which films did Geena Davis act in", "topic": ["Geena Davis"], "topic_types": ["person"]}
    shown |= {"relations": ["starred_actors"], "answer_type": "movie", "masked": "", "answers": [], "source": "bank"}
    bacon = {"mention": "Kevin Bacon", "id": "Kevin Bacon", "name": "Kevin Bacon"}
    state = {"question": "which films did Kevin Bacon star in", "topics": [bacon], "mentions": ["Kevin Bacon"]}
    out = initial.analyse({**state, "shots": [shown, shown]}, ctx, kb, ChatLlamaCpp(script=[]))  # any call fails
    assert out["skyline"] == "Kevin Bacon - starred actors - answer(movie)" and out["usage"] == {}
    assert out["trace"][0]["plan"].startswith("rule:")
    other = {**shown, "relations": ["directed_by"]}  # two paths shown: the model chooses
    plan = R.SkylinePlan(topic="Kevin Bacon", relations=["starred_actors"], answer_type="movie")
    model = ChatLlamaCpp(script=[plan.model_dump_json()])
    out = initial.analyse({**state, "shots": [shown, other]}, ctx, kb, model)
    assert len(model.formats) == 1 and "plan" not in out["trace"][0]
    film = {**shown, "topic_types": ["movie"]}  # examples start from a film: Kevin Bacon is not one
    model = ChatLlamaCpp(script=[plan.model_dump_json()])
    initial.analyse({**state, "shots": [film, film]}, ctx, kb, model)
    assert len(model.formats) == 1


def test_names_of_plain_words_do_not_count_among_typed_names(monkeypatch):
    films = {"the other": "The Other", "fists in the pocket": "Fists in the Pocket"}
    kb = SimpleNamespace(
        graph=SimpleNamespace(lookup=lambda n: [SimpleNamespace(type="movie")] if n.casefold() in films else [])
    )
    monkeypatch.setattr(analysis, "known_names", lambda kb, q: ["fists in the pocket", "the other"])
    question = "what languages are the other films written by the writer of fists in the pocket in"
    assert analysis.lone_topic(kb, question, frozenset({"movie"})) == "fists in the pocket"
    assert analysis.lone_topic(kb, question) is None  # no examples' type: the model is asked


def test_topic_choices_fall_back_to_question_spans(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb, llm="local:tiny"))
    assert analysis.topic_choices(kb, "who directed Big") == ["Big"]
    spans = analysis.topic_choices(kb, "who wrote Zorblax")
    assert "Zorblax" in spans and "who wrote Zorblax" in spans


def test_plan_examples_render_in_the_reply_form():
    ex = {
        "question": "who directed Big",
        "masked": "who directed <E>",
        "topic": ["Big"],
        "topic_types": ["movie"],
        "relations": ["directed_by"],
        "answer_type": "person",
        "answers": ["Penny Marshall"],
        "source": "user",
    }
    line = shots.lines([ex], "plan", "kb", 1)
    assert line == (
        'Example: "who directed Big" → {"topic": "Big", "relations": ["directed_by"], "answer_type": "person"}'
    )
    assert (
        shots.chain("Big", ["directed_by", "citizen_of"], "country")
        == "Big - directed by - entity - citizen of - answer(country)"
    )


def _state(kb, **more) -> dict:
    return {
        "question": Q,
        "skyline": "Tom Hanks - release year - answer(year)",
        "split_questions": [Q],
        "topics": [{"mention": "Tom Hanks", "id": kb.graph.lookup("Tom Hanks")[0].id, "name": "Tom Hanks"}],
        "doc_topics": [],
        "available": ["kg"],
        "kept": [],
        "ranked": [],
        "mentions": ["Tom Hanks"],
        **more,
    }


def test_refined_round_under_rules_takes_the_next_example_chain_without_a_call(tiny_kb):
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny")
    kb = resolve_kb(ctx)
    one = {
        "question": "when was Big released",
        "masked": "when was <E> released",
        "topic": ["Big"],
        "topic_types": ["movie"],
        "answers": ["1988"],
        "source": "user",
    }
    shown = [
        {**one, "relations": ["release_year"], "answer_type": "year"},
        {**one, "relations": ["starred_actors"], "answer_type": "movie"},
    ]
    out = rounds.plan_refined(_state(kb, shots=shown), ctx, kb, ScriptedChatModel(script=[]))
    assert out["skyline"] == "Tom Hanks - starred actors - answer(movie)" and out["usage"] == {}
    none = rounds.plan_refined(_state(kb, shots=shown[:1]), ctx, kb, ScriptedChatModel(script=[]))
    assert none["trace"][0]["fallback"] == "judge rules: no other example chain: the question and skyline again"


def test_predicted_round_under_rules_takes_ranked_entities_without_a_call(tiny_kb):
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny")
    kb = resolve_kb(ctx)
    ranked = [{"kind": "entity", "name": "Big", "id": kb.graph.lookup("Big")[0].id}]
    out = rounds.plan_predicted(_state(kb, ranked=ranked), ctx, kb, ScriptedChatModel(script=[]))
    assert out["usage"] == {} and out["trace"][0]["decision"] == "predicted: Big"
    assert out["trace"][0]["fallback"] == "judge rules: top ranked entities used"


def test_small_generation_decodes_within_the_ranked_entities(tiny_kb):
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny")
    kb = resolve_kb(ctx)
    model = ChatLlamaCpp(script=['{"answer": "Apollo 13"}'])
    ranked = [{"kind": "entity", "name": n, "id": n} for n in ("Big", "Apollo 13", "Tom Hanks")]
    out = answering.generate(_state(kb, ranked=ranked, phase="final", selected=[]), ctx, kb, model)
    assert out["answer"] == "Apollo 13"
    assert model.formats[0]["schema"]["properties"]["answer"]["enum"] == ["Big", "Apollo 13"]  # never its own


def test_judge_llm_keeps_the_llm_roles_with_a_small_model(tiny_kb, small):
    yes = R.AnswerCheck(reasoning="r", sufficient="yes", answer="Big")
    small(PLAN.model_dump_json(), R.Refinement(summary="s").model_dump_json(), yes.model_dump_json())
    out = run(tiny_kb, doc_pool=0, judge="llm", source_selector=False)
    assert {r: v["llm_calls"] for r, v in out["usage"]["by_role"].items()} == {"analysis": 1, "refine": 1, "check": 1}
    assert out["answer"] == "Big"


def test_a_repeated_relation_stays_two_hops(tiny_kb):
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny", examples="bundled")
    kb = resolve_kb(ctx)
    model = ChatLlamaCpp(
        script=['{"topic": "Big", "relations": ["starred_actors", "starred_actors"], "answer_type": "movie"}']
    )
    out = initial.analyse(
        _state(
            kb,
            topics=[{"mention": "Big", "id": "Big", "name": "Big"}],
            mentions=["Big"],
            question="which films share an actor with Big",
        ),
        ctx,
        kb,
        model,
    )
    assert out["skyline"] == "Big - starred actors - entity - starred actors - answer(movie)" and out["depth"] == 2


def test_the_analysis_names_as_many_relations_as_the_shown_bank_examples(tiny_kb):
    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny", examples="kb", num_examples=2)
    kb = resolve_kb(ctx)
    one = {
        "question": "which films share an actor with Big",
        "masked": "which films share an actor with <E>",
        "topic": ["Big"],
        "topic_types": ["movie"],
        "answers": ["x"],
        "source": "user",
        "answer_type": "movie",
    }
    shown = [
        {**one, "relations": ["starred_actors", "starred_actors"]},
        {**one, "relations": ["directed_by", "directed_by"]},
    ]
    assert shots.hop_range(shown, "kb", 2) == (2, 2)
    assert shots.hop_range(shown[:1] + [{**one, "relations": ["release_year"]}], "kb", 2) == (1, 2)
    assert shots.hop_range(shown, "bundled", 2) is None and shots.hop_range(shown, "kb", 0) is None
    model = ChatLlamaCpp(
        script=['{"topic": "Big", "relations": ["starred_actors", "starred_actors"], "answer_type": "movie"}']
    )
    state = _state(
        kb,
        topics=[{"mention": "Big", "id": "Big", "name": "Big"}],
        mentions=["Big"],
        shots=shown,
        question="the actor of Big also starred in which films",
    )
    out = initial.analyse(state, ctx, kb, model)
    relations = model.formats[0]["schema"]["properties"]["relations"]
    assert (relations["minItems"], relations["maxItems"]) == (2, 2)  # the grammar holds the examples' length
    assert out["depth"] == 2
    with pytest.raises(ValueError):  # a reply outside the bound (another backend) is unparseable
        R.plan_schema((2, 2)).model_validate({"topic": "Big", "relations": ["starred_actors"], "answer_type": "movie"})
    assert R.plan_schema(None) is R.SkylinePlan


def test_the_analysis_writes_one_of_the_shown_bank_examples_whole_paths(tiny_kb):
    import json

    from llama_cpp.llama_grammar import json_schema_to_gbnf

    ctx = HydraRAGContext(kb=tiny_kb, llm="local:tiny", examples="kb", num_examples=3)
    kb = resolve_kb(ctx)
    one = {
        "question": "q",
        "masked": "q",
        "topic": ["Big"],
        "topic_types": ["movie"],
        "answers": ["x"],
        "source": "user",
        "answer_type": "genre",
    }
    shown = [
        {**one, "relations": ["starred_actors", "starred_actors", "has_genre"]},
        {**one, "relations": ["directed_by", "directed_by", "has_genre"]},
        {**one, "relations": ["starred_actors", "starred_actors", "has_genre"]},
    ]
    assert shots.shown_paths(shown, "kb", 3) == (
        ("starred_actors", "starred_actors", "has_genre"),
        ("directed_by", "directed_by", "has_genre"),
    )
    assert shots.shown_paths(shown, "bundled", 3) is None and shots.shown_paths(shown, "kb", 0) is None
    assert shots.shown_paths([{**one, "relations": []}], "kb", 3) is None
    model = ChatLlamaCpp(
        script=[
            '{"topic": "Big", "relations": ["starred_actors", "starred_actors", "has_genre"], "answer_type": "genre"}'
        ]
    )
    state = _state(
        kb,
        topics=[{"mention": "Big", "id": "Big", "name": "Big"}],
        mentions=["Big"],
        shots=shown,
        question="the films that share actors with Big were in which genres",
    )
    out = initial.analyse(state, ctx, kb, model)
    schema = model.formats[0]["schema"]
    assert schema["properties"]["relations"]["enum"] == [
        ["starred_actors", "starred_actors", "has_genre"],
        ["directed_by", "directed_by", "has_genre"],
    ]
    grammar = [
        line for line in json_schema_to_gbnf(json.dumps(schema)).splitlines() if line.startswith("relations ::=")
    ][0]
    assert grammar.count("|") == 1 and "has_imdb_rating" not in grammar  # two whole paths, nothing composed
    assert out["skyline"] == ("Big - starred actors - entity - starred actors - entity - has genre - answer(genre)")
    assert R.plan_schema((3, 3), None) is not R.plan_schema((3, 3), (("has_genre",),))


def test_rules_select_the_paths_along_the_skyline_first():
    from hybridrag.agents.hydrarag import audit

    def kg(i: str, *hops: str) -> dict:
        return {"id": i, "source": "kg", "path": [{"relations": [h]} for h in hops]}

    pool = [
        kg("year", "starred_actors", "release_year"),
        {"id": "doc", "source": "doc", "path": []},
        kg("films", "starred_actors", "starred_actors"),
        kg("one", "starred_actors"),
        kg("films2", "starred_actors", "starred_actors"),
    ]
    sky = "John Carter - starred actors - entity - starred actors - answer(movie)"
    assert [c["id"] for c in audit.skyline_first(pool, sky)] == ["films", "films2", "year", "doc", "one"]
    assert audit.skyline_first(pool, "John Carter") == pool  # a skyline naming no relation keeps the order


def test_ranked_answers_keep_the_place_of_the_first_path_that_reaches_them(tiny_kb):
    from hybridrag.agents.hydrarag import pruning

    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    paths = [
        {"answers": ["Big"], "score": 0.4, "source": "kg"},  # selected first (along the skyline)
        {"answers": ["Apollo 13", "Big"], "score": 0.9, "source": "kg"},
    ]
    ranked = pruning.to_ranked(kb, paths, set(), 1)
    assert [r["id"] for r in ranked] == ["Big"] and ranked[0]["score"] == 0.9  # its place, the best score
    assert [r["id"] for r in pruning.to_ranked(kb, paths, set(), 5)] == ["Big", "Apollo 13"]


def test_the_beam_keeps_paths_along_the_skyline_first_under_the_rules():
    from hybridrag.agents.hydrarag.kg import follow_bonus
    from hybridrag.agents.hydrarag.kg_paths import Chain

    def path(*rels: tuple[str, ...]) -> Chain:
        return Chain(tuple(frozenset([f"n{i}"]) for i in range(len(rels) + 1)), tuple((r, False) for r in rels))

    sky = "Forever Strong - directed by - entity - directed by - entity - release year - answer(year)"
    chains = [
        path(("directed_by",)),
        path(("directed_by",), ("directed_by", "written_by")),
        path(("directed_by",), ("directed_by",), ("release_year",)),
        path(("release_year",), ("release_year",), ("directed_by",)),  # the same words, another order
        path(("directed_by",), ("release_year",)),
    ]
    assert follow_bonus(chains, sky) == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert follow_bonus(chains, "Forever Strong") == [0.0] * 5  # a skyline naming no relation: no bonus


def test_the_plans_topic_replaces_the_other_names_of_the_question(tiny_kb):
    kb = resolve_kb(HydraRAGContext(kb=tiny_kb))
    big = {"mention": "Big", "id": "Big", "name": "Big"}
    tag = {"mention": "Tom Hanks", "id": "Tom Hanks", "name": "Tom Hanks"}
    sky = "Big - starred actors - answer(person)"
    assert analysis.planned_topic(kb, [tag, big], sky, 0.9, False) == ([big], [tag], {})
    topics, dropped, found = analysis.planned_topic(kb, [tag], sky, 0.9, False)  # the plan's topic was not detected
    assert [t["id"] for t in topics] == ["Big"] and dropped == [tag] and found["topic_keys"] == ["id:Big"]
    assert analysis.planned_topic(kb, [tag], "Nowhere Film - starred actors - answer(person)", 0.99, False) == (
        [tag],
        [],
        {},
    )  # a plan topic the KB does not know changes nothing
    assert analysis.planned_topic(kb, [tag], "", 0.9, False) == ([tag], [], {})
