"""passages_of: the owner index gives what a scan of the document table gives."""

from hybridrag.kb.base import open_kb


def test_passages_of_matches_a_scan_in_table_order(tiny_kb):
    kb = open_kb(tiny_kb)
    for owners in ({"Big"}, {"Apollo 13", "Amelie"}, {"Nobody"}, set()):
        assert kb.passages_of(owners) == [d for d in kb.docs if d.entity_id in owners]
    assert any(d.kind == "passage" for d in kb.passages_of({"Big"}))
