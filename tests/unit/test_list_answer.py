"""List questions return the list (issue 28 item 5): the wording rule and the top score band."""

from __future__ import annotations

import pytest

from hybridrag.graphs import get_graph
from hybridrag.tools.list_answer import asks_for_list, joined, split, top_band


@pytest.mark.parametrize(
    "question",
    [
        "what movies did Tom Hanks star in",
        "which films did Tom Hanks act in",
        "what other movies did Penny Marshall direct",
        "who starred in Forrest Gump",
        "who acted in Big",
        "What genres is Amelie in",
        "what words describe Big",
        "which people wrote Big",
    ],
)
def test_list_questions(question):
    assert asks_for_list(question)


@pytest.mark.parametrize(
    "question",
    [
        "who directed Big",
        "what is the genre of Big",
        "what language is Amelie in",
        "which person wrote Big",
        "what year was Big released",
        "what does Tom Hanks do",
        "when was Forrest Gump released",
        "whose film is Big",
    ],
)
def test_single_questions(question):
    assert not asks_for_list(question)


def test_the_band_keeps_the_answers_that_tie_the_first_and_stops_below_it():
    items = [("Big", 0.9, ""), ("a", 0.5, "A"), ("b", 0.4981, "B"), ("dup", 0.5, "a"), ("c", 0.3, "C"), ("d", 0.5, "D")]
    got = top_band(items, lambda i: i[1], lambda i: i[2], limit=10)
    assert got == ["A", "B"]  # the unanswered item first is skipped, "a" is A again, C is below the band
    assert top_band(items, lambda i: i[1], lambda i: i[2], limit=1) == ["A"]
    assert top_band([], lambda i: 0.0, lambda i: "", limit=3) == []


def test_joined_answers_split_back_and_keep_commas():
    names = ["Crouching Tiger, Hidden Dragon", "Big"]
    assert split(joined(names)) == names and split("Big") == ["Big"]


def test_fusion_answers_a_list_question_with_the_list_and_a_single_question_with_one():
    graph = get_graph("fusion")
    cast = split(graph.invoke({"question": "who starred in Forrest Gump"}, context={"kb": "sample"})["answer"])
    assert sorted(cast) == ["Sally Field", "Tom Hanks"]
    films = split(graph.invoke({"question": "what movies did Tom Hanks star in"}, context={"top_k": 5})["answer"])
    assert len(films) == 5 and "Tom Hanks" not in films  # bounded by top_k
    one = graph.invoke({"question": "who directed Forrest Gump"}, context={"kb": "sample"})["answer"]
    assert one == "Robert Zemeckis"


def test_hybgrag_answers_a_list_question_with_every_reference_reached_along_its_path():
    from hybridrag.agents.hybgrag.report import first_answer

    def ref(name: str, reached: bool) -> dict:
        return {"id": name, "kind": "entity", "name": name, "text": name, "triples": [[["x", "r", name]]] * reached}

    refs = [ref("Tom Hanks", True), ref("Big", True), ref("Apollo 13", True), ref("Amelie", False)]
    own = {"Tom Hanks"}
    assert first_answer("which movies did Tom Hanks act in", refs, own) == "Big; Apollo 13"  # not the text hit
    assert first_answer("who is the director of Big", refs, own) == "Big"  # one asked for: the best reference


def test_mor_answers_a_list_question_with_every_graph_reached_entity():
    from hybridrag.agents.mor.output import answer_of

    ranked = [
        {"id": "Tom Hanks", "name": "Tom Hanks", "source": "kg"},
        {"id": "Big", "name": "Big", "source": "kg"},
        {"id": "Amelie", "name": "Amelie", "source": "doc"},
        {"id": "Apollo 13", "name": "Apollo 13", "source": "kg"},
    ]
    assert answer_of(ranked, "which movies did Tom Hanks act in", ["Tom Hanks"]) == "Big; Apollo 13"
    assert answer_of(ranked, "who directed Tom Hanks", ["Tom Hanks"]) == "Big"
    assert answer_of(ranked[2:3], "which movies did Tom Hanks act in", []) == "Amelie"  # a text look-alike: one


def test_ssrag_answers_a_list_question_with_every_context_its_evidence_supports_the_same_way():
    from hybridrag.agents.ssrag.answering import listed

    def ctx(name: str, facts: list[str], chain: bool = False, kind: str = "entity") -> dict:
        return {"id": name, "kind": kind, "name": name, "path": facts, **({"chain": True} if chain else {})}

    order = [
        ctx("Big", ["Big starred actors Tom Hanks", "Big directed by Penny Marshall"]),
        ctx("Tom Hanks", ["Big starred actors Tom Hanks"]),  # the question's own entity
        ctx("Penny Marshall", ["Big directed by Penny Marshall"]),  # reached, but by another relation
        ctx("Amelie", []),  # a text look-alike: no fact of its own
        ctx("Apollo 13", ["Apollo 13 starred actors Tom Hanks"]),
        ctx("Cast Away", ["Cast Away starred actors Tom Hanks"]),
        ctx("Tom Hanks wrote", ["Tom Hanks starred actors Tom Hanks wrote"]),  # the other side: not the same way
    ]
    own, q = {"Tom Hanks"}, "which movies did Tom Hanks act in"
    assert listed("Big", order, own, {"tom hanks"}, q, 10) == "Big; Apollo 13; Cast Away"
    assert listed("Big", order, own, {"tom hanks"}, q, 2) == "Big; Apollo 13"  # at most top_k
    assert listed("Big", order, own, {"tom hanks"}, "who directed Big", 10) == "Big"  # one asked for
    assert listed("Amelie", order, own, {"tom hanks"}, q, 10) == "Amelie"  # no evidence to extend it
    assert listed("", order, own, {"tom hanks"}, q, 10) == ""
    ends = [ctx("A", [], chain=True), ctx("B", []), ctx("C", [], chain=True)]  # a relation chain's ends
    assert listed("A", ends, set(), set(), "what genres are the films of X in", 10) == "A; C"


def test_ssrag_run_with_a_small_model_answers_a_list_question_with_every_film_and_a_single_one_with_one(
    tiny_kb, tiny_llama, monkeypatch
):
    from hybridrag.graphs.ssrag import SSRAGContext, graph

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    tiny_llama()  # the rules answer: any LLM call would fail (the script is empty)

    def ask(question: str, top_k: int = 20) -> list[str]:
        ctx = SSRAGContext(kb=tiny_kb, llm="local:tiny", examples="none", top_k=top_k)
        return split(graph.invoke({"question": question}, context=ctx)["answer"])

    films = ask("which movies did Tom Hanks act in")
    assert sorted(films) == ["A League of Their Own", "Apollo 13", "Big"]  # the KB's three, not Tom Hanks
    short = ask("which movies did Tom Hanks act in", top_k=2)  # from the top_k contexts, at most top_k
    assert 1 <= len(short) <= 2 and set(short) <= set(films)
    assert len(ask("who directed Apollo 13")) == 1
