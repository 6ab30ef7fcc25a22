"""Ingest never leaves a half-written KB live: builds swap atomically, a lock keeps ingests apart,
embeddings resume by chunk, opening checks the parts agree, and open_kb notices a rebuild.

A "kill" here is a BaseException raised from inside a stage (nothing in ingest catches it);
tests/integration/test_ingest_kill.py does the same with SIGKILL on a real process.
"""

import contextvars
import hashlib
import json
import shutil
import threading

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from hybridrag.app.cli import main
from hybridrag.kb.base import KnowledgeBase, open_kb, same_kb_build
from hybridrag.kb.ingest import ingest
from hybridrag.kb.model import KBError
from hybridrag.kb.text_index import DenseIndex

OLD = "Heat|directed_by|Michael Mann\nHeat|release_year|1995\n"
NEW = (
    "Alien|directed_by|Ridley Scott\nAlien|release_year|1979\nBlade Runner|directed_by|Ridley Scott\n"
    "Blade Runner|release_year|1982\n"
)  # 5 entities


class Killed(BaseException):
    """Stands for SIGKILL: not an Exception, so no handler in ingest can swallow it."""


class FakeEmbeddings(Embeddings):
    """8-dim vectors from a hash of the text; records every batch; may call a hook per batch."""

    def __init__(self, hook=None):
        self.batches, self.hook = [], hook

    def _vec(self, text):
        seed = int(hashlib.md5(text.encode()).hexdigest()[:8], 16)
        return np.random.default_rng(seed).normal(size=8).tolist()

    def embed_documents(self, texts):
        self.batches.append(list(texts))
        if self.hook:
            self.hook(len(self.batches))
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)


@pytest.fixture
def emb(monkeypatch):
    fake = FakeEmbeddings()
    monkeypatch.setattr("hybridrag.kb.ingest.get_embeddings", lambda spec: fake)
    monkeypatch.setattr("hybridrag.kb.base.get_embeddings", lambda spec: fake)
    return fake


