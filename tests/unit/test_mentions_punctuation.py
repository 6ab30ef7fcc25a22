"""KB names with punctuation are mentions: ``tools.retrieval.mentions_in`` matches names as written."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hybridrag.kb.build import assemble
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Triple
from hybridrag.tools.retrieval import mention_spans, mentions_in

TRIPLES = [
    "The World, the Flesh and the Devil|directed_by|Ranald MacDougall",
    "Hello, Dolly!|directed_by|Gene Kelly",
    "Hello|directed_by|Nobody Special",
    "Dolly|directed_by|Nobody Special",
    "Who's Afraid of Virginia Woolf?|directed_by|Mike Nichols",
    "Airplane II: The Sequel|directed_by|Ken Finkleman",
    "(500) Days of Summer|directed_by|Marc Webb",
    "Mr. Smith Goes to Washington|directed_by|Frank Capra",
    "Sammy Davis Jr.|starred_in|Ocean's 11",
    "Railroaded!|directed_by|Anthony Mann",
    "Railroaded|directed_by|Someone Else",
    "Heat|directed_by|Michael Mann",
    "The Devil|directed_by|Nobody Special",
    "spider man|directed_by|Sam Raimi",
]


@pytest.fixture(scope="module")
def kb():
    store = InMemoryGraphStore(*assemble([Triple(*line.split("|")) for line in TRIPLES], {}))
    return SimpleNamespace(graph=store)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("who directed The World, the Flesh and the Devil", ["The World, the Flesh and the Devil"]),
        ("who directed hello, dolly!", ["Hello, Dolly!"]),
        ("Hello, Dolly!, a musical, was directed by Gene Kelly.", ["Hello, Dolly!", "Gene Kelly"]),
        ("who directed Who's Afraid of Virginia Woolf?", ["Who's Afraid of Virginia Woolf?"]),
        ("who directed Airplane II: The Sequel", ["Airplane II: The Sequel"]),
        ("who directed (500) Days of Summer", ["(500) Days of Summer"]),
        (
            "what films did Frank Capra direct besides Mr. Smith Goes to Washington?",
            ["Mr. Smith Goes to Washington", "Frank Capra"],
        ),
        ("Sammy Davis Jr. starred in Ocean's 11.", ["Sammy Davis Jr.", "Ocean's 11"]),
        ("the film Railroaded! was directed by who", ["Railroaded!"]),
        ("who directed Railroaded?", ["Railroaded"]),
        ("who directed 'Heat'", ["Heat"]),
        ("who directed\nHello,   Dolly!", ["Hello, Dolly!"]),
    ],
)
def test_names_with_punctuation_are_found_whole(kb, text, expected):
    assert mentions_in(kb, text) == expected


def test_a_name_inside_a_longer_punctuated_one_is_not_a_mention(kb):
    found = mentions_in(kb, "who directed The World, the Flesh and the Devil and Hello, Dolly!")
    assert found == ["The World, the Flesh and the Devil", "Hello, Dolly!"]
    assert not {"The Devil", "Hello", "Dolly"} & set(found)


def test_word_level_mentions_keep_working(kb):
    assert mentions_in(kb, "who directed heat and spider-man") == ["spider man", "Heat"]
    assert mentions_in(kb, "Heat, directed by Michael Mann.") == ["Michael Mann", "Heat"]
    assert mentions_in(kb, "nothing the KB knows") == []
    assert mentions_in(kb, "") == []


def test_spans_give_the_form_as_written_and_where_it_starts(kb):
    text = "was hello, dolly! directed by Gene Kelly?"
    assert sorted(mention_spans(kb, text)) == [
        (4, "hello, dolly!", ["Hello, Dolly!"]),
        (30, "Gene Kelly", ["Gene Kelly"]),
    ]
