"""Relation cues in the bank's example ranking (agents/shots/cues.py) and typo'd names in masking (issue 26)."""

from __future__ import annotations

import numpy as np
import pytest

from hybridrag.agents.shots import SolvedExample, mask_question
from hybridrag.agents.shots.bank import Bank
from hybridrag.agents.shots.cues import agreement, follow_cues, question_cues
from hybridrag.agents.shots.mask import find_mentions

RELATIONS = ("directed_by", "starred_actors", "written_by", "has_genre", "release_year")
TRIPLES = """\
Letters from Berlin|starred_actors|Anton Walbrook
Letters from Berlin|directed_by|Ruth Keller
Letters from Berlin|written_by|Omar Fenwick
Made|directed_by|Jon Favreau
Made|starred_actors|Vince Vaughn
Quiet Harbour|starred_actors|Vince Vaughn
Quiet Harbour|written_by|Ruth Keller
Quiet Harbour|has_genre|Drama
"""
TYPES = {
    "starred_actors": ("movie", "person"),
    "directed_by": ("movie", "person"),
    "written_by": ("movie", "person"),
    "has_genre": ("movie", "genre"),
}


@pytest.fixture(scope="module")
def movie_kb(tmp_path_factory: pytest.TempPathFactory):
    """A tiny movie KB built with the real ingest (local MiniLM embeddings)."""
    from hybridrag.kb.base import open_kb
    from hybridrag.kb.ingest import ingest

    src = tmp_path_factory.mktemp("movies-src") / "triples.txt"
    src.write_text(TRIPLES, encoding="utf-8")
    out = tmp_path_factory.mktemp("movies-kb") / "kb"
    ingest(out, [src], type_map=dict(TYPES), progress=False)
    return open_kb(out)


def _example(question: str, masked: str, relations: tuple[str, ...], directions: tuple[str, ...]) -> SolvedExample:
    return SolvedExample(question, masked, ("x",), ("person",), relations, "person", ("y",), "user", {}, directions)


def test_cues_are_read_in_english_word_order_around_the_entity():
    asked = question_cues("who wrote the films <E> was in", RELATIONS)
    assert (asked.first, asked.last, asked.hops) == ({"starred_actors"}, {"written_by"}, 2)
    reverse = question_cues("who acted in the films written by <E>", RELATIONS)
    assert (reverse.first, reverse.last) == ({"written_by"}, {"starred_actors"})
    trailing = question_cues("the movies directed by <E> starred who", RELATIONS)
    assert (trailing.first, trailing.last) == ({"directed_by"}, {"starred_actors"})
    made = question_cues("who made movies starring <E>", RELATIONS)
    assert (made.first, made.last) == ({"starred_actors"}, {"directed_by"})
    one = question_cues("what kind of film is <E>", RELATIONS)
    assert (one.first, one.last, one.hops) == ({"has_genre"}, {"has_genre"}, 1)
    assert question_cues("what does <E> mean", RELATIONS).cues == ()


def test_sharing_and_agent_words_ask_for_one_relation_walked_twice():
    worked = question_cues("who worked with <E> as a director", RELATIONS)
    assert worked.twice and worked.hops == 2 and worked.first == {"directed_by"}
    agent = question_cues("when were films by the writer of <E> released", RELATIONS)
    assert agent.twice and agent.hops == 3 and agent.first == {"written_by"} and agent.last == {"release_year"}
    assert not question_cues("what genres are films by director <E>", RELATIONS).twice
    twice = _example("q", "q", ("written_by", "written_by", "release_year"), ("out", "in", "out"))
    once = _example("q", "q", ("release_year",), ("out",))
    assert agreement(agent, twice) > agreement(agent, once)


def test_the_asked_path_outranks_its_reverse_only_with_cues(movie_kb):
    reverse = _example(
        "who acted in the films written by Omar Fenwick",
        "who acted in the films written by <E>",
        ("written_by", "starred_actors"),
        ("in", "out"),
    )
    asked = _example(
        "which people penned the movies that feature Vince Vaughn",
        "which people penned the movies that feature <E>",
        ("starred_actors", "written_by"),
        ("in", "out"),
    )
    bank = Bank(movie_kb, [reverse, asked])
    question = "who wrote the films Anton Walbrook was in"
    assert bank.nearest(question, 1, cues=False) == [reverse]  # the embedding alone reads the words, not their order
    assert bank.nearest(question, 1) == [asked]
    assert bank.nearest(question, 2) == [asked, reverse]


def test_follow_cues_leaves_a_question_without_cues_and_unranked_examples_alone():
    examples = [_example("q", f"m{i}", ("written_by",), ("in",)) for i in range(3)]
    scores = np.array([0.5, -np.inf, 0.2])
    assert follow_cues("what does <E> mean", RELATIONS, examples, scores) is scores
    moved = follow_cues("what did <E> write", RELATIONS, examples, scores)
    assert moved[0] > 0.5 and moved[2] > 0.2 and moved[1] == -np.inf


def test_a_name_written_with_one_typo_is_masked(movie_kb):
    question = "who made the films Anton Wlabrook was in"
    mentions = find_mentions(question, movie_kb)
    assert [(m.text, [e.name for e in m.entities]) for m in mentions] == [("Anton Wlabrook", ["Anton Walbrook"])]
    assert mask_question(question, movie_kb) == "who made the films <E> was in"  # not the film "Made"
    assert mask_question("who directed Quiet Hrabour", movie_kb) == "who directed <E>"
    assert mask_question("who made Made", movie_kb) == "who made <E>"  # an exact name needs no typo pass
    assert mask_question("who starred in Letters from Berlni", movie_kb) == "who starred in <E>"
