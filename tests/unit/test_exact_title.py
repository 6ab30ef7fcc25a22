"""Entity linking prefers the exact title: "who directed Big" is about "Big", not "The Big Picture" (issue 28, 6)."""

from __future__ import annotations

from unittest import mock

import pytest
from kb_fixtures import movie_kb

from hybridrag.graphs import context_for, get_graph
from hybridrag.kb.base import open_kb
from hybridrag.tools.names import prefer_exact

TRIPLES = """\
Big|directed_by|Penny Marshall
Big|starred_actors|Tom Hanks
The Big Picture|directed_by|Christopher Guest
The Big Picture|starred_actors|Kevin Bacon
Big Fish|directed_by|Tim Burton
Big Fish|starred_actors|Ewan McGregor
The Big Lebowski|directed_by|Joel Coen
Manhattan|directed_by|Woody Allen
Two Men in Manhattan|directed_by|Jean-Pierre Melville
"""

PASSAGES = [
    {"id": "p:tbp", "entity_id": "The Big Picture", "text": "The Big Picture is a satire of Hollywood, directed."},
    {"id": "p:bf", "entity_id": "Big Fish", "text": "Big Fish is a fantasy about a big storyteller."},
]


@pytest.fixture(scope="module")
def namesakes_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A KB where "Big" sits beside titles that contain it."""
    return movie_kb(tmp_path_factory, "namesakes", TRIPLES, PASSAGES)


def _run(kb: str, question: str) -> dict:
    return get_graph("fusion").invoke({"question": question}, context=context_for("fusion", kb=kb))


def _seeds(out: dict) -> list[str]:
    return next(s["seeds"] for s in out["trace"] if s["node"] == "retrieve_vectors")


def test_prefer_exact_drops_what_the_written_name_outranks(namesakes_kb: str) -> None:
    kb = open_kb(namesakes_kb)
    q = "who directed Big"
    assert prefer_exact(kb, q, ["The Big Picture", "Big"], ["Big"]) == ["Big"]
    assert prefer_exact(kb, q, ["The Big Picture"], []) == ["The Big Picture"]  # nothing named: similarity decides
    q = "who directed the big lebowsky"  # "big lebowsky": a run of its words around "Big"
    assert prefer_exact(kb, q, ["The Big Lebowski"], ["Big"]) == ["The Big Lebowski"]
    q = "who directed in Manhattan"  # "in" is too short a word to tie "Manhattan" to "Two Men in Manhattan"
    assert prefer_exact(kb, q, ["Two Men in Manhattan"], ["Manhattan"]) == []


def test_fusion_answers_the_exact_title(namesakes_kb: str) -> None:
    out = _run(namesakes_kb, "who directed Big")
    assert out["answer"] == "Penny Marshall"
    assert _seeds(out) == ["Big"]


def test_the_dense_namesake_is_what_the_rule_removes(namesakes_kb: str) -> None:
    """Without the rule the nearest dense entity is seeded first: the test above checks a real difference."""
    with mock.patch("hybridrag.agents.fusion.branches.prefer_exact", lambda kb, q, ids, named: ids):
        seeds = _seeds(_run(namesakes_kb, "who directed Big"))
    assert seeds[0] != "Big" and "Big" in seeds


def test_a_longer_title_written_in_full_is_linked_to_itself(namesakes_kb: str) -> None:
    out = _run(namesakes_kb, "who directed The Big Picture")
    assert out["answer"] == "Christopher Guest"
    assert _seeds(out) == ["The Big Picture"]


def test_a_misspelt_title_still_links_by_similarity(namesakes_kb: str) -> None:
    out = _run(namesakes_kb, "who directed the big lebowsky")
    assert _seeds(out)[0] == "The Big Lebowski"
    assert out["answer"] == "Joel Coen"
