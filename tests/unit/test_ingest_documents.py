"""Documents → KB on the scripted fake model: loaders, extraction → merge → graph with provenance,
resumability, extension, and clear errors on bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_chat import ScriptedChatModel
from ingest_documents_corpus import EXTRACTIONS, FILES, LISBON_PDF_LINES, Extraction, ent, rel, tiny_pdf, write_corpus

from hybridrag.agents.extraction import ingest_documents
from hybridrag.agents.llm.models import LLMUnavailableError, ModelConfigError
from hybridrag.app.cli import main
from hybridrag.kb.documents import DocumentError, chunk_document, find_documents
from hybridrag.kb.kb_dir import has_build, resolve_build
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import KBError
from hybridrag.kb.provenance import Provenance, read_jsonl


def manifest(kb: Path) -> dict:
    return json.loads((resolve_build(kb).path / "manifest.json").read_text())


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The four documents ingested with extraction on the fake model (one reply per chunk)."""
    from fake_chat import ScriptedChatModel

    from hybridrag.agents.llm.models import forget_model, register_model

    src = write_corpus(tmp_path_factory.mktemp("docs"))
    kb = tmp_path_factory.mktemp("kb") / "kb"
    model = ScriptedChatModel(script=list(EXTRACTIONS))
    register_model("fake:extract", model)
    try:
        report = ingest_documents(kb, src, extract_llm="fake:extract", progress=False)
    finally:
        forget_model("fake:extract")
    assert not model.script and len(model.calls) == 4
    return kb, report, model


def test_loaders_chunk_every_format(tmp_path):
    docs, warnings = find_documents(write_corpus(tmp_path))
    assert [d.kind for d in docs] == ["markdown", "text", "html", "pdf"] and not warnings
    chunks = {d.key: chunk_document(d) for d in docs}
    assert chunks["lisbon.pdf"][0].text == "\n".join(LISBON_PDF_LINES)
    assert chunks["lisbon.pdf"][0].page == 0 and chunks["okafor.html"][0].text.startswith("Ada Okafor\n\nADA OKAFOR")
    assert "<p>" not in chunks["okafor.html"][0].text and [c.id for c in chunks["veltrix.md"]] == ["veltrix.md#0"]


def test_html_text_is_what_a_reader_sees(tmp_path):
    (tmp_path / "p.html").write_text(
        "<html><head><title>T</title><style>p {color: red}</style></head><body>"
        "<script>var secret = 1;</script><p>Visible <b>bold</b> text.</p>"
        "<noscript>enable js</noscript>Loose text.</body></html>"
    )
    [doc], _ = find_documents([tmp_path / "p.html"])
    [chunk] = chunk_document(doc)
    assert chunk.text == "Visible bold text.\nLoose text."


def test_chunk_size_and_overlap_are_applied(tmp_path):
    sentences = " ".join(f"Sentence number {i} talks about drones." for i in range(60))
    (tmp_path / "long.txt").write_text(sentences, encoding="utf-8")
    [doc], _ = find_documents([tmp_path / "long.txt"])
    chunks = chunk_document(doc, chunk_size=200, chunk_overlap=60)
    assert len(chunks) > 10 and all(len(c.text) <= 200 for c in chunks)
    assert [c.id for c in chunks[:2]] == ["long.txt#0", "long.txt#1"]
    assert chunks[1].text[:20] in chunks[0].text, "neighbouring chunks overlap"
    assert len(chunk_document(doc, chunk_size=1000, chunk_overlap=0)) < len(chunks)


