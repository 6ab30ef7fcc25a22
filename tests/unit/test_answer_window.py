"""What HybGRAG's and MoR's answerers read (QA mode): a character budget of references, best first,
and MoR keeping an answer that is one side of a choice the question offers (issue 26)."""

from __future__ import annotations

import pytest
from test_hybgrag import YES, act, run

from hybridrag.agents.hybgrag.report import answer_references
from hybridrag.agents.mor.output import offered_choice, references_text
from hybridrag.agents.mor.roles import Answer as MoRAnswer
from hybridrag.agents.mor.roles import qa_answer
from hybridrag.graphs.hybgrag import HybGRAGContext, graph
from hybridrag.graphs.mor import MoRContext
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.prompts.data_block import parse_blocks

LEYSEN = "Johan Leysen (born 19 February 1950) is a Belgian actor."
CLOONEY = "George Timothy Clooney (born May 6, 1961) is an American actor."


def _refs(n: int, size: int = 100) -> list[dict]:
    return [
        {"id": f"p{i}", "name": f"p{i}", "text": f"{i} " + "x" * (size - 1 - len(str(i))), "paths": []}
        for i in range(n)
    ]


def _ranked(n: int, size: int = 100) -> tuple[list[dict], list[dict]]:
    ranked = [{"id": f"e{i}", "name": f"E{i}", "source": "doc"} for i in range(n)]
    evidence = [{"id": f"e{i}", "text": "y" * size, "path": None} for i in range(n)]
    return ranked, evidence


def test_a_question_offering_x_or_y_lets_either_side_be_the_answer():
    assert offered_choice("Johan Leysen", "Who was born first, Johan Leysen or George Clooney?")
    assert offered_choice("George Clooney", "Who was born first, Johan Leysen or George Clooney?")
    assert offered_choice("Democratic", "Are Philip Cortez and Julian Castro democratic or republican?")
    assert offered_choice("republican", "Are Philip Cortez and Julian Castro democratic or republican?")
    q = 'What form is he famous for writing in, musical, such as "A Chorus Line", or epic verse like "Inferno"?'
    assert offered_choice("musical", q)


def test_a_name_of_the_question_that_is_no_side_of_a_choice_is_not_one():
    q = "Which son of Rick Barry was born first, Brent Robert Barry or Drew William Barry?"
    assert offered_choice("Brent Robert Barry", q) and not offered_choice("Rick Barry", q)
    assert not offered_choice("Julian Castro", "Are Philip Cortez and Julian Castro democratic or republican?")
    assert not offered_choice("Acme", "who founded Acme")  # no choice offered
    assert not offered_choice("", "X or Y?") and not offered_choice("for", "what is Acme famous for")


def test_hybgrag_answerer_reads_references_until_the_budget():
    refs = _refs(20)  # twenty short passages (AdvHotpotQA's are ~150 characters): all fit 4000
    assert answer_references(refs, 4000) == refs
    assert [r["id"] for r in answer_references(refs, 250)] == ["p0", "p1"]
    assert [r["id"] for r in answer_references(_refs(3, 5000), 10)] == ["p0"]  # the first always


def test_mor_answerer_reads_entities_until_the_budget():
    ranked, evidence = _ranked(12)
    assert len(parse_blocks(references_text(ranked, evidence))) == 12  # not only the top five
    assert [b["fields"][0][1] for b in parse_blocks(references_text(ranked, evidence, 250))] == ["E0", "E1"]
    assert len(parse_blocks(references_text(*_ranked(3, 900), 10))) == 1


def test_mor_keeps_a_chosen_side_and_refuses_the_questions_own_entity_otherwise(fake_llm):
    top = {
        "ranked": [{"id": n, "name": n, "source": "doc"} for n in ("Johan Leysen", "George Clooney")],
        "evidence": [
            {"id": "Johan Leysen", "text": LEYSEN, "path": None},
            {"id": "George Clooney", "text": CLOONEY, "path": None},
        ],
        "answer": "Belgian",
    }
    model = fake_llm(MoRAnswer(reasoning="1950 is before 1961.", answer="Johan Leysen"))
    question = "Who was born first, Johan Leysen or George Clooney?"
    text, decision, _ = qa_answer(model, question, top, ["Johan Leysen"], "json_schema")
    assert (text, decision) == ("Johan Leysen", "answered")
    model.script.append(MoRAnswer(reasoning="He is named.", answer="Johan Leysen"))
    text, decision, _ = qa_answer(model, "Which Belgian actor was born in 1950?", top, ["Johan Leysen"], "json_schema")
    assert text == "Belgian" and decision == "the reply names the question's own entity: top entity"


