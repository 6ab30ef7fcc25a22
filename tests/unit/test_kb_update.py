"""KBs that change safely (issue 28 item 2): refusal, add, update and delete of files and documents.

Every change is checked for what it must not touch: the other files' triples and entities, the
other documents' passages, and their vectors (copied bit for bit from the previous build).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from hybridrag.agents.extraction import ingest_documents
from hybridrag.app.cli import main
from hybridrag.kb.base import open_kb
from hybridrag.kb.ingest import ingest
from hybridrag.kb.kb_dir import build_token, resolve_build
from hybridrag.kb.kb_update import change_files, delete
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import KBError
from hybridrag.kb.provenance import Provenance
from hybridrag.kb.text_index import DenseIndex, load_docs

FILMS = "Heat|directed_by|Michael Mann\nHeat|release_year|1995\nCollateral|directed_by|Michael Mann\n"
ALIEN = "Alien|directed_by|Ridley Scott\nHeat|directed_by|Michael Mann\n"  # one triple shared with FILMS
PASSAGES = [
    {"id": "p:heat", "entity_id": "Heat", "text": "Heat is a crime film set in Los Angeles."},
    {"id": "p:note", "text": "Critics rank heist films among the tensest genres."},
]


class HashEmbeddings(Embeddings):
    """8-dim vectors from a hash of the text; counts the texts it embeds."""

    def __init__(self):
        self.seen: list[str] = []

    def _vec(self, text):
        seed = int(hashlib.md5(text.encode()).hexdigest()[:8], 16)
        return np.random.default_rng(seed).normal(size=8).tolist()

    def embed_documents(self, texts):
        self.seen += texts
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)


@pytest.fixture
def emb(monkeypatch):
    fake = HashEmbeddings()
    monkeypatch.setattr("hybridrag.kb.ingest.get_embeddings", lambda spec: fake)
    monkeypatch.setattr("hybridrag.kb.base.get_embeddings", lambda spec: fake)
    return fake


def _write(folder, name, text):
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def _edges(kb) -> set[tuple[str, str, str]]:
    s = InMemoryGraphStore.load(resolve_build(kb).path)
    return {
        (s.entities[h].id, s.relation_names[r], s.entities[t].id)
        for h, r, t in zip(s.heads.tolist(), s.rels.tolist(), s.tails.tolist(), strict=True)
    }


def _vectors(kb) -> dict[tuple[str, str], tuple[str, bytes]]:
    """(kind, id) -> (text, vector bytes) of every indexed row of the live build."""
    build = resolve_build(kb).path
    docs = load_docs(build / "docs.jsonl")
    index = DenseIndex.load(build / "dense.faiss").index
    assert index.ntotal == len(docs), "one vector per indexed row"
    vecs = index.reconstruct_n(0, index.ntotal)
    return {(d.kind, d.id): (d.text, vecs[i].tobytes()) for i, d in enumerate(docs)}


def _films_kb(tmp_path, capsys):
    src = tmp_path / "src"
    src.mkdir()
    films = _write(src, "films.txt", FILMS)
    notes = _write(src, "notes.jsonl", "\n".join(json.dumps(p) for p in PASSAGES))
    kb = tmp_path / "kb"
    assert main(["ingest", "--kb", str(kb), "--triples", str(films), "--passages", str(notes)]) == 0
    capsys.readouterr()
    return kb, src


def test_ingest_into_an_existing_kb_without_a_mode_is_refused(tmp_path, emb, capsys):
    kb, src = _films_kb(tmp_path, capsys)
    token, edges = build_token(kb), _edges(kb)
    alien = _write(src, "alien.txt", ALIEN)
    assert main(["ingest", "--kb", str(kb), "--triples", str(alien)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already holds a KB" in err
    assert all(flag in err for flag in ("--add", "--update", "--replace"))
    assert build_token(kb) == token and _edges(kb) == edges, "the KB is untouched"
    assert main(["ingest", "--kb", str(kb), "--triples", str(alien), "--replace"]) == 0
    assert _edges(kb) == {("Alien", "directed_by", "Ridley Scott"), ("Heat", "directed_by", "Michael Mann")}


def test_add_keeps_every_triple_passage_and_vector(tmp_path, emb, capsys):
    kb, src = _films_kb(tmp_path, capsys)
    edges, vectors = _edges(kb), _vectors(kb)
    emb.seen.clear()
    alien = _write(src, "alien.txt", ALIEN)
    assert main(["ingest", "--kb", str(kb), "--triples", str(alien), "--add"]) == 0
    assert "added alien.txt" in capsys.readouterr().out
    assert _edges(kb) == edges | {("Alien", "directed_by", "Ridley Scott")}
    after = _vectors(kb)
    assert {k: after[k] for k in vectors} == vectors, "old rows: same text, same vector bytes"
    assert sorted(emb.seen) == ["Alien", "Ridley Scott"], "only the new texts were embedded"
    assert main(["ingest", "--kb", str(kb), "--triples", str(alien), "--add"]) == 2
    err = capsys.readouterr().err
    assert "already holds a file 'alien.txt'" in err and "use --update" in err and err.count("\n") == 1


def test_update_replaces_a_files_triples_and_keeps_those_another_file_states(tmp_path, emb, capsys):
    kb, src = _films_kb(tmp_path, capsys)
    alien = _write(src, "alien.txt", ALIEN)
    change_files(kb, "add", [alien], progress=False)
    _write(src, "alien.txt", "Alien|directed_by|Ridley Scott\nAlien|release_year|1979\n")
    report = change_files(kb, "update", [alien], progress=False)
    assert report.updated == ["alien.txt"] and report.removed["triples"] == 0
    assert ("Heat", "directed_by", "Michael Mann") in _edges(kb), "films.txt still states it"
    assert ("Alien", "release_year", "1979") in _edges(kb)
    assert change_files(kb, "update", [alien], progress=False).unchanged == ["alien.txt"]
    with pytest.raises(KBError, match=r"holds no file 'alien2.txt' to update; use --add .*close files: alien.txt"):
        change_files(kb, "update", [_write(src, "alien2.txt", ALIEN)], progress=False)


def test_delete_a_file_removes_what_only_it_gave(tmp_path, emb, capsys):
    kb, src = _films_kb(tmp_path, capsys)
    change_files(kb, "add", [_write(src, "alien.txt", ALIEN)], progress=False)
    before = _vectors(kb)
    reader = open_kb(kb)  # a server's KB: open_kb per request sees the new build
    assert main(["kb", "delete", "--kb", str(kb), "--source", str(src / "films.txt")]) == 0
    out = capsys.readouterr().out
    assert "deleted films.txt" in out and "removed 2 triples" in out
    assert _edges(kb) == {("Alien", "directed_by", "Ridley Scott"), ("Heat", "directed_by", "Michael Mann")}
    after = _vectors(kb)
    gone = {("entity", "Collateral"), ("entity", "1995")}
    assert set(before) - set(after) == gone, "the removed entities' rows (and vectors) left the indexes"
    assert {k: before[k] for k in after} == after, "the rest: same text, same vector bytes"
    assert ("passage", "p:heat") in after, "notes.jsonl's passages stay"
    live = open_kb(kb)
    assert live is not reader and live.graph.counts()["triples"] == 2
    assert "Collateral" not in {e.id for e in live.graph.entities}


def test_unknown_names_are_one_line_errors_with_close_ids(tmp_path, emb, capsys):
    kb, src = _films_kb(tmp_path, capsys)
    token = build_token(kb)
    assert main(["kb", "delete", "--kb", str(kb), "--source", "film.txt"]) == 2
    err = capsys.readouterr().err
    assert err == "error: no file 'film.txt' in KB " + str(kb) + "; close files: films.txt\n"
    assert main(["kb", "delete", "--kb", str(kb), "--document", "guide.md"]) == 2
    assert "no document 'guide.md'" in capsys.readouterr().err
    with pytest.raises(KBError, match="would leave .* empty"):
        delete(kb, sources=["films.txt", "notes.jsonl"], progress=False)
    assert build_token(kb) == token, "every refusal left the build live"


def _docs(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    _write(folder, "heat.md", "Heat is a 1995 crime film directed by Michael Mann.")
    _write(folder, "alien.md", "Alien is a 1979 film directed by Ridley Scott.")
    return folder


def test_documents_add_update_and_delete(tmp_path, emb, capsys):
    folder, kb = _docs(tmp_path), tmp_path / "kb"
    ingest_documents(kb, [folder / "heat.md"], progress=False)
    heat = _vectors(kb)
    with pytest.raises(KBError, match="no document 'alien.md' to update; use --add"):
        ingest_documents(kb, [folder / "alien.md"], progress=False, mode="update")
    ingest_documents(kb, [folder / "alien.md"], progress=False, mode="add")
    with pytest.raises(KBError, match="already holds a document 'alien.md'; use --update"):
        ingest_documents(kb, [folder / "alien.md"], progress=False, mode="add")
    _write(folder, "alien.md", "Alien is a 1979 science fiction horror film by Ridley Scott.")
    with pytest.raises(KBError, match="different document 'alien.md'; pass --update"):
        ingest_documents(kb, [folder / "alien.md"], progress=False)
    ingest_documents(kb, [folder / "alien.md"], progress=False, mode="update")
    rows = _vectors(kb)
    assert rows[("passage", "alien.md#0")][0].startswith("Alien is a 1979 science fiction")
    assert {k: rows[k] for k in heat} == heat, "heat.md's passage: same text, same vector"
    assert main(["kb", "delete", "--kb", str(kb), "--document", "alien.md"]) == 0
    assert set(_vectors(kb)) == set(heat)
    assert {p["document"] for p in Provenance.load(kb).places.values()} == {"heat.md"}


def test_a_deleted_documents_triples_leave_unless_another_chunk_states_them(tmp_path, emb, fake_llm):
    from ingest_documents_corpus import Extraction, ent, rel

    folder, kb = _docs(tmp_path), tmp_path / "kb"
    mann = rel("Heat", "directed_by", "Michael Mann")
    fake_llm(
        Extraction(entities=[ent("Heat", "movie"), ent("Michael Mann", "person")], relations=[mann]),
        Extraction(
            entities=[
                ent("Alien", "movie"),
                ent("Ridley Scott", "person"),
                ent("Heat", "movie"),
                ent("Michael Mann", "person"),
            ],
            relations=[rel("Alien", "directed_by", "Ridley Scott"), mann],
        ),
    )
    ingest_documents(kb, [folder / "heat.md", folder / "alien.md"], extract_llm="fake:test", progress=False)
    assert len(_edges(kb)) == 2
    report = delete(kb, documents=["alien.md"], progress=False)
    assert report.removed == {"triples": 1, "passages": 1, "entities": 2}
    assert {(h, t) for h, _, t in _edges(kb)} == {("Heat", "Michael Mann")}, "heat.md still states it"
    assert Provenance.load(kb).fact_chunks("Heat", "directed_by", "Michael Mann") == ["heat.md#0"]


def test_a_kb_from_before_files_were_recorded_keeps_its_content(tmp_path, emb):
    src = tmp_path / "src"
    src.mkdir()
    kb = tmp_path / "kb"
    ingest(kb, [_write(src, "old.txt", FILMS)], progress=False)  # the Python call records no file rows
    edges = _edges(kb)
    alien = _write(src, "alien.txt", ALIEN)
    change_files(kb, "add", [alien], progress=False)
    delete(kb, sources=[alien], progress=False)
    assert _edges(kb) == edges, "the earlier content, including the triple alien.txt also gave, is kept"


class Killed(BaseException):
    """Stands for SIGKILL: not an Exception, so nothing in the change can swallow it."""


def test_a_change_killed_before_the_swap_leaves_the_kb_as_it_was(tmp_path, emb, capsys, monkeypatch):
    kb, src = _films_kb(tmp_path, capsys)
    token, rows = build_token(kb), _vectors(kb)

    def boom(*a, **k):
        raise Killed()

    with monkeypatch.context() as m:
        m.setattr("hybridrag.kb.ingest.DenseIndex.build", boom)
        with pytest.raises(Killed):
            delete(kb, sources=["notes.jsonl"], progress=False)
    assert build_token(kb) == token and _vectors(kb) == rows
    delete(kb, sources=["notes.jsonl"], progress=False)  # the re-run goes through
    assert not any(kind == "passage" for kind, _ in _vectors(kb))
    assert list((kb / ".staging").iterdir()) == [], "no staging folder is left behind"


def test_another_embedding_model_is_refused_naming_the_kbs(tmp_path, emb, capsys):
    kb, src = _films_kb(tmp_path, capsys)
    alien = _write(src, "alien.txt", ALIEN)
    assert main(["ingest", "--kb", str(kb), "--triples", str(alien), "--add", "--embeddings", "openai:x"]) == 2
    err = capsys.readouterr().err
    assert "was embedded with 'local:all-MiniLM-L6-v2', not 'openai:x'" in err and err.count("\n") == 1


def test_a_running_graph_answers_from_the_new_build(tmp_path, emb, capsys):
    from hybridrag.graphs import context_for, get_graph

    kb, src = _films_kb(tmp_path, capsys)
    change_files(kb, "add", [_write(src, "alien.txt", ALIEN)], progress=False)
    graph, ctx = get_graph("fusion"), context_for("fusion", kb=str(kb))
    alien = graph.invoke({"question": "who directed Alien"}, context=ctx)
    assert graph.invoke({"question": "who directed Collateral"}, context=ctx)["answer"] == "Michael Mann"
    delete(kb, sources=["films.txt"], progress=False)
    after = graph.invoke({"question": "who directed Alien"}, context=ctx)
    assert after["answer"] == alien["answer"] == "Ridley Scott"
    assert after["ranked"][0]["name"] == alien["ranked"][0]["name"] == "Ridley Scott"
    assert "Collateral" not in {r["name"] for r in after["ranked"]}
    assert "Collateral" not in {e.id for e in open_kb(kb).graph.entities}


def test_deleting_an_entity_file_takes_its_descriptions_and_unused_entities(tmp_path, emb, capsys):
    kb, src = _films_kb(tmp_path, capsys)
    rows = [
        {"id": "Heat", "name": "Heat", "type": "movie", "text": "A 1995 heist film."},
        {"id": "Ronin", "name": "Ronin", "type": "movie", "text": "A 1998 spy film."},
    ]
    about = _write(src, "about.jsonl", "\n".join(json.dumps(r) for r in rows))
    change_files(kb, "add", [], entities=about, progress=False)
    assert _vectors(kb)[("entity", "Heat")][0] == "Heat: A 1995 heist film."
    assert ("entity", "Ronin") in _vectors(kb)
    report = delete(kb, sources=[about], progress=False)
    after = _vectors(kb)
    assert after[("entity", "Heat")][0] == "Heat", "Heat stays (films.txt names it), without the file's text"
    assert ("entity", "Ronin") not in after and report.removed["entities"] == 1
    manifest = json.loads((kb / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["change"]["deleted"] == ["about.jsonl"]


def test_documents_with_replace_make_a_kb_of_those_documents_only(tmp_path, emb, capsys):
    kb, _ = _films_kb(tmp_path, capsys)
    folder = _docs(tmp_path)
    assert main(["ingest", "--kb", str(kb), "--documents", str(folder / "heat.md"), "--replace"]) == 0
    assert _edges(kb) == set() and set(_vectors(kb)) == {("passage", "heat.md#0")}