def test_directory_skips_other_files_with_a_warning(tmp_path):
    write_corpus(tmp_path / "d")
    (tmp_path / "d" / "notes.docx").write_bytes(b"PK")
    docs, warnings = find_documents([tmp_path / "d"])
    assert sorted(d.key for d in docs) == sorted(FILES)
    assert warnings == [
        f"{tmp_path / 'd'}: skipped 1 files that are not .htm/.html/.markdown/.md/.pdf/.text/.txt documents"
    ]


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("report.docx", b"PK\x03\x04", "unsupported document type '.docx'"),
        ("empty.md", b"  \n\n", "empty document, no text found"),
        ("broken.pdf", b"%PDF-1.4\nthis is not a pdf", "cannot read as pdf"),
        ("latin1.txt", "café".encode("latin-1"), "not UTF-8 text"),
        ("blank.pdf", tiny_pdf([]), "a scanned PDF without a text layer"),
    ],
)
def test_bad_documents_are_named_errors(tmp_path, name, content, message):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(DocumentError, match=message) as err:
        docs, _ = find_documents([tmp_path / name])
        chunk_document(docs[0])
    assert str(tmp_path / name) in str(err.value)


def test_missing_path_and_bad_settings(tmp_path):
    with pytest.raises(DocumentError, match="nope.txt: no such file"):
        find_documents([tmp_path / "nope.txt"])
    (tmp_path / "a.txt").write_text("Some text.")
    with pytest.raises(ValueError, match="--chunk-overlap must be"):
        ingest_documents(tmp_path / "kb", [tmp_path / "a.txt"], chunk_size=100, chunk_overlap=80)
    with pytest.raises(ValueError, match="--chunk-size must be at least 50"):
        ingest_documents(tmp_path / "kb", [tmp_path / "a.txt"], chunk_size=10)
    with pytest.raises(KBError, match="--schema constrains graph extraction: give --extract-llm"):
        ingest_documents(tmp_path / "kb", [tmp_path / "a.txt"], schema=tmp_path / "s.json")
    with pytest.raises(ModelConfigError, match="unknown local model 'nope'"):
        ingest_documents(tmp_path / "kb", [tmp_path / "a.txt"], extract_llm="local:nope", progress=False)
    with pytest.raises(ModelConfigError, match="needs OPENAI_API_KEY"):
        ingest_documents(tmp_path / "kb", [tmp_path / "a.txt"], extract_llm="openai:gpt-4o-mini", progress=False)
    assert not has_build(tmp_path / "kb")


@pytest.mark.parametrize(
    "schema, message",
    [
        ("{not json", "not a JSON file"),
        ('{"entity_types": ["person"], "relatons": []}', "expected an object with 'entity_types'"),
        ('{"entity_types": "person"}', "'entity_types' must be a list of names"),
        ('{"entity_types": ["person"], "relations": {"born_in": ["person", "city"]}}', "uses type 'city'"),
        ('{"relations": {"born_in": ["person"]}}', "must be \\[head_type, tail_type\\]"),
        ("{}", "lists no entity types and no relations"),
    ],
)
def test_bad_schema_files(tmp_path, schema, message):
    from hybridrag.kb.extract_schema import load_schema

    (tmp_path / "s.json").write_text(schema)
    with pytest.raises(KBError, match=message):
        load_schema(tmp_path / "s.json")