def test_the_budget_setting_reaches_the_hybgrag_answerer(tiny_kb, fake_llm):
    from hybridrag.agents.hybgrag.roles import Answer

    model = fake_llm(act(), YES, Answer(reasoning="from the paths", answer="Big"))
    run(tiny_kb, answer=True)
    assert len(parse_blocks(str(model.calls[-1]["messages"][-1].content))) == 3  # the three films
    model = fake_llm(act(), YES, Answer(reasoning="from the paths", answer="Big"))
    run(tiny_kb, answer=True, answer_chars=1)
    assert len(parse_blocks(str(model.calls[-1]["messages"][-1].content))) == 1


@pytest.fixture(scope="module")
def documents_kb(tmp_path_factory) -> str:
    """Two text documents ingested without extraction (a KB built from documents: passages only)."""
    from hybridrag.agents.extraction import ingest_documents

    src = tmp_path_factory.mktemp("window-docs")
    (src / "ada.txt").write_text("Ada Lovelace worked with Charles Babbage on the Analytical Engine.\n")
    (src / "grace.txt").write_text("Grace Hopper developed the first compiler.\n")
    kb = tmp_path_factory.mktemp("window-kb") / "kb"
    ingest_documents(kb, [src], progress=False)
    return str(kb)


@pytest.mark.parametrize("context", [HybGRAGContext, MoRContext])
def test_a_documents_kb_is_answered_in_qa_mode_unless_the_model_is_small(documents_kb, tiny_kb, context):
    docs, graph_kb = resolve_kb(context(kb=documents_kb)), resolve_kb(context(kb=tiny_kb))
    assert context(kb=documents_kb, llm="fake:test").qa_mode(docs)
    assert not context(kb=documents_kb, llm="local:smollm2").qa_mode(docs)  # the passage span rule answers
    assert not context(kb=documents_kb, llm="fake:test", answer_documents=False).qa_mode(docs)
    assert not context(kb=tiny_kb, llm="fake:test").qa_mode(graph_kb)  # a KB of triples keeps `answer`
    assert context(kb=tiny_kb, llm="local:smollm2", answer=True).qa_mode(graph_kb)


def test_hybgrag_answers_a_documents_kb_without_being_asked(documents_kb, fake_llm):
    from hybridrag.agents.hybgrag.roles import Answer

    fake_llm(
        act("text", [("Charles Babbage", "person")], ()),
        YES,
        Answer(reasoning="She worked with him.", answer="Ada Lovelace"),
    )
    out = graph.invoke(
        {"question": "who worked with Charles Babbage"}, context=HybGRAGContext(kb=documents_kb, llm="fake:test")
    )
    assert out["answer"] == "Ada Lovelace"
    assert [s["decision"] for s in out["trace"] if s["node"] == "generate_answer"] == ["answered"]


def test_a_misnumbered_chunk_id_is_no_answer(fake_llm):
    from hybridrag.agents.hybgrag.report import reply_or_first

    refs = [{"id": "Leysen_1a.txt#0", "name": "Leysen_1a.txt#0", "kind": "passage", "text": LEYSEN, "paths": []}]
    question = "Which Belgian actor was born in 1950?"
    assert reply_or_first(question, "Leysen_1a.txt#1", refs, set()) != "Leysen_1a.txt#1"  # SmolLM2 wrote #1
    assert reply_or_first(question, "Johan Leysen", refs, set()) == "Johan Leysen"
    top = {"ranked": [{**refs[0], "source": "doc"}], "evidence": [{**refs[0], "path": None}], "answer": "Johan Leysen"}
    model = fake_llm(MoRAnswer(reasoning="The first block.", answer="Leysen_1a.txt#1"))
    text, decision, _ = qa_answer(model, question, top, [], "json_schema")
    assert text == "Johan Leysen" and decision == "the reply names a passage by its id: the passages' span"
