"""The perfect-LLM stand-in (evals.oracle) on the tiny KB: each role, the noise, refusals, end to end."""

from __future__ import annotations

import json

import pytest

from hybridrag.agents.hybgrag import roles as HR
from hybridrag.agents.hybgrag.critic import render_feedback
from hybridrag.agents.hybgrag.report import format_references
from hybridrag.agents.hydrarag import roles as DR
from hybridrag.agents.hydrarag.analysis import predicted_depth
from hybridrag.agents.hydrarag.pruning import path_blocks
from hybridrag.agents.llm.structured import call_structured
from hybridrag.agents.mor import roles as MR
from hybridrag.agents.mor.output import references_text
from hybridrag.agents.mor.plan import validate_plan
from hybridrag.agents.ssrag import augment as SA
from hybridrag.agents.ssrag import retrieval as SR
from hybridrag.agents.ssrag import routing as SRO
from hybridrag.agents.ssrag import unify as SU
from hybridrag.evals.datasets import Question
from hybridrag.evals.oracle import (
    GoldLeakError,
    GoldSet,
    NoGoldAnnotationError,
    OracleError,
    UnknownQuestionError,
    build_oracle,
    parse_spec,
)
from hybridrag.evals.oracle import model as oracle_model
from hybridrag.kb.base import open_kb
from hybridrag.prompts import load_examples
from hybridrag.prompts.data_block import data_block, data_list

FC = "function_calling"
BIG = "who directed Big"
BACON = "what movies did Kevin Bacon act in"
BACON2 = "who directed the movies Kevin Bacon acted in"
QUESTIONS = [
    Question("big", BIG, ("Penny Marshall",), qtype="movie_to_director", topic="Big", hops=1),
    Question("bacon", BACON, ("Apollo 13", "Tremors"), qtype="actor_to_movie", topic="Kevin Bacon", hops=1),
    Question("bacon2", BACON2, ("Ron Howard",), qtype="actor_to_movie_to_director", topic="Kevin Bacon", hops=2),
]


def oracle(spec: str = "oracle", sources: tuple[str, ...] = ("kg",)):
    return build_oracle(spec, GoldSet.from_questions(QUESTIONS, sources))


@pytest.fixture
def schema(tiny_kb):
    return open_kb(tiny_kb).graph.schema()


def refs(*items: tuple[str, str]) -> str:
    return format_references([{"name": n, "text": t, "paths": [], "source": "kg"} for n, t in items])


# --- gold records -------------------------------------------------------------------------------


def test_gold_record_from_the_question_type():
    rec = {r.id: r for r in GoldSet.from_questions(QUESTIONS).records()}["bacon2"]
    assert rec.relations == ("starred_actors", "directed_by") and rec.types == ("person", "movie", "person")
    assert rec.skyline() == "Kevin Bacon - starred actors - movie - directed by - answer(director)"
    assert predicted_depth(rec.skyline(), ["Kevin Bacon"]) == 2
    assert rec.sub_questions()[0] == "Which movies have Kevin Bacon as actor (starred actors)?"


def test_refuses_questions_without_gold():
    with pytest.raises(NoGoldAnnotationError, match="no topic entity or question type"):
        GoldSet.from_questions([Question("x", "who is it", ("A",))])
    messages = [("system", "You answer."), ("human", "Question: who directed Heat")]
    with pytest.raises(UnknownQuestionError, match="no gold record"):
        call_structured(oracle(), HR.Validation, messages, role="validator")


def test_the_asked_question_wins_over_few_shot_examples():
    gold = GoldSet.from_questions(QUESTIONS)
    prompt = f"Examples:\nQuestion: {BACON}\nAnswer: ...\n\nQuestion: {BIG.upper()}"
    assert gold.find(prompt).id == "big"
    assert gold.find(f"Query: <data>\n{BACON2}\n</data> please").id == "bacon2"
    assert gold.find(f"Question: {BACON}\nSub-questions: {BIG} | and more").id == "big"  # inside a later line
    assert gold.find("Question: who directed Heat") is None


def test_spec_parsing():
    assert parse_spec("oracle:p=0.3,seed=2,types=wrong_entity+wrong_module").types == ("wrong_entity", "wrong_module")
    for bad in ("oracle:p=2", "oracle:q=1", "oracle:types=wrong_thing"):
        with pytest.raises(ValueError):
            parse_spec(bad)


