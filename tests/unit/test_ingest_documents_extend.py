"""A KB built from triples, extended with documents: what it held stays, new facts join its entities."""

from __future__ import annotations

import json

from ingest_documents_corpus import Extraction, ent, rel

from hybridrag.agents.extraction import ingest_documents
from hybridrag.kb.ingest import ingest
from hybridrag.kb.kb_dir import resolve_build
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.provenance import Provenance, read_jsonl
from hybridrag.kb.sample import TYPE_MAP

TRIPLES = "Big|directed_by|Penny Marshall\nBig|starred_actors|Tom Hanks\nApollo 13|starred_actors|Tom Hanks\n"
PASSAGES = [{"id": "p:Big", "entity_id": "Big", "text": "Big is a comedy about a boy who wakes up as an adult."}]


def test_documents_extend_a_triples_kb(tmp_path, fake_llm):
    (tmp_path / "t.txt").write_text(TRIPLES)
    (tmp_path / "p.jsonl").write_text("\n".join(json.dumps(p) for p in PASSAGES))
    kb = tmp_path / "kb"
    ingest(kb, [tmp_path / "t.txt"], passages=tmp_path / "p.jsonl", type_map=TYPE_MAP, progress=False)
    before = InMemoryGraphStore.load(kb)
    (tmp_path / "hanks.md").write_text("Tom hanks was born in Concord, California. He starred in Big.")
    fake_llm(
        Extraction(
            entities=[ent("Tom hanks", "person"), ent("Concord, California", "city"), ent("Big", "movie")],
            relations=[rel("Tom hanks", "born_in", "Concord, California"), rel("Big", "starred_actors", "Tom hanks")],
        )
    )
    report = ingest_documents(kb, [tmp_path / "hanks.md"], extract_llm="fake:test", progress=False)

    after = InMemoryGraphStore.load(kb)
    edges = {
        (after.entities[h].id, after.relation_names[r], after.entities[t].id)
        for h, r, t in zip(after.heads, after.rels, after.tails, strict=True)
    }
    old = {
        (before.entities[h].id, before.relation_names[r], before.entities[t].id)
        for h, r, t in zip(before.heads, before.rels, before.tails, strict=True)
    }
    assert old < edges and ("Tom Hanks", "born_in", "Concord, California") in edges
    types = {e.id: e.type for e in after.entities}
    assert all(types[e.id] == e.type for e in before.entities), "the KB's entities keep their types"
    assert "Tom hanks" not in types, "the mention joined the KB's entity (case)"
    assert report.counts["passages"] == 2 and report.extraction["entities_new"] == 1
    prov = Provenance.load(kb)
    assert prov.triples[next(t for t in prov.triples if t.type == "born_in")] == ["hanks.md#0"]
    # a triple the KB already held now also points at the chunk that states it
    assert prov.fact_chunks("Big", "starred_actors", "Tom Hanks") == ["hanks.md#0"]
    merges = read_jsonl(resolve_build(kb).path / "merges.jsonl")
    assert {(m["reason"], m["into"]) for m in merges} == {("existing", "Tom Hanks"), ("existing", "Big")}
