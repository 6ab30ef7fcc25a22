"""Facts read from passages (``agents.fusion.facts``) on a tiny KB where every fact is text only.

The graph holds no triple about Papillon; its passage states them, as MetaQA-hybrid-0 does.
The entities are typed (an entities file), so a sentence's relation can carry its object's type.
"""

import json

import pytest

from hybridrag.agents.fusion.facts import MAX_SENTENCES, sentence_facts, split_sentences
from hybridrag.graphs import context_for, get_graph
from hybridrag.tools.dice import text_facts, tokens

ENTITIES = [
    ("Papillon", "movie"),
    ("English", "language"),
    ("dustin hoffman", "tag"),
    ("Dustin Hoffman", "person"),
    ("Steve McQueen", "person"),
    ("Biography", "genre"),
    ("Franklin J. Schaffner", "person"),
]
TEXT = (
    "Papillon was directed by Franklin J. Schaffner. Papillon is a Biography film. "
    "Papillon is tagged as dustin hoffman. Papillon is in English. Steve McQueen starred in Papillon."
)
TRIPLES = "Amelie|in_language|French\n"  # the graph knows other facts only


@pytest.fixture(scope="module")
def kb_dir(tmp_path_factory):
    from hybridrag.kb.ingest import ingest
    from hybridrag.kb.sample import TYPE_MAP

    root = tmp_path_factory.mktemp("fusion-facts")
    (root / "triples.txt").write_text(TRIPLES, encoding="utf-8")
    (root / "entities.jsonl").write_text(
        "\n".join(json.dumps({"id": n, "name": n, "type": t}) for n, t in ENTITIES), encoding="utf-8"
    )
    (root / "passages.jsonl").write_text(
        json.dumps({"id": "p:Papillon", "entity_id": "Papillon", "text": TEXT}), encoding="utf-8"
    )
    ingest(
        root / "kb",
        [root / "triples.txt"],
        entities=root / "entities.jsonl",
        passages=root / "passages.jsonl",
        type_map=TYPE_MAP,
        progress=False,
    )
    return str(root / "kb")


@pytest.fixture(scope="module")
def kb(kb_dir):
    from hybridrag.graphs.runtime import resolve_kb

    return resolve_kb(context_for("fusion", kb=kb_dir))


QUESTION = "what language is Papillon in"


def test_words_alone_rank_the_tag_sentence_first():
    """Precondition: scored by its remaining words (object included), the tag sentence wins."""
    best = text_facts(tokens(QUESTION), TEXT, {"Papillon": "Papillon"}, "bigram", "Papillon")[0]
    assert best[1] == "Papillon is tagged as dustin hoffman."


def test_the_objects_type_stands_for_the_relation(kb):
    best, *rest = sentence_facts(kb, QUESTION, TEXT, {"Papillon": "Papillon"}, "bigram", "Papillon")
    assert best.sentence == "Papillon is in English."
    assert best.answers == ("English",)
    assert best.subject == "Papillon"
    assert all(f.score < best.score for f in rest)


@pytest.mark.parametrize(
    ("question", "sentence"),
    [
        ("who directed Papillon", "Papillon was directed by Franklin J. Schaffner."),
        ("what genre is Papillon", "Papillon is a Biography film."),
        ("who starred in Papillon", "Steve McQueen starred in Papillon."),
    ],
)
def test_each_relation_is_found_by_its_question(kb, question, sentence):
    assert sentence_facts(kb, question, TEXT, {"Papillon": "Papillon"}, "bigram", "Papillon")[0].sentence == sentence


def test_sentences_are_not_split_inside_a_name():
    assert split_sentences("Glenn Quinn starred in Dr. Giggles. It was directed by Franklin J. Schaffner. US.") == [
        "Glenn Quinn starred in Dr. Giggles.",
        "It was directed by Franklin J. Schaffner.",
        "US.",
    ]


def test_a_bare_name_or_a_text_without_the_subject_states_no_fact(kb):
    assert sentence_facts(kb, QUESTION, "Papillon. Papillon!", {"Papillon": "Papillon"}) == []
    assert sentence_facts(kb, QUESTION, "Amelie is in French.", {"Papillon": "Papillon"}) == []


def test_a_person_subject_answers_with_the_movie(kb):
    fact = sentence_facts(
        kb, "what films did Steve McQueen act in", TEXT, {"Steve McQueen": "Steve McQueen"}, "bigram", "Papillon"
    )[0]
    assert fact.sentence == "Steve McQueen starred in Papillon."
    assert fact.answers == ("Papillon",)


def test_sentences_read_are_bounded(kb):
    text = " ".join(["Papillon is in English."] * (MAX_SENTENCES + 50))
    assert len(sentence_facts(kb, QUESTION, text, {"Papillon": "Papillon"})) == MAX_SENTENCES


def test_fusion_answers_a_text_only_fact_with_its_object(kb_dir):
    out = get_graph("fusion").invoke({"question": QUESTION}, context=context_for("fusion", kb=kb_dir))
    assert out["ranked"][0]["id"] == "p:Papillon"
    assert out["evidence"][0]["path"] == ["Papillon is in English."]
    assert out["answer"] == "English"