def test_a_reply_naming_unseen_gold_is_refused(monkeypatch):
    monkeypatch.setitem(oracle_model.RULES, HR.Answer, lambda call: HR.Answer(reasoning="", answer="Penny Marshall"))
    with pytest.raises(GoldLeakError, match="Penny Marshall"):
        HR.answer(oracle(), BIG, refs(("A League of Their Own", "A film.")), FC)
    monkeypatch.setitem(oracle_model.RULES, HR.Answer, lambda call: HR.Answer(reasoning="", answer=[1]))
    with pytest.raises(OracleError, match="rule for Answer failed"):  # a rule bug is loud, not a parse failure
        HR.answer(oracle(), BIG, refs(("A League of Their Own", "A film.")), FC)


# --- HybGRAG ------------------------------------------------------------------------------------


def test_hybgrag_router_validator_answerer(schema):
    m = oracle()
    reply, usage = HR.route(m, HR.router_first_messages(BACON2, schema, load_examples("hybgrag_router")), FC)
    assert [(e.name, e.type) for e in reply.entities] == [("Kevin Bacon", "person")]
    assert reply.relations == ["starred_actors", "directed_by"] and reply.module == "hybrid"
    assert usage["llm_calls"] == 1 and usage["input_tokens"] > 0
    gold = refs(("Penny Marshall", "Penny Marshall"))
    mention = refs(("A League of Their Own", "A League of Their Own was directed by Penny Marshall."))
    assert HR.validate(m, BIG, gold, FC)[0].verdict == "yes"
    assert HR.validate(m, BIG, mention, FC)[0].verdict == "no"  # naming the answer is not being it
    assert HR.answer(m, BIG, mention, FC)[0].answer == "Penny Marshall"
    assert HR.answer(m, BIG, refs(("Tom Hanks", "An actor.")), FC)[0].answer == "I do not know"


@pytest.mark.parametrize(
    "action, etype, ents, rels",
    [
        (
            {"module": "hybrid", "entities": [{"name": "directed", "type": "movie"}], "relations": ["written_by"]},
            "incorrect_entity_relation",
            ["directed"],
            ["written_by"],
        ),
        (
            {
                "module": "hybrid",
                "entities": [{"name": "Kevin Bacon", "type": "person"}],
                "relations": ["starred_actors"],
            },
            "missing_entity",
            [],
            [],
        ),
        (
            {
                "module": "hybrid",
                "entities": [{"name": "Kevin Bacon", "type": "person"}],
                "relations": ["starred_actors", "directed_by"],
            },
            "incorrect_intersection",
            [],
            [],
        ),
        ({"module": "text", "entities": [], "relations": []}, "incorrect_retrieval_module", [], []),
    ],
)
def test_hybgrag_commentor_compares_the_action_with_the_gold(action, etype, ents, rels):
    bank = load_examples("hybgrag_experience")
    crit, _ = HR.comment(oracle(), BACON2, action, bank, FC)
    assert (crit.error_type, crit.wrong_entities, crit.wrong_relations) == (etype, ents, rels)


# --- MoR ----------------------------------------------------------------------------------------


def test_mor_planner_and_answerer(schema):
    m = oracle()
    plan, _, _ = MR.plan(m, MR.planner_messages(BACON2, schema, load_examples("mor_planner")), "paths", FC)
    checked = validate_plan(plan, schema, [])
    assert checked["valid"] and checked["shown"] == ["person<Kevin Bacon> → movie → person"]
    assert checked["routes"][0]["relations"] == [["starred_actors"], ["directed_by"]]
    triplets, _, _ = MR.plan(
        m, MR.planner_messages(BIG, schema, load_examples("mor_triplets"), "triplets"), "triplets", FC
    )
    assert validate_plan(triplets, schema, [])["shown"] == ["movie<Big> → person"]
    ranked = [{"id": "Tremors", "name": "Tremors", "source": "kg"}, {"id": "Big", "name": "Big", "source": "doc"}]
    evidence = [{"id": "Tremors", "source": "kg", "text": "Kevin Bacon → starred_actors (inverse) → Tremors"}]
    assert MR.answer(m, BACON, references_text(ranked, evidence), FC)[0].answer == "Tremors"


# --- HydraRAG -----------------------------------------------------------------------------------