def test_extraction_merge_graph_with_provenance(built):
    kb, report, model = built
    assert report.added == FILES and report.chunks == 4
    store = InMemoryGraphStore.load(kb)
    names = {e.id: e for e in store.entities}
    assert "Veltrix Robotics" in names and "Veltrix Robotic" not in names and "veltrix robotics" not in names
    assert names["Veltrix Robotics"].type == "organization" and "Veltrix Robotic" in names["Veltrix Robotics"].aliases
    assert "ADA OKAFOR" not in names and "Okafor" not in names and "Okafor" in names["Ada Okafor"].aliases
    assert "Brazil" not in names, "a name the chunk does not contain is left out"
    prov = Provenance.load(kb)
    founded = [t for t in prov.triples if t.type in ("founded_by", "founded")]
    assert {(t.head, t.type, t.tail) for t in founded} == {
        ("Veltrix Robotics", "founded_by", "Ada Okafor"),
        ("Ada Okafor", "founded", "Veltrix Robotics"),
    }
    assert prov.triples[founded[0]] in (["veltrix.md#0"], ["okafor.html#0"])
    graph_triples = {
        (store.entities[h].id, store.relation_names[r], store.entities[t].id)
        for h, r, t in zip(store.heads, store.rels, store.tails, strict=True)
    }
    assert graph_triples == {(t.head, t.type, t.tail) for t in prov.triples}, "every graph triple has provenance"
    docs = {d["key"]: d for d in read_jsonl(resolve_build(kb).path / "documents.jsonl")}
    for chunks in prov.triples.values():
        assert chunks and all(c in [x["id"] for x in docs[c.split("#")[0]]["chunks"]] for c in chunks)
    assert prov.where("lisbon.pdf#0") == {
        "document": "lisbon.pdf",
        "path": docs["lisbon.pdf"]["path"],
        "page": 0,
        "start": 0,
    }
    with pytest.raises(KeyError, match="no chunk 'nope#0'"):
        prov.where("nope#0")
    # the fact's chunk states it: an evidence line maps back to the chunk
    ev = {"source": "kg", "id": "Ada Okafor", "text": "Veltrix Robotics → founded by → Ada Okafor", "path": []}
    assert prov.source_chunks(ev) == ["veltrix.md#0"]
    inverse = {"source": "kg", "text": "Ada Okafor → founded_by (inverse) → Veltrix Robotics"}
    assert prov.source_chunks(inverse) == ["veltrix.md#0"]
    assert prov.source_chunks({"source": "doc", "id": "lisbon.pdf#0", "text": "..."}) == ["lisbon.pdf#0"]


def test_merges_and_usage_are_recorded(built):
    kb, report, _ = built
    merges = read_jsonl(resolve_build(kb).path / "merges.jsonl")
    reasons = {(m["reason"], tuple(m["names"])) for m in merges}
    assert ("case", ("Veltrix Robotics", "veltrix robotics")) in reasons
    assert ("case", ("Ada Okafor", "ADA OKAFOR")) in reasons or ("case", ("ADA OKAFOR", "Ada Okafor")) in reasons
    assert any(r == "alias" and "Okafor" in n for r, n in reasons)
    near = [m for m in merges if m["reason"] == "near_duplicate"]
    assert near and near[0]["into"] == "Veltrix Robotics" and near[0]["score"] >= 0.92
    assert any(m["reason"] == "type_conflict" and m["kept"] == "organization" for m in merges)
    section = manifest(kb)["documents"]
    x = section["extraction"]
    assert x["usage"]["llm_calls"] == 4 and x["usage"]["input_tokens"] > 0 and x["usage"]["output_tokens"] > 0
    assert x["chunks_extracted"] == 4 and x["chunks_from_cache"] == 0 and x["chunks_failed"] == []
    assert x["left_out"] == {"relation_endpoint_not_in_chunk": 1}
    assert section["count"] == 4 and section["chunks"] == 4 and section["chunk_size"] == 1000
    assert manifest(kb)["counts"]["passages"] == 4


def test_prompt_quotes_the_chunk_as_data(built):
    _, _, model = built
    system, human = model.calls[0]["messages"]
    assert "knowledge graph" in system.content and "Security rule" in system.content
    assert '<data source="doc">\n# Veltrix Robotics Veltrix Robotics is a drone maker' in human.content


