"""HybGRAG's commentor setting, its experience bank and its examples drawn from the KB at hand."""

from __future__ import annotations

import json
import re

import pytest

from hybridrag.agents.hybgrag.roles import ERROR_TYPES, Critique, RouterAction, TopicEntity, Validation
from hybridrag.graphs.hybgrag import HybGRAGContext, graph
from hybridrag.prompts import EXAMPLES_DIR

YES = Validation(reasoning="fits", verdict="yes")
NO = Validation(reasoning="does not fit", verdict="no")


def act(module="hybrid", entities=(("Tom Hanks", "person"),), relations=("starred_actors",)) -> RouterAction:
    return RouterAction(
        module=module, entities=[TopicEntity(name=n, type=t) for n, t in entities], relations=list(relations)
    )


def comments(out: dict) -> list[dict]:
    return [s for s in out["trace"] if s["node"] == "comment_on_routing"]


def test_llm_commentor_is_the_default_and_judges_a_text_module_rejection(tiny_kb, fake_llm):
    assert HybGRAGContext().commentor == "llm"
    fake = fake_llm(
        act(module="text", entities=()),
        NO,
        Critique(reasoning="named entity: use the graph", error_type="incorrect_retrieval_module"),
        act(),
        YES,
    )
    out = graph.invoke(
        {"question": "which movies did Tom Hanks act in"},
        context=HybGRAGContext(kb=tiny_kb, llm="fake:test", max_iterations=2),
    )
    [step] = comments(out)
    assert step["source"] == "llm" and step["decision"] == "incorrect_retrieval_module"
    assert "try the other module" in step["feedback"]
    assert [c["schema"] for c in fake.calls] == ["RouterAction", "Validation", "Critique", "RouterAction", "Validation"]
    commentor_prompt = fake.calls[2]["messages"][-1].content
    assert "Retrieval module: text" in commentor_prompt and "which movies did Tom Hanks act in" in commentor_prompt


def test_llm_commentor_no_entity_is_kept_when_nothing_was_extracted(tiny_kb, fake_llm):
    fake_llm(act(entities=(), relations=()), NO, Critique(reasoning="none", error_type="no_entity"), act(), YES)
    out = graph.invoke(
        {"question": "which movies did Tom Hanks act in"},
        context=HybGRAGContext(kb=tiny_kb, llm="fake:test", max_iterations=2),
    )
    [step] = comments(out)
    assert step["source"] == "llm" and step["decision"] == "no_entity"


@pytest.mark.parametrize(
    ("first", "decision"),
    [
        (act(module="text", entities=()), "no_entity+incorrect_retrieval_module"),
        (act(entities=(("Tom Hanks", "person"), ("Kevin Bacon", "person"))), "incorrect_intersection"),
        (
            act(
                entities=(("Tom Hanks", "person"), ("French", "language")), relations=("starred_actors", "in_language")
            ),
            "no_intersection",
        ),
    ],
)
def test_rules_option_decides_without_the_llm(tiny_kb, fake_llm, first, decision):
    validated = decision != "no_intersection"  # an empty retrieval is rejected unasked
    fake = fake_llm(first, *([NO] if validated else []), act(), YES)
    out = graph.invoke(
        {"question": "which movies did Tom Hanks act in"},
        context=HybGRAGContext(kb=tiny_kb, llm="fake:test", max_iterations=2, commentor="rules"),
    )
    [step] = comments(out)
    assert step["source"] == "rule" and step["decision"] == decision
    assert "Critique" not in [c["schema"] for c in fake.calls]


def test_unknown_commentor_setting_is_one_clear_error(tiny_kb):
    with pytest.raises(ValueError, match="hybgrag commentor must be one of llm, rules, not 'oracle'"):
        HybGRAGContext(kb=tiny_kb, llm="fake:test", commentor="oracle")


def test_experience_bank_file_covers_the_six_error_types():
    doc = json.loads((EXAMPLES_DIR / "hybgrag_experience.json").read_text(encoding="utf-8"))
    bank = doc["examples"]
    assert set(ERROR_TYPES) == {ex["error_type"] for ex in bank}
    assert 24 <= len(bank) <= 36  # about 30, as the paper
    assert "evals.collect_experience" in doc["command"]
    assert set(ERROR_TYPES) == {ex["error_type"] for ex in bank[: len(ERROR_TYPES)]}  # any prefix mixes types
    for ex in bank:
        assert ex["module"] in ("hybrid", "text") and ex["feedback"].startswith("The retrieved reference is incorrect.")
        Critique(
            reasoning=ex["reasoning"],
            error_type=ex["error_type"],
            wrong_entities=ex["wrong_entities"],
            wrong_relations=ex["wrong_relations"],
        )  # each entry is a valid commentor reply
        names = {e["name"] for e in ex["entities"]}
        assert set(ex["wrong_entities"]) <= names and set(ex["wrong_relations"]) <= set(ex["relations"])
        if ex["error_type"] in ("no_intersection", "incorrect_intersection"):
            assert len(ex["entities"]) >= 2
        if ex["error_type"] == "no_entity":
            assert not ex["entities"]


