"""HybGRAG's text module: the entity the question names exactly ranks above a title holding its name."""

from __future__ import annotations

from hybridrag.agents.hybgrag import retrieval
from hybridrag.agents.hybgrag.retrieval import Reference, exact_first


class Names:
    """The KB calls the rule makes: an id's display name (ids are names here) and its texts."""

    docs: list = []

    def name(self, entity_id: str) -> str:
        return entity_id


def ref(name: str, score: float, kind: str = "entity") -> Reference:
    return Reference(name, kind, name, score, "doc", f"{name} text")


def order(refs: list[Reference]) -> list[tuple[str, float]]:
    return [(r.id, r.score) for r in refs]


def test_the_written_title_takes_the_place_of_the_first_near_miss(monkeypatch):
    monkeypatch.setattr(retrieval, "mentions_in", lambda kb, q: ["Big"])
    refs = [ref("Penny Marshall", 0.9), ref("The Big Picture", 0.8), ref("Big Eyes", 0.6), ref("Big", 0.5)]
    out = exact_first(Names(), "who directed Big", refs)
    assert order(out) == [("Penny Marshall", 0.9), ("Big", 0.8), ("The Big Picture", 0.8), ("Big Eyes", 0.6)]


def test_a_written_title_the_search_missed_is_added_with_its_best_text(monkeypatch):
    monkeypatch.setattr(retrieval, "mentions_in", lambda kb, q: ["Big"])
    monkeypatch.setattr(retrieval, "rank_entities", lambda kb, q, ids, k: [(i, 0.1, -1) for i in ids])
    out = exact_first(Names(), "who directed Big", [ref("The Big Picture", 0.8), ref("Love at Large", 0.3)])
    assert order(out) == [("Big", 0.8), ("The Big Picture", 0.8), ("Love at Large", 0.3)]
    assert out[0].kind == "entity" and out[0].text == "Big"  # no text row: its name


def test_nothing_moves_without_a_near_miss(monkeypatch):
    refs = [ref("The Big Lebowski", 0.8), ref("Big", 0.5)]
    monkeypatch.setattr(retrieval, "mentions_in", lambda kb, q: ["Big"])
    # "big lebowsky" writes Big inside a run of the title's own words: a typo of it, not a near-miss
    assert exact_first(Names(), "who directed big lebowsky", refs) == refs
    monkeypatch.setattr(retrieval, "mentions_in", lambda kb, q: [])
    assert exact_first(Names(), "who directed the big one", refs) == refs  # nothing written exactly
    monkeypatch.setattr(retrieval, "mentions_in", lambda kb, q: ["Big"])
    unrelated = [ref("Bigger Fish", 0.8), ref("Big", 0.5)]  # "Big" is not a whole word of "Bigger Fish"
    assert exact_first(Names(), "who directed Big", unrelated) == unrelated