def test_schema_constrains_extraction(tmp_path, fake_llm):
    (tmp_path / "a.txt").write_text("Ada Okafor founded Veltrix Robotics in Lisbon. Ada Okafor likes tea.")
    (tmp_path / "schema.json").write_text(
        json.dumps({"entity_types": ["person", "organization"], "relations": {"founded": ["person", "organization"]}})
    )
    model = fake_llm(
        Extraction(
            entities=[
                ent("Ada Okafor", "person"),
                ent("Veltrix Robotics", "company"),
                ent("Lisbon", "city"),
                ent("tea", "drink"),
            ],
            relations=[
                rel("Ada Okafor", "Founded", "Veltrix Robotics"),
                rel("Veltrix Robotics", "located_in", "Lisbon"),
                rel("Ada Okafor", "likes", "tea"),
            ],
        )
    )
    report = ingest_documents(
        tmp_path / "kb", [tmp_path / "a.txt"], extract_llm="fake:test", schema=tmp_path / "schema.json", progress=False
    )
    assert (
        "Use only these relations (head type -> tail type where given): founded (person -> organization)"
        in model.calls[0]["messages"][0].content
    )
    prov = Provenance.load(tmp_path / "kb")
    assert {(t.head, t.type, t.tail) for t in prov.triples} == {("Ada Okafor", "founded", "Veltrix Robotics")}
    types = {e.id: e.type for e in InMemoryGraphStore.load(tmp_path / "kb").entities}
    assert types == {"Ada Okafor": "person", "Veltrix Robotics": "organization"}, "typed by the relation's schema"
    left = report.extraction["left_out"]
    assert left == {"entity_type_not_in_schema": 2, "relation_not_in_schema": 2}, "Lisbon and tea; 2 relations"
    assert manifest(tmp_path / "kb")["documents"]["extraction"]["schema"]["entity_types"] == ["person", "organization"]


def test_killed_extraction_resumes_from_the_cache(tmp_path, fake_llm):
    src = write_corpus(tmp_path / "docs")
    first = fake_llm(EXTRACTIONS[0], EXTRACTIONS[1], ConnectionError("server went away"))
    with pytest.raises(LLMUnavailableError, match="server went away"):
        ingest_documents(tmp_path / "kb", src, extract_llm="fake:test", progress=False)
    assert len(first.calls) == 3 and not has_build(tmp_path / "kb")
    second = fake_llm(*EXTRACTIONS[2:])
    report = ingest_documents(tmp_path / "kb", src, extract_llm="fake:test", progress=False)
    assert len(second.calls) == 2, "only the two chunks not extracted before are asked"
    assert "Kestrel is a survey drone" not in str(second.calls[0]["messages"])
    assert report.extraction["chunks_from_cache"] == 2 and report.extraction["chunks_extracted"] == 2
    assert report.extraction["usage"]["llm_calls"] == 2 and report.counts["passages"] == 4
    assert report.extraction["usage_of_cached_replies"]["llm_calls"] == 2, "the killed run's cost is kept"


def test_unreadable_replies_are_counted_not_cached(tmp_path, fake_llm):
    (tmp_path / "a.txt").write_text("Ada Okafor founded Veltrix Robotics.")
    fake_llm("not json", "still not json")
    report = ingest_documents(tmp_path / "kb", [tmp_path / "a.txt"], extract_llm="fake:test", progress=False)
    assert report.extraction["chunks_failed"] == ["a.txt#0"] and report.counts["passages"] == 1
    assert any("1 chunks gave no readable extraction" in w for w in report.warnings)
    assert report.extraction["usage"]["parse_failures"] == 2 and report.extraction["usage"]["fallbacks"] == 1
    assert not list((tmp_path / "kb" / ".extract-cache").rglob("*.json")), "a failed reply is not cached"
    # the next run asks again for that chunk only, and its facts join the KB with provenance
    (tmp_path / "b.txt").write_text("Tomas Reyes designed the Kestrel.")
    fake_llm(
        Extraction(
            entities=[ent("Tomas Reyes", "person"), ent("Kestrel", "product")],
            relations=[rel("Kestrel", "designed_by", "Tomas Reyes")],
        ),
        Extraction(
            entities=[ent("Ada Okafor", "person"), ent("Veltrix Robotics", "organization")],
            relations=[rel("Veltrix Robotics", "founded_by", "Ada Okafor")],
        ),
    )
    again = ingest_documents(
        tmp_path / "kb", [tmp_path / "a.txt", tmp_path / "b.txt"], extract_llm="fake:test", progress=False
    )
    assert again.added == ["b.txt"] and again.retried == 1 and again.extraction["chunks_failed"] == []
    assert again.counts["passages"] == 2, "the retried chunk's passage is not added twice"
    prov = Provenance.load(tmp_path / "kb")
    assert {c for cs in prov.triples.values() for c in cs} == {"a.txt#0", "b.txt#0"}
    rows = {d["key"]: d for d in read_jsonl(resolve_build(tmp_path / "kb").path / "documents.jsonl")}
    assert rows["a.txt"]["failed"] == [] and rows["b.txt"]["failed"] == [] and rows["a.txt"]["extracted"]
    assert ingest_documents(tmp_path / "kb", [tmp_path / "a.txt"], extract_llm="fake:test", progress=False).added == []


