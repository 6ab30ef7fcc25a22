"""The usual wording of a ``<participle> by`` step, so a one-hop question finds one-hop examples."""

from hybridrag.agents.shots.synth import write_question
from hybridrag.agents.shots.wording import natural


def test_a_participle_by_relation_walked_from_its_head_is_asked_the_usual_way():
    assert natural("<E>", "directed_by", "out", "person") == "who directed <E>"
    assert natural("<E>", "written_by", "out", "person") == "who wrote <E>"
    assert natural("<E>", "made_by", "out", "company") == "what company made <E>"


def test_other_steps_have_no_usual_wording():
    assert natural("<E>", "directed_by", "in", "movie") is None  # "what movie is directed by <E>" reads well
    assert natural("<E>", "has_genre", "out", "genre") is None
    assert natural("<E>", "stood_by", "out", "person") is None  # no past tense known: not guessed


def test_style_two_words_the_last_step_and_is_absent_where_there_is_no_wording():
    one = ((("directed_by", "out"), "person"),)
    assert write_question("Heat", one, style=2) == ("who directed Heat", "who directed <E>")
    two = ((("written_by", "in"), "movie"), (("directed_by", "out"), "person"))
    assert write_question("Gary Ross", two, style=2)[1] == "who directed the movie written by <E>"
    assert write_question("Heat", ((("has_genre", "out"), "genre"),), style=2) is None
    back = ((("directed_by", "out"), "person"), (("directed_by", "in"), "movie"))
    assert write_question("Heat", back, style=2) is None  # a shared-entity pair keeps its own wording


def test_a_question_worded_as_an_example_is_shown_only_examples_of_its_path(tiny_kb):
    from hybridrag.agents.shots import bank_for
    from hybridrag.kb.base import open_kb

    bank = bank_for(open_kb(tiny_kb))
    shown = bank.nearest("who directed Tremors", 4)
    assert shown[0].masked == "who directed <E>" and len(shown) >= 3
    assert {(e.relations, e.directions) for e in shown} == {(("directed_by",), ("out",))}
    free = bank.nearest("tell me the people behind Tremors", 6)  # no example is worded so: look-alike paths stay
    assert len({e.relations for e in free}) > 1