def test_validator_sees_two_examples_per_entity_type_from_the_kb(tiny_kb, fake_llm):
    from hybridrag.agents.hybgrag.shots import validator_shots
    from hybridrag.kb.base import open_kb

    kb = open_kb(tiny_kb)
    shots = validator_shots(kb, 2)
    by_type: dict[str, list[str]] = {}
    for ex in shots:
        by_type.setdefault(ex["type"], []).append(ex["verdict"])
    assert by_type and all(len(v) <= 2 for v in by_type.values())
    assert any(v == ["yes", "no"] for v in by_type.values())
    assert set(by_type) <= set(kb.graph.schema().entity_types)
    fake = fake_llm(act(), YES)
    out = graph.invoke(
        {"question": "which movies did Tom Hanks act in"}, context=HybGRAGContext(kb=tiny_kb, llm="fake:test")
    )
    prompt = fake.calls[1]["messages"][-1].content
    assert all(ex["path"] in prompt for ex in shots)
    assert prompt.count('example="') == len(shots)  # example references are quoted data, but not numbered
    [step] = [s for s in out["trace"] if s["node"] == "validate_retrieval"]
    assert len(step["examples"]) == len(shots)
    fake_llm(act(), YES)
    none = graph.invoke(
        {"question": "which movies did Tom Hanks act in"},
        context=HybGRAGContext(kb=tiny_kb, llm="fake:test", validator_examples=0),
    )
    assert [s for s in none["trace"] if s["node"] == "validate_retrieval"][0]["examples"] == []


COMPANY_TRIPLES = """\
Acme Corp|makes|Rocket Skates
Acme Corp|makes|Giant Magnet
Acme Corp|headquartered_in|Phoenix
Acme Corp|founded_by|Wile Coyote
Globex|makes|Doomsday Device
Globex|headquartered_in|Cypress Creek
Globex|founded_by|Hank Scorpio
Initech|makes|TPS Reports
Initech|headquartered_in|Austin
Initech|founded_by|Bill Lumbergh
Wile Coyote|lives_in|Phoenix
Hank Scorpio|lives_in|Cypress Creek
Bill Lumbergh|lives_in|Austin
"""
COMPANY_TYPES = {
    "makes": ["company", "product"],
    "headquartered_in": ["company", "city"],
    "founded_by": ["company", "person"],
    "lives_in": ["person", "city"],
}
MOVIE_WORDS = re.compile(
    r"\b(movie|film|directed_by|starred_actors|written_by|release_year|has_genre|in_language|"
    r"has_tags|actor|director)\b",
    re.IGNORECASE,
)


@pytest.fixture(scope="module")
def company_kb(tmp_path_factory) -> str:
    from hybridrag.kb.ingest import ingest

    src = tmp_path_factory.mktemp("company-src")
    (src / "triples.txt").write_text(COMPANY_TRIPLES, encoding="utf-8")
    (src / "types.json").write_text(json.dumps(COMPANY_TYPES), encoding="utf-8")
    out = tmp_path_factory.mktemp("company-kb") / "kb"
    ingest(out, [src / "triples.txt"], type_map=src / "types.json", progress=False)
    return str(out)


def test_every_prompt_on_a_company_kb_names_only_its_types_and_relations(company_kb, fake_llm):
    first = act(entities=(("Acme Corp", "company"),), relations=("founded_by",))
    fake = fake_llm(
        first,
        NO,
        Critique(reasoning="wrong relation", error_type="incorrect_entity_relation", wrong_relations=["founded_by"]),
        act(entities=(("Acme Corp", "company"),), relations=("makes",)),
        YES,
    )
    out = graph.invoke(
        {"question": "which products does Acme Corp make"},
        context=HybGRAGContext(kb=company_kb, llm="fake:test", max_iterations=2),
    )
    assert out["ranked"][0]["name"] in {"Rocket Skates", "Giant Magnet"}
    assert [c["schema"] for c in fake.calls] == ["RouterAction", "Validation", "Critique", "RouterAction", "Validation"]
    for call in fake.calls:
        text = "\n".join(str(m.content) for m in call["messages"])
        assert not MOVIE_WORDS.search(text), (call["schema"], MOVIE_WORDS.search(text))
    router = "\n".join(str(m.content) for m in fake.calls[0]["messages"])
    commentor = "\n".join(str(m.content) for m in fake.calls[2]["messages"])
    assert "Acme" in router or "Globex" in router or "Initech" in router  # the KB's own entities as examples
    assert "(company)" in commentor and "critique: " in commentor
    [route] = [s for s in out["trace"] if s["node"] == "route_question" and s["iteration"] == 1]
    [comment] = [s for s in out["trace"] if s["node"] == "comment_on_routing"]
    assert route["examples"] and comment["examples"]