def test_extending_a_kb_keeps_what_it_held(tmp_path, fake_llm):
    src = write_corpus(tmp_path / "docs")
    fake_llm(EXTRACTIONS[0])
    ingest_documents(tmp_path / "kb", src[:1], extract_llm="fake:test", progress=False)
    fake_llm(
        Extraction(
            entities=[ent("Kestrel", "product"), ent("VELTRIX ROBOTICS", "organization")],
            relations=[rel("Kestrel", "built_by", "VELTRIX ROBOTICS")],
        )
    )
    report = ingest_documents(tmp_path / "kb", src[:2], extract_llm="fake:test", progress=False)
    assert report.added == ["kestrel.txt"] and report.unchanged == ["veltrix.md"]
    prov = Provenance.load(tmp_path / "kb")
    assert prov.triples[next(t for t in prov.triples if t.type == "built_by")] == ["kestrel.txt#0"]
    assert ("Kestrel", "built_by", "Veltrix Robotics") in {(t.head, t.type, t.tail) for t in prov.triples}
    assert ("Veltrix Robotics", "founded_by", "Ada Okafor") in {(t.head, t.type, t.tail) for t in prov.triples}
    merges = read_jsonl(resolve_build(tmp_path / "kb").path / "merges.jsonl")
    assert {"reason": "existing", "names": ["Veltrix Robotics", "VELTRIX ROBOTICS"]}.items() <= merges[-1].items()
    m = manifest(tmp_path / "kb")
    assert m["counts"]["passages"] == 2 and m["documents"]["count"] == 2
    # nothing new: no rebuild; a changed document under a known name is refused
    build = resolve_build(tmp_path / "kb").path
    assert ingest_documents(tmp_path / "kb", src[:2], progress=False).added == []
    assert resolve_build(tmp_path / "kb").path == build
    src[0].write_text("Veltrix Robotics moved to Porto.")
    with pytest.raises(DocumentError, match="already holds a different document 'veltrix.md'"):
        ingest_documents(tmp_path / "kb", src[:1], progress=False)