def test_hydrarag_initialisation_roles():
    m = oracle()
    assert DR.extract_topics(m, BACON2, FC)[0].entities == ["Kevin Bacon"]
    analysis = DR.analyse(m, BACON2, data_list(["Kevin Bacon"]), FC)[0]
    assert analysis.skyline.endswith("answer(director)") and len(analysis.split_questions) == 2
    shown = data_block([("skyline", analysis.skyline)])
    assert DR.choose_sources(m, BACON2, "kg, docs", shown, FC)[0].sources == ["kg"]
    hybrid = oracle(sources=("kg", "docs"))
    assert DR.choose_sources(hybrid, BACON2, "kg, docs, web", shown, FC)[0].sources == ["kg", "docs"]
    results = "\n".join(
        data_block([("title", t), ("snippet", x)], n=i)
        for i, (t, x) in enumerate(
            [("Tremors", "A monster film."), ("Apollo 13", "Directed by Ron Howard."), ("Kevin Bacon", "An actor.")], 1
        )
    )
    assert DR.select_web(m, BACON2, shown, results, 2, FC)[0].selected == [2, 3]  # the answer, then the topic


def test_hydrarag_paths_selection_and_answers():
    m = oracle()
    paras = "\n".join(
        data_block(s, n=i)
        for i, s in enumerate(
            ["Big was directed by Penny Marshall.", "Big is a comedy about a boy who wakes up as an adult."], 1
        )
    )
    built = DR.paths_from_text(m, BIG, data_list(["Big"]), data_block("Big - directed by - answer"), paras, FC)[0]
    assert [(p.paragraph, p.path) for p in built.paths] == [(1, "Big - directed by - Penny Marshall")]
    pool = [
        {"source": "kg", "text": t}
        for t in (
            "{Big} → has_genre → {Comedy}",
            "{Big} → release_year → {1988}",
            "{Big} → directed_by → {Penny Marshall}",
            "{Big} → x → {Y}",
        )
    ]
    q = {"question": BIG, "skyline": data_block("Big - directed by - answer(director)"), "splits": data_list([BIG])}
    assert DR.select_paths(m, FC, **q, paths=path_blocks(pool), width="2")[0].selected == [3]
    unrelated = pool[:2] + pool[3:]  # nothing names the answer or follows its path: the first ones
    assert DR.select_paths(m, FC, **q, paths=path_blocks(unrelated), width="2")[0].selected == [1, 2]
    summary = DR.refine(m, FC, **q, paths=path_blocks(pool))[0].summary
    assert summary == "{Big} → directed_by → {Penny Marshall}"
    yes = DR.check(m, FC, **q, evidence=data_block([("summary", summary)]))[0]
    assert (yes.sufficient, yes.answer) == ("yes", "Penny Marshall")
    no = DR.check(m, FC, **q, evidence=path_blocks(pool[:2]))[0]
    assert (no.sufficient, no.answer) == ("no", "")
    assert DR.generate(m, FC, **q, evidence=path_blocks(pool[:2]))[0].answer == "I do not know"
    later = {**q, "topics": data_list(["Big"]), "feedback": "(none)"}
    follow = DR.follow_up(m, FC, **later, paths=path_blocks(pool[:2]))[0]
    assert (follow.question, follow.topic_entities) == (BIG, ["Big"])
    assert DR.predict(m, FC, **later, paths=path_blocks(pool[:2]))[0].predictions == []  # own knowledge = gold
    assert [p.answer for p in DR.predict(m, FC, **later, paths=path_blocks(pool))[0].predictions] == ["Penny Marshall"]


# --- SSRAG --------------------------------------------------------------------------------------


def test_ssrag_roles(tiny_kb):
    m, kb = oracle(), open_kb(tiny_kb)
    assert SA.decompose(m, BIG, FC)[0] == [BIG]
    found = SA.extract_entities(m, kb, BIG, [BIG], FC)[0]
    assert found == [{"name": "Big", "type": "movie"}]
    entities = SA.canonicalise(kb, found)
    cues = SA.detect_intent(m, BIG, [BIG], entities, FC)[0]
    assert cues["intent"] == "who" and cues["factual_cues"] == ["Big"]
    assert SA.enhance_query(m, BIG, entities, cues, 40, FC)[0] == BIG
    assert SRO.classify(m, BIG, FC)[0].label == "FACTUAL"
    node = SR.node_facts(kb, "Big", 25)
    text = SR.node_to_text(m, node, FC)[0]
    assert text == " ".join(f"{f}." for f in node["facts"])
    items = [
        {"id": i, "name": n, "text": t, "source": "doc", "kind": "passage"}
        for i, n, t in (
            ("1", "Big", "Big was directed by Penny Marshall. Big is a comedy."),
            ("2", "Big", "Big was directed by Penny Marshall."),
            ("3", "Tremors", "Tremors has giant worms."),
        )
    ]
    kept, removed, _, _ = SU.llm_filter(m, BIG, items, FC)
    assert [i["id"] for i in kept] == ["1", "3"] and [r["id"] for r in removed] == ["2"]
    assert SU.generate(m, BIG, kept, FC)[0] == "Penny Marshall"


