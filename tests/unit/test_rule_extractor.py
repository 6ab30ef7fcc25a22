"""The offline extractor's sentence patterns (agents/extraction/patterns.py) on single sentences."""

from __future__ import annotations

import pytest

from hybridrag.agents.extraction.patterns import pattern_extraction
from hybridrag.agents.extraction.spans import spans
from hybridrag.kb.documents import Chunk
from hybridrag.kb.extract import clean
from hybridrag.kb.extract_schema import GraphSchema


def triples(text: str) -> set[tuple[str, str, str]]:
    """The triples of a text as clean() keeps them (names as written, relations as stored)."""
    found = pattern_extraction(text)
    return {(r.head, r.relation, r.tail) for r in found.relations}


def types(text: str) -> dict[str, str]:
    return {e.name: e.type for e in pattern_extraction(text).entities if e.type}


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        (
            "Zaheer Khan (born 7 October 1978) is a former Indian cricketer.",
            ("Zaheer Khan", "born_on", "7 October 1978"),
        ),
        (
            "Deeyah Khan (born 7 August 1977 in Oslo, Norway), is a Norwegian film director.",
            ("Deeyah Khan", "born_in", "Oslo"),
        ),
        (
            "Richard Allen Street (October 5, 1942 – February 27, 2013) was an American singer.",
            ("Richard Allen Street", "died_on", "February 27, 2013"),
        ),
        ("Norwood is a suburb of Adelaide, about 4 km east of the city centre.", ("Norwood", "suburb of", "Adelaide")),
        (
            "Nightbook is an album created by Italian composer Ludovico Einaudi.",
            ("Nightbook", "album created by composer", "Ludovico Einaudi"),
        ),
        ("Nightbook is an album by Ludovico Einaudi and released in 2009.", ("Nightbook", "released in", "2009")),
        ("Echo met Narcissus and fell in love with him.", ("Echo", "met", "Narcissus")),
        (
            "The Blue Bird Corporation is a bus maker headquartered in Fort Valley, Georgia.",
            ("Fort Valley", "located_in", "Georgia"),
        ),
        (
            "Universal Music Group, a subsidiary of Vivendi, is a label.",
            ("Universal Music Group", "subsidiary of", "Vivendi"),
        ),
        ("Corey Feldman is an American actor and singer.", ("Corey Feldman", "nationality", "American")),
        (
            "Whispering Corridors is a South Korean horror film series.",
            ("Whispering Corridors", "nationality", "South Korean"),
        ),
        ('"Not About Angels" is a song by English musician Birdy.', ("Not About Angels", "song by musician", "Birdy")),
    ],
)
def test_a_sentence_pattern_gives_its_fact(sentence, expected):
    assert expected in triples(sentence)


def test_he_she_it_and_its_stand_for_the_subject_of_the_first_sentence():
    text = (
        "Interscope Records is an American record label. An imprint of Interscope Geffen A&M Records, "
        "its parent company is Universal Music Group. It was founded in 1990."
    )
    found = triples(text)
    assert ("Interscope Records", "imprint of", "Interscope Geffen A&M Records") in found
    assert ("Interscope Records", "parent company", "Universal Music Group") in found
    assert ("Interscope Records", "founded in", "1990") in found
    assert ("Ada Lovelace", "worked with", "Charles Babbage") in triples(
        "Ada Lovelace was an English mathematician. She worked with Charles Babbage on the Analytical Engine."
    )


def test_the_copula_types_its_subject_by_the_last_noun_of_the_description():
    assert types("Zaheer Khan is a former Indian cricketer who played for India.")["Zaheer Khan"] == "cricketer"
    assert types("Voodoo is an 1995 American horror film directed by Rene Eram.")["Voodoo"] == "film"
    assert "WLLZ-LP" not in types("WLLZ-LP is the low-powered MyNetworkTV station.")  # a name in it: no type


def test_an_alias_in_parentheses_is_kept_on_the_entity():
    found = pattern_extraction("Port Jefferson (informally known as Port Jeff) is a village in the Town of Brookhaven.")
    aliases = {e.name: e.aliases for e in found.entities}
    assert aliases["Port Jefferson"] == ["Port Jeff"]
    assert ("Port Jefferson", "village in", "Town of Brookhaven") in triples(
        "Port Jefferson (informally known as Port Jeff) is a village in the Town of Brookhaven."
    )


@pytest.mark.parametrize(
    "sentence",
    [
        "The game was released via Steam on October 27, 2015.",  # no subject name: a date has no head
        "He sang with the choir in the town from 1971 to 1993.",  # no topic, dates after bare prepositions
        "Notable past performers include the band and the singer.",  # no names at all
        "WLLZ-LP is the low-powered MyNetworkTV station.",  # a description, not a relation
        "Bob Dylan, Black Sabbath and Motörhead played there.",  # a list is not a relation
    ],
)
def test_no_fact_where_the_sentence_states_none(sentence):
    assert triples(sentence) == set()


def test_names_skip_function_words_and_nationality_words_and_keep_years_with_their_event():
    found = [
        (s.text, s.kind) for s in spans("In Greek mythology, the 2014 Winter Olympics were held in Sochi in May 2014.")
    ]
    assert found == [("2014 Winter Olympics", "name"), ("Sochi", "name"), ("May 2014", "date")]
    assert [s.text for s in spans('Sir Anthony "Tony" Robinson met Śivarāma Swami.')] == [
        'Sir Anthony "Tony" Robinson',
        "Śivarāma Swami",
    ]


def test_a_date_after_prepositions_only_is_no_fact():
    assert triples("Ukraine competed in Sochi, from 7 to 23 February 2014.") == {("Ukraine", "competed in", "Sochi")}


def test_only_names_a_fact_links_become_entities():
    found = pattern_extraction("Ada Lovelace met Charles Babbage. London and Paris are cities.")
    assert {e.name for e in found.entities} == {"Ada Lovelace", "Charles Babbage"}


def test_every_rule_fact_passes_the_chunk_check():
    text = (
        "Oksana Baiul (born November 16, 1977) is a Ukrainian former competitive figure skater. "
        "She is the 1993 World champion. Ukraine competed at the 2014 Winter Olympics in Sochi, Russia."
    )
    found = pattern_extraction(text)
    facts = clean(Chunk("c#0", "c", text), found, GraphSchema())
    assert not facts.dropped and len(facts.triples) == len(found.relations) >= 4


def test_a_sentence_without_anything_gives_nothing():
    assert pattern_extraction("").relations == [] and pattern_extraction("and so on.").entities == []


def test_a_markdown_heading_is_a_line_of_its_own():
    found = triples("# Interscope Records\n\nInterscope Records is a label. Its parent company is Universal Music.")
    assert found == {("Interscope Records", "parent company", "Universal Music")}
