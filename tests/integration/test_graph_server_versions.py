"""Graph-server KBs are versioned like in-memory ones, on a real FalkorDB.

Every build writes a graph of its own (FalkorDB's client: a graph per build; the Bolt driver: a label
namespace per build in the one database), the swap of ``current`` is the commit, and a graph is
dropped only with its build. Checked on the three paths (``--neo4j`` over FalkorDB's Bolt layer,
``--falkordb`` with and without ``?graph=``): re-ingests answer after each; a re-ingest that fails
validation, or is killed during the export, leaves the previous KB answering; graphs of removed
builds are gone; two KB directories on one server stay apart, and a ``?graph=`` name clash is refused
unless every KB sharing the name says ``&shared=1``.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from hybridrag.app.cli import main
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.ingest import ingest
from hybridrag.kb.model import KBError, Triple

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FILMS = {
    "A": ("Heat", "Michael Mann", 1995),
    "B": ("Alien", "Ridley Scott", 1979),
    "C": ("Blade Runner", "Ridley Scott", 1982),
    "D": ("Ran", "Akira Kurosawa", 1985),
}
BACKENDS = ["neo4j", "falkordb", "falkordb-named"]


class Killed(BaseException):
    """Stands for SIGKILL: not an Exception, so no handler in ingest can swallow it."""


class FakeEmbeddings(Embeddings):
    """8-dim vectors from a hash of the text (no model to load)."""

    def _vec(self, text):
        seed = int(hashlib.md5(text.encode()).hexdigest()[:8], 16)
        return np.random.default_rng(seed).normal(size=8).tolist()

    def embed_documents(self, texts):
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)


@pytest.fixture
def emb(monkeypatch):
    fake = FakeEmbeddings()
    monkeypatch.setattr("hybridrag.kb.ingest.get_embeddings", lambda spec: fake)
    monkeypatch.setattr("hybridrag.kb.base.get_embeddings", lambda spec: fake)
    return fake


def _name() -> str:
    return f"movies_{uuid.uuid4().hex[:8]}"


def _uri(server, backend: str, name: str | None = None, extra: str = "") -> dict:
    """The ingest keyword naming the graph server of ``backend``."""
    if backend == "neo4j":
        return {"neo4j_uri": server.uri}
    if backend == "falkordb":
        return {"falkordb_uri": server.redis_uri}
    return {"falkordb_uri": f"{server.redis_uri}?graph={name or _name()}{extra}"}


def _triples(folder: Path, key: str, relation: str = "directed_by") -> Path:
    film, director, year = FILMS[key]
    path = folder / f"{key}-{relation.replace(' ', '_')}-{uuid.uuid4().hex[:6]}.txt"
    path.write_text(f"{film}|{relation}|{director}\n{film}|release_year|{year}\n", encoding="utf-8")
    return path


def _answers(kb: Path, key: str) -> None:
    """The live build opens (its parts agree) and answers with film ``key`` only."""
    film, director, _ = FILMS[key]
    k = KnowledgeBase(kb)
    try:
        assert k.graph.counts() == {"entities": 3, "triples": 2}
        [e] = k.graph.lookup(film)
        assert k.graph.neighbors([e.id], ["directed_by"], "out") == [Triple(film, "directed_by", director)]
        assert not any(k.graph.lookup(f) for f, *_ in FILMS.values() if f != film)
    finally:
        k.graph.close()  # type: ignore[attr-defined]


def _entries(kb: Path) -> list[dict]:
    """Graph entries of the finished builds on disk (the live one and the kept previous one)."""
    return [
        json.loads((p / "manifest.json").read_text(encoding="utf-8"))["graph"]
        for p in sorted((kb / "builds").iterdir())
        if not p.name.endswith(".partial")
    ]


def _live_entry(kb: Path) -> dict:
    return json.loads((kb / "current" / "manifest.json").read_text(encoding="utf-8"))["graph"]


def _exists(entry: dict) -> bool:
    from hybridrag.kb.graph_backends import graph_exists

    return graph_exists(entry)


@pytest.mark.parametrize("backend", BACKENDS)
def test_reingest_answers_each_time_and_drops_only_removed_builds_graphs(tmp_path, emb, module_falkordb, backend):
    kb, seen = tmp_path / "kb", []
    target = _uri(module_falkordb, backend)
    for key in ("A", "B", "C", "C"):
        ingest(kb, [_triples(tmp_path, key)], progress=False, **target)
        _answers(kb, key)
        if _live_entry(kb) not in seen:
            seen.append(_live_entry(kb))
        on_disk = _entries(kb)
        assert [_exists(e) for e in seen] == [e in on_disk for e in seen]
    assert len(seen) == 4 and len(_entries(kb)) == 2  # each build its own graph; two kept, two dropped


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reingest_failing_validation_leaves_the_previous_kb_answering(tmp_path, emb, module_falkordb, backend):
    kb, target = tmp_path / "kb", _uri(module_falkordb, backend)
    ingest(kb, [_triples(tmp_path, "A")], progress=False, **target)
    with pytest.raises(KBError, match="invalid relation type 'directed by'"):
        ingest(kb, [_triples(tmp_path, "B", relation="directed by")], progress=False, **target)
    _answers(kb, "A")
    assert not list((kb / "builds").glob("*.partial"))
    ingest(kb, [_triples(tmp_path, "C")], progress=False, **target)
    _answers(kb, "C")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reingest_killed_during_the_export_leaves_the_previous_kb_answering(
    tmp_path, emb, module_falkordb, monkeypatch, backend
):
    import hybridrag.kb.graph_cypher_store as gcs

    kb, target = tmp_path / "kb", _uri(module_falkordb, backend)
    ingest(kb, [_triples(tmp_path, "A")], progress=False, **target)

    def killed(*args, **kwargs):  # nodes and edges are written; the kill comes before the schema
        raise Killed()

    with monkeypatch.context() as m:
        m.setattr(gcs, "write_meta", killed)
        with pytest.raises(Killed):
            ingest(kb, [_triples(tmp_path, "B")], progress=False, **target)
    _answers(kb, "A")
    [partial] = (kb / "builds").glob("*.partial")
    leftover = json.loads((partial / "graph-target.json").read_text(encoding="utf-8"))
    assert _exists(leftover)  # the half-written graph of the killed build
    ingest(kb, [_triples(tmp_path, "C")], progress=False, **target)
    _answers(kb, "C")
    assert not _exists(leftover)  # the next ingest dropped it with the partial build


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_kb_directories_on_one_server_stay_independent(tmp_path, emb, module_falkordb, backend):
    one, two = tmp_path / "one", tmp_path / "two"
    ingest(one, [_triples(tmp_path, "A")], progress=False, **_uri(module_falkordb, backend))
    ingest(two, [_triples(tmp_path, "B")], progress=False, **_uri(module_falkordb, backend))
    _answers(one, "A")
    _answers(two, "B")
    ingest(one, [_triples(tmp_path, "C")], progress=False, **_uri(module_falkordb, backend))
    ingest(one, [_triples(tmp_path, "D")], progress=False, **_uri(module_falkordb, backend))
    _answers(one, "D")
    _answers(two, "B")


def test_a_graph_name_owned_by_another_kb_is_refused(tmp_path, emb, module_falkordb):
    name = _name()
    one, two = tmp_path / "one", tmp_path / "two"
    ingest(one, [_triples(tmp_path, "A")], progress=False, **_uri(module_falkordb, "falkordb-named", name))
    with pytest.raises(KBError, match=f"graph name '{name}' .* is used by another KB directory") as err:
        ingest(two, [_triples(tmp_path, "B")], progress=False, **_uri(module_falkordb, "falkordb-named", name))
    assert str(one) in str(err.value) and "&shared=1" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(KBError, match="is used by another KB directory"):  # the owner has not opted in
        ingest(
            two, [_triples(tmp_path, "B")], progress=False, **_uri(module_falkordb, "falkordb-named", name, "&shared=1")
        )
    _answers(one, "A")
    ingest(one, [_triples(tmp_path, "C")], progress=False, **_uri(module_falkordb, "falkordb-named", name))
    _answers(one, "C")  # the owner itself re-ingests freely


def test_a_graph_name_is_shared_when_every_kb_opts_in(tmp_path, emb, module_falkordb):
    name = _name()
    one, two = tmp_path / "one", tmp_path / "two"
    shared = _uri(module_falkordb, "falkordb-named", name, "&shared=1")
    ingest(one, [_triples(tmp_path, "A")], progress=False, **shared)
    ingest(two, [_triples(tmp_path, "B")], progress=False, **shared)
    ingest(one, [_triples(tmp_path, "C")], progress=False, **shared)
    ingest(one, [_triples(tmp_path, "D")], progress=False, **shared)
    _answers(one, "D")
    _answers(two, "B")
    assert _live_entry(one)["graph"].startswith(f"{name}.") and _live_entry(two)["graph"].startswith(f"{name}.")


def test_the_cli_refuses_a_name_clash_in_one_line(tmp_path, emb, module_falkordb, capsys):
    name = _name()
    uri = f"{module_falkordb.redis_uri}?graph={name}"
    codes = [
        main(["ingest", "--kb", str(tmp_path / kb), "--triples", str(_triples(tmp_path, key)), "--falkordb", uri])
        for kb, key in (("one", "A"), ("two", "B"))
    ]
    err = capsys.readouterr().err  # progress bars, then the error
    assert codes == [0, 2] and "Traceback" not in err
    assert [line for line in err.splitlines() if "another KB directory" in line] == [err.strip().splitlines()[-1]]
    assert not (tmp_path / "two" / "current").exists()


# -- a real process killed with SIGKILL while it holds after the export --------------------------------
def _env(hold: str) -> dict:
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": str(ROOT),
        "HYBRIDRAG_TEST_INGEST_HOLD": hold,
        "HYBRIDRAG_TEST_INGEST_HOLD_SECONDS": "180",
    }


def _held(kb: Path, proc: subprocess.Popen) -> None:
    held, deadline = kb / ".ingest-work" / "held", time.monotonic() + 180
    while not held.exists() or json.loads(held.read_text(encoding="utf-8"))["pid"] != proc.pid:
        if proc.poll() is not None:
            pytest.fail(f"ingest ended before the hold (exit {proc.returncode}): {proc.stderr.read()[-2000:]}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("ingest did not reach the hold")
        time.sleep(0.1)


@pytest.mark.parametrize("backend", ["neo4j", "falkordb-named"])
def test_sigkill_after_the_export_leaves_the_previous_kb_answering(tmp_path, module_falkordb, backend):
    kb, target = tmp_path / "kb", _uri(module_falkordb, backend)
    ingest(kb, [_triples(tmp_path, "A")], progress=False, **target)
    flag, uri = ("--neo4j", target["neo4j_uri"]) if backend == "neo4j" else ("--falkordb", target["falkordb_uri"])
    cmd = [
        sys.executable,
        "-m",
        "hybridrag.app.cli",
        "ingest",
        "--kb",
        str(kb),
        "--triples",
        str(_triples(tmp_path, "B")),
        flag,
        uri,
        "--replace",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=_env("export"), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        _held(kb, proc)
        _answers(kb, "A")  # the live KB answers while the new graph is written
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    _answers(kb, "A")
    ingest(kb, [_triples(tmp_path, "C")], progress=False, **target)
    _answers(kb, "C")


def test_a_kb_from_before_graph_versions_reingests_and_keeps_its_old_graph(
    tmp_path, emb, module_falkordb, monkeypatch, caplog
):
    import hybridrag.kb.ingest as ing
    from hybridrag.kb.graph_backends import export_graph
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    kb, target = tmp_path / "kb", _uri(module_falkordb, "neo4j")
    with Neo4jGraphStore.connect(module_falkordb.uri) as plain:
        plain.clear()
    with monkeypatch.context() as m:  # the earlier export: plain labels, no namespace in the manifest
        m.setattr(
            ing,
            "export_build",
            lambda root, out, backend, uri, store, progress: export_graph(backend, uri, store, progress),
        )
        ingest(kb, [_triples(tmp_path, "A")], progress=False, **target)
    assert "namespace" not in _live_entry(kb)
    _answers(kb, "A")
    for key in ("B", "C"):
        ingest(kb, [_triples(tmp_path, key)], progress=False, **target)
        _answers(kb, key)
    assert any("has no namespace" in r.getMessage() for r in caplog.records)
    with Neo4jGraphStore.connect(module_falkordb.uri) as plain:
        assert plain.counts() == {"entities": 3, "triples": 2}  # left in place: other KBs may have merged into it