# --- noise --------------------------------------------------------------------------------------


def test_noise_is_seeded_per_question_and_follows_p():
    records = GoldSet.from_questions(
        [
            Question(str(i), f"who directed film {i}", ("X",), qtype="movie_to_director", topic=f"film {i}")
            for i in range(400)
        ]
    ).records()
    noise = parse_spec("oracle:p=0.3,seed=7")
    drawn = [noise.draw(r, "hybgrag") for r in records]
    assert 0.22 < sum(d is not None for d in drawn) / len(drawn) < 0.38
    assert drawn == [noise.draw(r, "hybgrag") for r in records]
    assert {d.type for d in drawn if d} == {
        "wrong_entity",
        "wrong_relation",
        "missing_relation",
        "wrong_module",
        "missing_entity",
    }
    assert all(parse_spec("oracle").draw(r, "mor") is None for r in records)


@pytest.mark.parametrize(
    "etype", ["wrong_entity", "wrong_relation", "missing_relation", "wrong_module", "missing_entity"]
)
def test_hybgrag_first_decision_carries_each_error_type(schema, etype):
    m = oracle(f"oracle:p=1,types={etype}")
    reply, _ = HR.route(m, HR.router_first_messages(BACON2, schema, []), FC)
    names, rels = [e.name for e in reply.entities], reply.relations
    expected = {
        "wrong_entity": names != ["Kevin Bacon"] and len(names) == 1 and names[0] in BACON2.split(),
        "wrong_relation": len(rels) == 2 and len(set(rels) - {"starred_actors", "directed_by"}) == 1,
        "missing_relation": len(rels) == 1 and set(rels) < {"starred_actors", "directed_by"},
        "wrong_module": reply.module == "text" and names == ["Kevin Bacon"],
        "missing_entity": names == [] and reply.module == "hybrid",
    }
    assert expected[etype], reply
    [entry] = m.log.entries()
    assert entry["type"] == etype and entry["applied"] and entry["applied_by"] == ["router"]


def _reflect(m, schema, feedback: str):
    first = HR.router_first_messages(BACON2, schema, [])
    action, _ = HR.route(m, first, FC)
    later = HR.router_reflect_messages(first, action.model_dump(), feedback, BACON2)
    return action, HR.route(m, later, FC)[0]


def test_hybgrag_repairs_only_what_the_feedback_names(schema):
    m = oracle("oracle:p=1,types=wrong_relation")
    wrong, _ = HR.route(m, HR.router_first_messages(BACON2, schema, []), FC)
    bad = (set(wrong.relations) - {"starred_actors", "directed_by"}).pop()
    _, kept = _reflect(m, schema, render_feedback([("missing_entity", [])]))
    assert kept.relations == wrong.relations and not m.log.entries()[0]["repaired"]
    _, fixed = _reflect(m, schema, render_feedback([("incorrect_entity_relation", [f"relation:{bad}"])]))
    assert fixed.relations == ["starred_actors", "directed_by"]
    [entry] = m.log.entries()
    assert entry["repaired"] and entry["later_decisions"] == 1 and entry["repaired_at"] == 1


def test_mor_replan_repairs_a_named_category_only(schema):
    m = oracle("oracle:p=1,types=wrong_category")
    first = MR.planner_messages(BACON2, schema, [])
    plan, raw, _ = MR.plan(m, first, "paths", FC)
    wrong = validate_plan(plan, schema, [])
    entry = m.log.entries()[0]
    bad = entry["detail"]["category"]
    assert bad in [n.type for n in plan.routes[0].nodes]
    unnamed, _, _ = MR.plan(m, MR.replan_messages(first, raw, ["no usable route"], BACON2), "paths", FC)
    assert unnamed == plan
    problems = wrong["problems"] or [f"route uses {bad}"]
    fixed, _, _ = MR.plan(m, MR.replan_messages(first, raw, problems, BACON2), "paths", FC)
    assert validate_plan(fixed, schema, [])["shown"] == ["person<Kevin Bacon> → movie → person"]
    assert m.log.entries()[0]["repaired"]


