"""SSRAG's small-model answer rule: a title holding the question's exact name is not its answer."""

from __future__ import annotations

from hybridrag.agents.ssrag import small
from hybridrag.agents.ssrag.small import outranked, rule_answer


class Names:
    """The one KB call the rule makes: an id's display name (ids are names here)."""

    def name(self, entity_id: str) -> str:
        return entity_id


def item(name: str, kind: str = "entity", text: str = "") -> dict:
    entity = name.removeprefix("p:")
    return {"id": name, "kind": kind, "name": name, "entity_id": entity, "text": text, "path": [], "score": 0.5}


def test_titles_holding_the_written_name_are_outranked_others_are_not(monkeypatch):
    monkeypatch.setattr(small, "mentions_in", lambda kb, q: ["Big"])
    items = [item("The Big Picture"), item("p:Big Eyes", "passage"), item("Penny Marshall"), item("Bigger Fish")]
    assert outranked(Names(), "who directed Big", items) == {"The Big Picture", "Big Eyes"}
    monkeypatch.setattr(small, "mentions_in", lambda kb, q: [])
    assert outranked(Names(), "who directed that film", items) == set()  # nothing written exactly: nothing outranked


def test_the_rule_answer_skips_an_outranked_title(monkeypatch):
    monkeypatch.setattr(small, "mentions_in", lambda kb, q: ["Big"])
    items = [
        item("The Big Picture", text="The Big Picture is directed by Eric Lartigau."),
        item("Tom Hanks", text="Big starred actors Tom Hanks."),
    ]
    own = {"Big"}
    first, _, _ = rule_answer(items, own, [])
    assert first == "The Big Picture"  # without the exact-title rule, the top context's name
    own |= outranked(Names(), "who directed Big", items)
    assert rule_answer(items, own, [])[0] == "Tom Hanks"
