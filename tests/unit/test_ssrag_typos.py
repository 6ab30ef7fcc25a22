"""SSRAG on free wording: names written with a typo or in lower case (issue 26)."""

from __future__ import annotations

import pytest

from hybridrag.agents.ssrag import augment as aug
from hybridrag.agents.ssrag.typos import one_slip, plain_words, respelled, spelled, written_close
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.graphs.ssrag import SSRAGContext, graph


def test_one_slip_is_a_swap_a_drop_or_an_addition_in_a_long_word():
    assert one_slip("Boone", "Bonoe") and one_slip("Carballo", "Cabrallo")  # two neighbours swapped
    assert one_slip("Minutes", "Minuets") and one_slip("Walbrook", "walbrook")
    assert one_slip("Forrest", "Forest") and one_slip("Forest", "Forrest")  # one letter dropped or added
    assert not one_slip("Boone", "Bnooe")  # two letters apart
    assert not one_slip("Tom", "Tmo")  # too short to read a typo into
    assert not one_slip("Hanks", "Banks")  # another letter is another name


def test_a_name_is_written_in_the_question_up_to_one_slip_per_long_word():
    assert written_close("who acted in movies written by Josh Bonoe", "Josh Boone")
    assert written_close("films by director burt reynolds", "Burt Reynolds")
    assert not written_close("who acted in movies written by Josh Bonoe", "Josh Brolin")
    assert not written_close("who acted in movies written by Jsoh Boone", "Josh Boone")  # 'Josh' is too short


def test_words_of_the_sentence_are_no_names_beside_a_name():
    question = "who made the films Anton Wlabrook was in"
    assert plain_words(question, ["Made", "Anton Walbrook"]) == ["Made"]
    assert plain_words("list films by the writer of High Tension", ["High Tension", "writer"]) == ["writer"]
    assert plain_words("movies with the same actors as Short Cicruit", ["Short", "Short Circuit"]) == ["Short"]
    assert plain_words("who starred in Made", ["Made"]) == []
    assert plain_words("films by burt reynolds", ["Burt Reynolds"]) == []  # two words: a name in lower case
    assert plain_words("which films are about reunion or film", ["reunion", "film"]) == []  # never all of them
    assert plain_words("list the other movies of the director of targets", ["The Other", "Targets"]) == []


@pytest.fixture
def kb(tiny_kb):
    return resolve_kb(SSRAGContext(kb=tiny_kb))


def test_a_typo_span_maps_to_the_kb_spelling_and_a_copied_typo_still_links(kb):
    spans = spelled(kb, "which films did Tom Hnaks act in")
    assert spans == {"Tom Hnaks": "Tom Hanks"}
    assert respelled("tom hnaks", spans) == "Tom Hanks" and respelled("Kevin Bacon", spans) == "Kevin Bacon"
    assert spelled(kb, "which films have tags giant wroms") == {"giant wroms": "giant worms"}
    long = "what genres and release years and languages are the movies starring Tom Hnaks"
    assert spelled(kb, long) == {"Tom Hnaks": "Tom Hanks"}  # found though the whole question's lookups run out
    assert spelled(kb, "which movies are like tremros") == {}  # a lone lower-case word: another word too often
    linked = aug.canonicalise(kb, [{"name": "Tom Hnaks", "type": "person"}], spans)
    assert linked[0]["id"] and linked[0]["name"] == "Tom Hanks" and "Tom Hnaks" in linked[0]["surfaces"]


def test_the_extractor_is_shown_the_kb_spelling_and_its_kb_spelled_name_is_kept(kb, fake_llm):
    model = fake_llm('{"entities": [{"name": "Tom Hanks", "type": "person"}]}')
    question = "which films did Tom Hnaks act in"
    found, _, note = aug.extract_entities(model, kb, question, [question], "json_mode", spellings=spelled(kb, question))
    assert found == [{"name": "Tom Hanks", "type": "person"}] and note is None
    shown = "\n".join(str(m.content) for m in model.calls[0]["messages"])
    assert "Tom Hanks" in shown  # the prompt gave the KB's spelling


def test_a_small_model_run_takes_the_typo_corrected_name_without_a_call(tiny_kb, tiny_llama, monkeypatch):
    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    tiny_llama()  # any call would fail: the script is empty
    ctx = SSRAGContext(kb=tiny_kb, llm="local:tiny", examples="none")
    out = graph.invoke({"question": "which movies did Tom Hnaks act in"}, context=ctx)
    extract = next(s for s in out["trace"] if s["node"] == "extract_entities")
    assert extract["decision"] == "Tom Hanks" and extract["linked"] and out["usage"].get("llm_calls", 0) == 0
