"""Entity mentions a question names: titles with lower-case words inside are one mention."""

from __future__ import annotations

import pytest

from hybridrag.tools.retrieval import check_mentions, explicit_mentions


@pytest.mark.parametrize(
    "question, title",
    [
        ("who directed Miracle on 34th Street", "Miracle on 34th Street"),
        ("who wrote A View to a Kill", "A View to a Kill"),
        ("who starred in Sleeping with the Enemy?", "Sleeping with the Enemy"),
        ("when was He Said, She Said released", "He Said, She Said"),
    ],
)
def test_titles_with_lower_case_words_are_mentions(question, title):
    assert title in explicit_mentions(question)


def test_plain_mentions_are_unchanged():
    assert explicit_mentions("who directed Forrest Gump") == ["Forrest Gump"]
    assert explicit_mentions("What movies did Tom Hanks star in") == ["Tom Hanks"]
    assert explicit_mentions('who directed [Big] and "Apollo 13"') == ["Big", "Apollo 13"]


def test_a_title_with_lower_case_words_passes_the_kb_check(tiny_kb):
    from hybridrag.kb.base import open_kb

    check_mentions(open_kb(tiny_kb), "who starred in A League of Their Own")
    with pytest.raises(Exception, match="unknown entity"):
        check_mentions(open_kb(tiny_kb), "who directed Zzyzx Road of Nowhere")


def test_a_name_only_the_passages_write_is_not_refused_and_a_refusal_offers_close_names(tmp_path):
    from hybridrag.agents.extraction import ingest_documents
    from hybridrag.kb.base import open_kb

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ada.txt").write_text(
        "Ada Lovelace was an English mathematician. She worked with Charles Babbage on the Analytical Engine.\n"
    )
    ingest_documents(tmp_path / "kb", [docs], progress=False)
    kb = open_kb(tmp_path / "kb")
    check_mentions(kb, "who worked with Charles Babbage")  # only the text knows him: the text side answers
    with pytest.raises(Exception, match="unknown entity: 'Zzyzx Quorble'"):
        check_mentions(kb, "who worked with Zzyzx Quorble")


def test_a_refusal_names_the_closest_kb_names(tiny_kb):
    from hybridrag.kb.base import open_kb

    with pytest.raises(Exception, match="closest names in it: "):
        check_mentions(open_kb(tiny_kb), "who directed A Leage of Their Owwn")