def test_hydrarag_and_ssrag_carry_their_error_types():
    m = oracle("oracle:p=1,types=missing_relation")
    DR.extract_topics(m, BACON2, FC)
    sky = DR.analyse(m, BACON2, data_list(["Kevin Bacon"]), FC)[0].skyline
    assert sky.count(" - ") == 2  # one hop left out: topic - relation - answer(director)
    q = {
        "question": BACON2,
        "skyline": data_block(sky),
        "splits": data_list([BACON2]),
        "topics": data_list(["Kevin Bacon"]),
    }
    follow = DR.follow_up(m, FC, **q, paths="(none)", feedback="(none)")[0]
    assert follow.skyline == "Kevin Bacon - starred actors - movie - directed by - answer(director)"
    assert m.log.entries()[0]["repaired"]
    s = oracle("oracle:p=1,types=wrong_module")
    SA.decompose(s, BIG, FC)
    assert SRO.classify(s, BIG, FC)[0].label == "TEMPORAL"
    w = oracle("oracle:p=1,types=wrong_entity")
    SA.decompose(w, BIG, FC)
    [named] = SA.extract_entities(w, None, BIG, [BIG], FC)[0]
    assert named["name"] in ("who", "directed")


# --- end to end on the tiny KB ------------------------------------------------------------------


@pytest.fixture
def registered():
    from hybridrag.agents.llm.models import forget_model, register_model

    specs = []

    def make(spec: str = "oracle"):
        m = oracle(spec)
        register_model(spec, m)
        specs.append(spec)
        return m

    yield make
    for spec in specs:
        forget_model(spec)


@pytest.mark.parametrize("method", ["hybgrag", "mor"])
def test_retrieval_methods_rank_the_gold_first(tiny_kb, registered, method):
    from hybridrag.graphs import context_for, get_graph

    registered()
    out = get_graph(method).invoke({"question": BIG}, context=context_for(method, kb=tiny_kb, llm="oracle"))
    assert out["ranked"][0]["name"] == "Penny Marshall"


@pytest.mark.parametrize("method", ["hydrarag", "ssrag"])
def test_answering_methods_answer_the_gold(tiny_kb, registered, method):
    from hybridrag.graphs import context_for, get_graph

    registered()
    out = get_graph(method).invoke({"question": BIG}, context=context_for(method, kb=tiny_kb, llm="oracle"))
    assert out["answer"] == "Penny Marshall"
    assert out["usage"]["llm_calls"] >= 5


def test_hybgrag_loop_repairs_a_wrong_module_end_to_end(tiny_kb, registered):
    from hybridrag.graphs import context_for, get_graph

    m = registered("oracle:p=1,types=wrong_module")
    ctx = context_for("hybgrag", kb=tiny_kb, llm="oracle:p=1,types=wrong_module")
    out = get_graph("hybgrag").invoke({"question": BIG}, context=ctx)
    modules = [s["module"] for s in out["trace"] if s["node"] == "route_question"]
    assert modules == ["text", "hybrid"] and out["ranked"][0]["name"] == "Penny Marshall"
    [entry] = m.log.entries()
    assert entry["repaired"] and entry["repaired_at"] == 1


def test_cli_eval_with_the_oracle_on_a_metaqa_question_file(tiny_kb, tmp_path, capsys):
    from hybridrag.app.cli import main

    lines = ["who directed [Big]\tPenny Marshall", "what movies did [Kevin Bacon] act in\tApollo 13|Tremors"]
    (tmp_path / "qa_dev.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "qa_dev_qtype.txt").write_text("movie_to_director\nactor_to_movie\n", encoding="utf-8")
    out = tmp_path / "run"
    code = main(
        [
            "eval",
            "--method",
            "mor",
            "--questions",
            str(tmp_path / "qa_dev.txt"),
            "--kb",
            tiny_kb,
            "--llm",
            "oracle:p=1,types=missing_entity",
            "--set",
            "max_iterations=2",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    assert "oracle" in summary["label"] and summary["ceiling"]["hit"] == 1.0
    assert summary["metrics"]["hit@1"] == 1.0
    noise = json.loads((out / "oracle_noise.json").read_text())
    assert noise["summary"]["applied"] == 2 and noise["summary"]["repair_share"] == 1.0
    assert "oracle" in (out / "summary.md").read_text().splitlines()[0]
    assert "2 repaired" in capsys.readouterr().out