def test_bundled_examples_stay_one_setting_away(tiny_kb, fake_llm):
    fake = fake_llm(act(), YES)
    graph.invoke(
        {"question": "which movies did Tom Hanks act in"},
        context=HybGRAGContext(kb=tiny_kb, llm="fake:test", examples="bundled"),
    )
    bundled = json.loads((EXAMPLES_DIR / "hybgrag_router.json").read_text(encoding="utf-8"))
    first_q = (bundled["examples"] if isinstance(bundled, dict) else bundled)[0]["question"]
    assert first_q in fake.calls[0]["messages"][-1].content


def test_oracle_extra_entity_is_opt_in_carried_and_repaired_by_an_intersection_feedback(tiny_kb):
    from hybridrag.agents.hybgrag import roles as R
    from hybridrag.agents.hybgrag.critic import render_feedback
    from hybridrag.evals.datasets import Question
    from hybridrag.evals.oracle import GoldSet, build_oracle, parse_spec
    from hybridrag.kb.base import open_kb

    q = Question(
        "bacon2",
        "who directed the movies Kevin Bacon acted in",
        ("Ron Howard",),
        qtype="actor_to_movie_to_director",
        topic="Kevin Bacon",
        hops=2,
    )
    gold = GoldSet.from_questions([q])
    assert parse_spec("oracle:p=1").draw(gold.records()[0], "hybgrag").type != "extra_entity"  # not by default
    m = build_oracle("oracle:p=1,types=extra_entity", gold)
    schema = open_kb(tiny_kb).graph.schema()
    first = R.router_first_messages(q.question, schema, [])
    wrong, _ = R.route(m, first, "function_calling")
    assert [e.name for e in wrong.entities][0] == "Kevin Bacon" and len(wrong.entities) == 2
    later = R.router_reflect_messages(first, wrong.model_dump(), render_feedback([("no_intersection", [])]), q.question)
    fixed, _ = R.route(m, later, "function_calling")
    assert [e.name for e in fixed.entities] == ["Kevin Bacon"]
    [entry] = m.log.entries()
    assert entry["type"] == "extra_entity" and entry["repaired"]


def test_kb_made_commentor_examples_are_labelled_by_construction_and_by_the_kb(tiny_kb):
    from hybridrag.agents.hybgrag.retrieval import hybrid_retrieve, link_entity
    from hybridrag.agents.hybgrag.shots import commentor_shots
    from hybridrag.kb.base import open_kb

    kb = open_kb(tiny_kb)
    shots = commentor_shots(kb, 12)
    kinds = {e["error_type"] for e in shots}
    assert {"incorrect_retrieval_module", "no_entity", "incorrect_entity_relation"} <= kinds <= set(ERROR_TYPES)
    relations = set(kb.graph.schema().relation_types)
    for e in shots:
        assert set(e["relations"]) <= relations and set(e["wrong_relations"]) <= set(e["relations"])
        if e["error_type"] == "no_entity":
            assert e["entities"] == []
        if e["error_type"] == "incorrect_retrieval_module":
            assert e["module"] == "text"
        if e["error_type"] in ("no_intersection", "incorrect_intersection"):
            ids = [link_entity(kb, x["name"], x["type"]).id for x in e["entities"]]
            res = hybrid_retrieve(kb, e["question"], ids, e["relations"], 1, 5)
            assert bool(res.intersection) == (e["error_type"] == "incorrect_intersection")


@pytest.mark.parametrize("etype", ["wrong_entity", "wrong_relation", "wrong_module", "missing_entity"])
def test_llm_commentor_feedback_names_the_error_so_the_stand_in_repairs_it(tiny_kb, etype):
    from hybridrag.agents.llm.models import forget_model, register_model
    from hybridrag.evals.datasets import Question
    from hybridrag.evals.oracle import GoldSet, build_oracle

    q = Question("big", "who directed Big", ("Penny Marshall",), qtype="movie_to_director", topic="Big", hops=1)
    spec = f"oracle:p=1,types={etype}"
    m = build_oracle(spec, GoldSet.from_questions([q]))
    register_model(spec, m)
    try:
        out = graph.invoke({"question": q.question}, context=HybGRAGContext(kb=tiny_kb, llm=spec))
    finally:
        forget_model(spec)
    [entry] = m.log.entries()
    assert entry["applied"] and entry["repaired"] and entry["repaired_at"] == 1
    assert comments(out)[0]["source"] == "llm"
    assert out["ranked"][0]["name"] == "Penny Marshall"