def test_cli_ingest_documents(tmp_path, capsys):
    src = write_corpus(tmp_path / "docs")
    assert (
        main(
            [
                "ingest",
                "--kb",
                str(tmp_path / "kb"),
                "--documents",
                str(tmp_path / "docs"),
                "--chunk-size",
                "200",
                "--chunk-overlap",
                "20",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert out.startswith(
        f"built KB {tmp_path / 'kb'}: added 4 documents (4 chunks); now 0 entities, 0 triples, 4 passages"
    )
    assert main(["ingest", "--kb", str(tmp_path / "kb"), "--documents", str(src[0]), "--triples", "t.txt"]) == 2
    assert "--documents cannot be combined with --triples" in capsys.readouterr().err
    assert main(["ingest", "--kb", str(tmp_path / "kb2"), "--documents", str(tmp_path / "missing.md")]) == 2
    assert "missing.md: no such file or directory" in capsys.readouterr().err


def test_extraction_prompts_declare_their_inputs():
    from hybridrag.prompts import extract as P

    for prompt in P.ALL:
        assert prompt.fields() == set(prompt.inputs), prompt.name


def test_cli_reports_an_unreachable_extraction_server_in_one_line(tmp_path, fake_llm, capsys):
    (tmp_path / "a.txt").write_text("Ada Okafor founded Veltrix Robotics.")
    (tmp_path / "b.txt").write_text("Tomas Reyes designed the Kestrel.")
    fake_llm(Extraction(entities=[ent("Ada Okafor", "person")]), ConnectionError("connection refused"))
    argv = [
        "ingest",
        "--kb",
        str(tmp_path / "kb"),
        "--documents",
        str(tmp_path / "a.txt"),
        str(tmp_path / "b.txt"),
        "--extract-llm",
        "fake:test",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: extraction stopped: the language model's server failed: ConnectionError")
    assert err[-1].endswith("/.extract-cache, re-run to continue") and len(list((tmp_path / "kb").rglob("*.json"))) == 1


def test_hidden_folders_are_not_documents(tmp_path):
    write_corpus(tmp_path / "d")
    (tmp_path / "d" / ".git").mkdir()
    (tmp_path / "d" / ".git" / "notes.txt").write_text("not a document")
    docs, warnings = find_documents([tmp_path / "d"])
    assert len(docs) == 4 and not warnings


class ByChunk(ScriptedChatModel):
    """Fake model replying by the chunk's content (any call order), for concurrent extraction."""

    def _next(self, messages, schema):
        self.calls.append({"messages": messages, "schema": schema.__name__ if schema else None})
        text = str(messages[-1].content)
        [reply] = [
            EXTRACTIONS[i]
            for i, key in enumerate(("drone maker", "survey drone", "Porto", "capital of"))
            if key in text
        ]
        return reply


def test_concurrent_extraction_gives_the_same_graph(built, tmp_path):
    from hybridrag.agents.llm.models import forget_model, register_model

    src = write_corpus(tmp_path / "docs")
    model = ByChunk()
    register_model("fake:by-chunk", model)
    try:
        report = ingest_documents(tmp_path / "kb", src, extract_llm="fake:by-chunk", workers=3, progress=False)
    finally:
        forget_model("fake:by-chunk")
    assert len(model.calls) == 4 and report.extraction["workers"] == 3
    one_worker = {(t.head, t.type, t.tail): c for t, c in Provenance.load(built[0]).triples.items()}
    assert {(t.head, t.type, t.tail): c for t, c in Provenance.load(tmp_path / "kb").triples.items()} == one_worker
    with pytest.raises(ValueError, match="--extract-workers must be from 1 to 16, not 0"):
        ingest_documents(tmp_path / "kb", src, extract_llm="fake:by-chunk", workers=0)


def test_a_passages_only_kb_gets_its_graph_when_an_extraction_model_is_given(tmp_path, fake_llm):
    src = write_corpus(tmp_path / "docs")[:2]
    ingest_documents(tmp_path / "kb", src, progress=False)
    assert Provenance.load(tmp_path / "kb").triples == {}
    fake_llm(*EXTRACTIONS[:2])
    report = ingest_documents(tmp_path / "kb", src, extract_llm="fake:test", progress=False)
    assert report.added == [] and report.retried == 2 and report.counts["passages"] == 2
    prov = Provenance.load(tmp_path / "kb")
    assert prov.fact_chunks("Kestrel", "designed_by", "Tomas Reyes") == ["kestrel.txt#0"]
    rows = read_jsonl(resolve_build(tmp_path / "kb").path / "documents.jsonl")
    assert [(r["extracted"], r["failed"]) for r in rows] == [(True, []), (True, [])]
