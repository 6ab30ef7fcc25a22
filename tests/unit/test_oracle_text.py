"""The perfect-LLM stand-in on questions over documents: it answers from what each prompt shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from hybridrag.agents.hybgrag import roles as HG
from hybridrag.agents.hydrarag import roles as HY
from hybridrag.agents.ssrag import unify as SU
from hybridrag.evals.oracle import GoldSet, OracleChatModel
from hybridrag.evals.oracle.model import GoldLeakError
from hybridrag.evals.oracle.run import ANSWER_SHOWN_FILE, finish
from hybridrag.evals.oracle.text_gold import question_phrases, records_from_file, topics
from hybridrag.prompts.data_block import data_blocks

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "advhotpotqa_3.json"
REAL = "Ukraine competed at the 2014 Winter Olympics in Sochi, Russia, from 7 to 23 February 2014."
PLANTED = "Ukraine competed at the 2010 Winter Olympics in Sochi, moscow, from 7 to 23 February 2010."
SKATER = "Oksana Baiul (born November 16, 1977) is a Ukrainian former competitive figure skater."


@pytest.fixture(scope="module")
def records():
    return records_from_file(FIXTURE)


@pytest.fixture()
def model(records):
    return OracleChatModel(gold=GoldSet(records))


def _prompt(question: str, passages: list[str]) -> list:
    blocks = data_blocks([[("name", f"doc{i}.txt#0"), ("text", p)] for i, p in enumerate(passages)], source="doc")
    return [SystemMessage("Answer from the references."), HumanMessage(f"Question: {question}\nReferences:\n{blocks}")]


def test_records_carry_answer_titles_and_the_paragraph_kinds(records):
    olympics = records[0]
    assert olympics.answers == ("Sochi, Russia",)
    assert olympics.titles == ("Ukraine at the 2014 Winter Olympics", "Oksana Baiul")
    assert len(olympics.supporting) == 2 and len(olympics.planted) == 2 and not olympics.others


def test_the_gold_absent_from_the_prompt_is_not_answered(model, records):
    q = records[0].question
    reply = model.answer(SU.Answer, _prompt(q, [SKATER]))
    assert reply.answer == "I do not know"


def test_the_gold_in_real_text_is_answered(model, records):
    q = records[0].question
    assert model.answer(SU.Answer, _prompt(q, [SKATER, REAL])).answer == "Sochi, Russia"
    assert model.answer(HG.Answer, _prompt(q, [REAL])).answer == "Sochi, Russia"


def test_a_planted_paragraph_does_not_make_the_gold_answerable(model, records):
    q = records[0].question
    planted = records[0].planted[0]
    assert not records[0].real(planted) and records[0].real(records[0].supporting[0])
    doctored = planted + " Its capital is Sochi, Russia."  # a planted paragraph that names the answer too
    assert model.answer(SU.Answer, _prompt(q, [doctored, SKATER])).answer == "I do not know"
    assert model.answer(SU.Answer, _prompt(q, [doctored, REAL])).answer == "Sochi, Russia"


def test_the_answer_check_asks_for_more_and_the_notes_say_what_was_shown(model, records):
    q = records[0].question
    check = model.answer(HY.AnswerCheck, _prompt(q, [SKATER]))
    assert check.sufficient == "no" and check.answer == ""
    assert model.answer(HY.AnswerCheck, _prompt(q, [REAL])).sufficient == "yes"
    assert model.gold.answer_shown == {records[0].id: True}


def test_topics_name_only_titles_the_question_or_prompt_shows(records):
    airline = records[1]  # "... is Hana Hou! published for?": the title Hana Hou! is in the question
    assert topics(airline) == ["Hana Hou!"]
    olympics = records[0]  # names neither supporting title: the question's own capitalised phrases
    assert not set(topics(olympics)) & set(olympics.titles)
    assert "World Champion" in question_phrases(olympics.question)[0] or topics(olympics)


def test_the_router_names_no_title_the_prompt_does_not_show(model, records):
    q = records[0].question
    msgs = [SystemMessage("Route."), HumanMessage(f"Entity types: \nRelation types: (none)\nQuestion: {q}")]
    action = model.answer(HG.RouterAction, msgs)
    assert action.module == "text" and action.relations == []
    assert all(e.name not in records[0].titles and e.type == "entity" for e in action.entities)


def test_the_leak_check_still_guards_text_questions(model, records, monkeypatch):
    from hybridrag.evals.oracle import text_roles

    q = records[0].question
    monkeypatch.setitem(text_roles.TEXT_ROLES, SU.Answer, lambda call: SU.Answer(reasoning="", answer="Sochi, Russia"))
    with pytest.raises(GoldLeakError):
        model.answer(SU.Answer, _prompt(q, [SKATER]))


def test_finish_writes_what_the_answer_prompts_showed(model, records, tmp_path):
    model.answer(SU.Answer, _prompt(records[0].question, [REAL]))
    model.answer(SU.Answer, _prompt(records[1].question, [SKATER]))
    from hybridrag.evals.summary import summarise

    finish(model, summarise([], {"method": "ssrag"}), tmp_path)
    import json

    shown = json.loads((tmp_path / ANSWER_SHOWN_FILE).read_text())
    assert shown == {records[0].id: True, records[1].id: False}


def test_every_role_of_the_four_methods_has_a_text_rule():
    from hybridrag.evals.oracle.model import RULES
    from hybridrag.evals.oracle.text_roles import TEXT_ROLES

    assert set(RULES) <= set(TEXT_ROLES), sorted(s.__qualname__ for s in set(RULES) - set(TEXT_ROLES))


def test_the_path_summary_keeps_the_bearing_paths(model, records):
    q = records[0].question
    blocks = data_blocks([[("", p)] for p in (REAL, "Tokyo → is in → Japan", REAL)])
    reply = model.answer(HY.PathSummary, [HumanMessage(f"Question: {q}\nPaths:\n{blocks}")])
    assert len(reply.paths) == 1 and reply.paths[0].sources == [1, 3]
