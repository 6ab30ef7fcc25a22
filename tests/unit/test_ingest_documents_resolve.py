"""Entity resolution rules and cleaning of extracted facts, and a SIGKILLed extraction that resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest
from ingest_documents_corpus import EXTRACTIONS, Extraction, ent, rel, write_corpus

from hybridrag.kb.documents import Chunk
from hybridrag.kb.extract import ChunkFacts, clean, in_chunk
from hybridrag.kb.extract_schema import GraphSchema
from hybridrag.kb.model import Entity
from hybridrag.kb.resolve import resolve

ROOT = Path(__file__).resolve().parents[2]


def facts(chunk_id: str, *entities: tuple, triples=()) -> ChunkFacts:
    """ChunkFacts from (name, type, aliases...) tuples and (head, relation, tail) names."""
    from hybridrag.kb.extract import name_key

    f = ChunkFacts(chunk_id)
    f.entities = {name_key(n): (n, t, tuple(a)) for n, t, *a in entities}
    f.triples = [(name_key(h), r, name_key(t)) for h, r, t in triples]
    return f


def test_digits_and_distinct_names_are_not_merged():
    out = resolve(
        [
            facts(
                "d#0",
                ("Apollo 11", "mission"),
                ("Apollo 13", "mission"),
                ("Marie Curie", "person"),
                ("Pierre Curie", "person"),
                triples=[("Apollo 11", "before", "Apollo 13")],
            )
        ]
    )
    assert sorted(e.id for e in out.entities) == ["Apollo 11", "Apollo 13", "Marie Curie", "Pierre Curie"]
    assert out.merges == [] and out.provenance == {out.triples[0]: ["d#0"]}


def test_article_near_duplicate_and_incompatible_types():
    out = resolve(
        [
            facts("d#0", ("The Beatles", "band"), ("Beatles", "band")),
            facts("d#1", ("Jaguar", "animal")),
            facts("d#2", ("Jaguars", "car")),
        ]
    )
    ids = sorted(e.id for e in out.entities)
    assert ids == ["Jaguar", "Jaguars", "The Beatles"], "an animal and a car stay apart"
    [merge] = out.merges
    assert merge["reason"] == "near_duplicate" and merge["into"] == "The Beatles"


def test_existing_entities_win_and_are_never_merged_together():
    kb = [Entity("m1", "Marie Curie", "person", aliases=("Madame Curie",)), Entity("m2", "Marie Curies", "person")]
    out = resolve(
        [facts("d#0", ("madame curie", "person"), ("Warsaw", "city"), triples=[("madame curie", "born_in", "Warsaw")])],
        existing=kb,
    )
    assert {(t.head, t.type, t.tail) for t in out.triples} == {("m1", "born_in", "Warsaw")}
    assert [m["reason"] for m in out.merges] == ["alias"] and out.merges[0]["into"] == "m1"
    assert {e.id for e in out.entities} == {"Warsaw"}, "m1 already has that alias: nothing to update"


def test_id_clash_with_an_unrelated_existing_entity_gets_a_new_id():
    kb = [Entity("Paris", "Paris Hilton", "person")]
    out = resolve([facts("d#0", ("Paris", "city"))], existing=kb)
    assert [(e.id, e.name) for e in out.entities] == [("Paris (2)", "Paris")]


def test_clean_counts_every_left_out_item():
    chunk = Chunk("d#0", "d", "Ada Okafor founded Veltrix. Veltrix sells drones.")
    found = Extraction(
        entities=[ent("Ada Okafor", "person"), ent("Veltrix", "company"), ent("Mars", "planet"), ent("", "thing")],
        relations=[
            rel("Ada Okafor", "founded", "Veltrix"),
            rel("Veltrix", "sells", "Veltrix"),
            rel("Veltrix", "", "drones"),
            rel("Ada Okafor", "visited", "Mars"),
        ],
    )
    out = clean(chunk, found, GraphSchema())
    assert out.triples == [("ada okafor", "founded", "veltrix")]
    assert out.dropped == Counter(
        {"entity_not_in_chunk": 2, "self_loop": 1, "relation_unnamed": 1, "relation_endpoint_not_in_chunk": 1}
    )
    assert in_chunk("ADA  okafor", chunk.text) and not in_chunk("Okafor Industries", chunk.text)


KILLED_RUN = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from fake_chat import ScriptedChatModel
    from ingest_documents_corpus import EXTRACTIONS

    class Stalls(ScriptedChatModel):
        def _next(self, messages, schema):
            if not self.script:
                Path({marker!r}).write_text("stalled")
                time.sleep(600)  # the test kills the process here
            return super()._next(messages, schema)

    from hybridrag.agents.llm.models import register_model
    from hybridrag.agents.extraction import ingest_documents
    register_model("fake:test", Stalls(script=list(EXTRACTIONS[:2])))
    ingest_documents({kb!r}, {docs!r}, extract_llm="fake:test", progress=False)
""")


def test_sigkilled_extraction_continues_from_the_cache(tmp_path, fake_llm):
    docs = [str(p) for p in write_corpus(tmp_path / "docs")]
    kb, marker = tmp_path / "kb", tmp_path / "stalled"
    code = KILLED_RUN.format(tests=str(ROOT / "tests"), marker=str(marker), kb=str(kb), docs=docs)
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 180
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    assert marker.exists(), proc.communicate(timeout=30)[0].decode()[-2000:]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    cached = list((kb / ".extract-cache").rglob("*.json"))
    assert len(cached) == 2 and not list((kb / ".extract-cache").rglob("*.tmp"))
    from hybridrag.agents.extraction import ingest_documents

    model = fake_llm(*EXTRACTIONS[2:])  # the same spec (fake:test): the cache is per model
    report = ingest_documents(kb, docs, extract_llm="fake:test", progress=False)
    assert len(model.calls) == 2 and report.extraction["chunks_from_cache"] == 2
    assert report.counts["passages"] == 4 and report.extraction["triples"] >= 8


@pytest.mark.parametrize("name", ["Veltrix Robotics", "veltrix robotics", "VELTRIX-ROBOTICS"])
def test_name_variants_are_one_key(name):
    from hybridrag.kb.extract import name_key

    assert name_key(name) == "veltrix robotics"