def _triples(tmp_path, text, name="t.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _kill_at_indexes(monkeypatch):
    def boom(*a, **k):
        raise Killed()

    monkeypatch.setattr("hybridrag.kb.ingest.DenseIndex.build", boom)


def test_killed_first_ingest_leaves_a_kb_every_command_refuses(tmp_path, emb, monkeypatch, capsys):
    kb = tmp_path / "kb"
    _kill_at_indexes(monkeypatch)
    with pytest.raises(Killed):
        ingest(kb, [_triples(tmp_path, OLD)], progress=False)
    with pytest.raises(KBError, match="incomplete KB .*stage 'indexes'.*re-run `hybridrag ingest"):
        open_kb(kb)
    assert main(["ask", "who directed Heat", "--kb", str(kb)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: incomplete KB") and err.count("\n") == 1
    monkeypatch.undo()
    monkeypatch.setattr("hybridrag.kb.ingest.get_embeddings", lambda spec: emb)
    ingest(kb, [_triples(tmp_path, OLD)], progress=False)  # re-run rebuilds
    assert open_kb(kb).graph.counts() == {"entities": 3, "triples": 2}
    assert not list((kb / "builds").glob("*.partial")) and not (kb / ".ingest-work").exists()


def test_killed_reingest_keeps_the_previous_kb_whole(tmp_path, emb, monkeypatch):
    kb = tmp_path / "kb"
    ingest(kb, [_triples(tmp_path, OLD)], progress=False)
    emb.hook = lambda n: (_ for _ in ()).throw(Killed())  # killed during embeddings
    with pytest.raises(Killed):
        ingest(kb, [_triples(tmp_path, NEW, "new.txt")], progress=False)
    opened = KnowledgeBase(kb)
    assert opened.graph.lookup("Heat") and not opened.graph.lookup("Alien")
    assert opened.dense.index.ntotal == len(opened.docs) == 3


def test_query_during_reingest_sees_the_old_build_then_the_new(tmp_path, emb):
    kb = tmp_path / "kb"
    ingest(kb, [_triples(tmp_path, OLD)], progress=False)
    seen = []
    emb.hook = lambda n: seen.append(KnowledgeBase(kb))  # a reader in the middle of the re-ingest
    ingest(kb, [_triples(tmp_path, NEW, "new.txt")], progress=False)
    assert seen and all(k.graph.counts()["entities"] == 3 and len(k.docs) == 3 for k in seen)
    after = KnowledgeBase(kb)
    assert after.graph.counts()["entities"] == 5 and after.dense.index.ntotal == 5


def test_two_ingests_into_one_directory_cannot_interleave(tmp_path, emb, capsys):
    kb, inside, release = tmp_path / "kb", threading.Event(), threading.Event()
    emb.hook = lambda n: (inside.set(), release.wait(20))
    first = threading.Thread(target=ingest, args=(kb, [_triples(tmp_path, OLD)]), kwargs={"progress": False})
    first.start()
    try:
        assert inside.wait(20)
        assert main(["ingest", "--kb", str(kb), "--triples", str(_triples(tmp_path, NEW, "n.txt"))]) == 2
        err = capsys.readouterr().err
        assert "another ingest is writing KB" in err and err.count("\n") == 1
        waiter = threading.Thread(
            target=ingest, args=(kb, [tmp_path / "n.txt"]), kwargs={"progress": False, "wait": 20}
        )
        waiter.start()  # --wait: runs after the first one finishes
    finally:
        release.set()
        first.join()
    waiter.join()
    assert KnowledgeBase(kb).graph.counts()["entities"] == 5


def test_embeddings_resume_from_the_chunks_a_killed_run_finished(tmp_path, emb, monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_EMBED_CHUNK", "1")
    kb, triples = tmp_path / "kb", _triples(tmp_path, NEW)
    emb.hook = lambda n: n == 4 and (_ for _ in ()).throw(Killed())  # dies in the 4th of 5 chunks
    with pytest.raises(Killed):
        ingest(kb, [triples], progress=False)
    emb.hook, emb.batches = None, []
    report = ingest(kb, [triples], progress=False)
    assert (report.embed_chunks, report.embed_chunks_reused) == (5, 3)
    assert len(emb.batches) == 2  # only the chunks the killed run had not saved
    fresh = FakeEmbeddings()
    monkeypatch.setattr("hybridrag.kb.ingest.get_embeddings", lambda spec: fresh)
    ingest(tmp_path / "fresh", [triples], progress=False)
    got, want = (
        DenseIndex.load((p / "manifest.json").resolve().parent / "dense.faiss") for p in (kb, tmp_path / "fresh")
    )
    assert np.allclose(got.index.reconstruct_n(0, 5), want.index.reconstruct_n(0, 5))


def test_open_kb_reopens_a_rebuilt_kb(tmp_path, emb):
    kb = tmp_path / "kb"
    ingest(kb, [_triples(tmp_path, OLD)], progress=False)
    first = open_kb(kb)
    assert open_kb(kb) is first
    ingest(kb, [_triples(tmp_path, NEW, "new.txt")], progress=False)
    second = open_kb(kb)
    assert second is not first and second.graph.lookup("Alien")
    assert open_kb(kb) is second


def _build(tmp_path, emb, text=OLD, name="kb"):
    ingest(tmp_path / name, [_triples(tmp_path, text, f"{name}.txt")], progress=False)
    return tmp_path / name, (tmp_path / name / "manifest.json").resolve().parent  # the live build's folder


def test_parts_from_another_ingest_are_refused_with_the_mismatch(tmp_path, emb):
    kb, build = _build(tmp_path, emb, NEW)
    _, other = _build(tmp_path, emb, OLD, "other")
    original = build / "dense.faiss"
    shutil.copy(original, tmp_path / "dense.faiss")
    shutil.copy(other / "dense.faiss", original)  # the old 3-row index beside the new 5-row table
    with pytest.raises(KBError, match=r"inconsistent KB .*dense.faiss has \d+ bytes, the manifest says"):
        KnowledgeBase(kb)
    manifest = json.loads((build / "manifest.json").read_text())
    manifest.pop("files", None)  # without the file sizes, the counts still disagree
    (build / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(KBError, match=r"inconsistent KB .*dense.faiss rows = 3, the manifest says 5"):
        KnowledgeBase(kb)
    shutil.copy(tmp_path / "dense.faiss", original)
    for name in ("graph.npz", "entities.jsonl", "graph.json"):
        shutil.copy(other / name, build / name)
    with pytest.raises(KBError, match=r"inconsistent KB .*graph entities = 3, the manifest says 5"):
        KnowledgeBase(kb)


def _legacy(tmp_path, emb, graph_from=None):
    """A KB in the first layout (parts at the top, format 1), as the previous release wrote it."""
    _, build = _build(tmp_path, emb, NEW, "src")
    legacy = tmp_path / "legacy"
    shutil.copytree(build, legacy)
    manifest = json.loads((legacy / "manifest.json").read_text())
    for key in ("build_id", "files", "embedding_chunks"):
        manifest.pop(key, None)
    (legacy / "manifest.json").write_text(json.dumps({**manifest, "format_version": 1}))
    for name in ("graph.npz", "entities.jsonl", "graph.json") if graph_from else ():
        shutil.copy(graph_from / name, legacy / name)
    return legacy


def test_first_layout_kbs_still_open_and_a_mixed_one_is_refused(tmp_path, emb):
    assert KnowledgeBase(_legacy(tmp_path, emb)).graph.counts()["entities"] == 5
    shutil.rmtree(tmp_path / "legacy")
    _, old_build = _build(tmp_path, emb, OLD, "old")
    mixed = _legacy(tmp_path, emb, graph_from=old_build)  # a re-ingest's graph beside the other parts
    with pytest.raises(KBError, match="inconsistent KB .*graph entities = 3, the manifest says 5"):
        KnowledgeBase(mixed)


def test_graph_files_from_two_ingests_are_a_kb_error_not_an_index_error(tmp_path, emb):
    _, big = _build(tmp_path, emb, NEW, "big")
    _, small = _build(tmp_path, emb, OLD, "small")
    shutil.copy(big / "graph.npz", small / "graph.npz")
    manifest = json.loads((small / "manifest.json").read_text())
    manifest.pop("files", None)
    (small / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(KBError, match="cannot read graph.npz .*names entity 4 but entities.jsonl has 3 rows"):
        KnowledgeBase(tmp_path / "small")


def test_reingest_into_a_first_layout_kb_moves_it_to_builds(tmp_path, emb):
    legacy = _legacy(tmp_path, emb)
    ingest(legacy, [_triples(tmp_path, OLD)], progress=False)
    assert not (legacy / "docs.jsonl").exists() and (legacy / "manifest.json").is_symlink()
    assert json.loads((legacy / "manifest.json").read_text())["format_version"] == 2
    assert KnowledgeBase(legacy).graph.counts()["entities"] == 3


def test_a_query_model_of_another_dimension_is_a_kb_error(tmp_path, emb, monkeypatch):
    kb, _ = _build(tmp_path, emb)

    class Wide(FakeEmbeddings):
        def _vec(self, text):
            return [1.0] * 16

    monkeypatch.setattr("hybridrag.kb.base.get_embeddings", lambda spec: Wide())
    with pytest.raises(KBError, match="give 16-dim vectors but the KB's index holds 8-dim"):
        KnowledgeBase(kb).dense_search("Heat")


def test_a_damaged_chunk_file_is_embedded_again(tmp_path, emb, monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_EMBED_CHUNK", "2")
    kb, triples = tmp_path / "kb", _triples(tmp_path, NEW)
    emb.hook = lambda n: n == 3 and (_ for _ in ()).throw(Killed())
    with pytest.raises(Killed):
        ingest(kb, [triples], progress=False)
    saved = sorted((kb / ".ingest-work" / "embeddings").glob("*.npy"))
    assert len(saved) == 2
    saved[0].write_bytes(saved[0].read_bytes()[:-7])  # torn by a power loss
    emb.hook = None
    report = ingest(kb, [triples], progress=False)
    assert (report.embed_chunks, report.embed_chunks_reused) == (3, 1)
    assert KnowledgeBase(kb).dense.index.ntotal == 5


def test_old_builds_are_removed_with_the_server_graphs_only_they_used(tmp_path, emb, monkeypatch):
    made, dropped = [], []

    def export(backend, uri, store, progress=True, **target):
        made.append({"backend": backend, "uri": uri, "graph": f"g{len(made) + 1}"})
        return made[-1]

    monkeypatch.setattr("hybridrag.kb.graph_backends.export_graph", export)
    monkeypatch.setattr("hybridrag.kb.graph_backends.drop_graph", dropped.append)
    monkeypatch.setattr("hybridrag.kb.graph_backends.check_reachable", lambda backend, uri: None)  # no server here
    kb = tmp_path / "kb"
    for _ in range(3):
        ingest(kb, [_triples(tmp_path, OLD)], falkordb_uri="redis://graphs:6379", progress=False)
    builds = sorted(p.name for p in (kb / "builds").iterdir())
    assert len(builds) == 2 and (kb / "current").resolve().name == builds[-1]  # live + the previous one
    assert dropped == [made[0]]


def test_one_request_keeps_one_build_across_a_rebuild(tmp_path, emb):
    kb = tmp_path / "kb"
    ingest(kb, [_triples(tmp_path, OLD)], progress=False)
    with same_kb_build():
        first = open_kb(kb)
        ingest(kb, [_triples(tmp_path, NEW, "new.txt")], progress=False)
        in_thread = []
        worker = threading.Thread(target=contextvars.copy_context().run, args=(lambda: in_thread.append(open_kb(kb)),))
        worker.start()
        worker.join()
        assert open_kb(kb) is first and in_thread == [first]
    assert open_kb(kb) is not first and open_kb(kb).graph.lookup("Alien")
