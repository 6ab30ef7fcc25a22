"""Free wording (issue 26 item 8): fusion's relation lexicon, typo'd names, and the held-out paraphrase set."""

import json
import re

import pytest

from hybridrag.evals.sets import PARAPHRASES, PARAPHRASES_TEST, resolve_dataset
from hybridrag.graphs import context_for, get_graph
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.tools.lexicon import asked_text, cue_bonus, cues_of, topics_only
from hybridrag.tools.names import close_spellings


@pytest.fixture(scope="module")
def ask():
    graph = get_graph("fusion")
    return lambda question: graph.invoke({"question": question}, context=context_for("fusion"))


def test_everyday_words_ask_for_the_relation_their_label_never_spells(ask):
    assert ask("who made forrest gump")["answer"] == "Robert Zemeckis"
    out = ask("Tell me the cast of Forrest Gump")
    sample = resolve_kb(context_for("fusion"))
    actors = {t.tail for t in sample.graph.neighbors(["Forrest Gump"], ["starred_actors"])}
    assert out["ranked"][0]["id"] in actors and out["answer"] in actors  # not the director, who wins by Dice alone


def test_a_name_written_with_two_letters_swapped_is_linked_to_the_entity(ask):
    kb = resolve_kb(context_for("fusion"))
    assert close_spellings(kb, "who made Forrset Gump") == [(9, 21, ["Forrest Gump"])]
    assert close_spellings(kb, "who directed Forrest Gump") == []  # written exactly: no typo
    assert ask("who made Forrset Gump")["answer"] == "Robert Zemeckis"


def test_the_lexicon_reads_the_question_without_the_seed_name():
    assert {"made", "director"} <= cues_of("directed_by") and "cast" in cues_of("starred_actors")
    assert cues_of("has_imdb_votes") >= {"popular", "famous"} and not cues_of("has")
    asked = asked_text("what language is Children's Island in", "Children's Island")
    assert "is in" not in asked and cue_bonus(asked, "in_language") > cue_bonus(asked, "starred_actors") == 0
    assert cue_bonus(asked_text("how good is Good Time Max rated", "Good Time Max"), "has_imdb_rating") > 0
    assert cue_bonus(asked_text("who directed Good Time Max", "Good Time Max"), "has_imdb_rating") == 0


def test_a_cue_word_the_kb_also_names_is_no_topic_beside_a_real_one():
    labels = ("has_imdb_rating", "starred_actors", "rating")
    assert topics_only({"The Lookout": "The Lookout", "good": "good"}, labels) == ["The Lookout"]
    assert topics_only({"good": "good"}, labels) == ["good"]  # the only name stays


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_the_held_out_set_shares_no_question_and_no_wording_with_the_tuned_set():
    from benchmarks.smollm.bank import _plain, bank_lines
    from scripts.make_paraphrases import HELD_OUT, ONE_HOP

    tuned, held = _rows(PARAPHRASES), _rows(PARAPHRASES_TEST)
    assert len(held) >= 60 and {r["hops"] for r in held} == {1}
    assert not {r["original"] for r in tuned} & {r["original"] for r in held}
    assert not {_plain(r["original"]) for r in held} & {_plain(line) for line in bank_lines(1)}
    for qtype, wordings in HELD_OUT.items():
        assert not set(wordings) & set(ONE_HOP[qtype])
    patterns = [re.escape(w).replace(re.escape("{x}"), ".+") for ws in HELD_OUT.values() for w in ws]
    assert all(any(re.fullmatch(p, r["question"]) for p in patterns) for r in held)
    same = resolve_dataset("metaqa-paraphrase-test:original", build_kb=False).questions
    assert [q.id for q in same] == [r["id"] for r in held] and "[" not in same[0].question
