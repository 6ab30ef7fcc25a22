"""A graph-server KB changes like an in-memory one (issue 28 item 2), on a real FalkorDB.

``--add`` and ``kb delete`` without a server flag export the new build to the server the live
build uses (a graph or namespace of its own, as every build), and the KB answers from it.
"""

from __future__ import annotations

import hashlib
import uuid

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from hybridrag.app.cli import main
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.kb_contents import read_existing
from hybridrag.kb.model import Triple

pytestmark = pytest.mark.integration


class HashEmbeddings(Embeddings):
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
    fake = HashEmbeddings()
    monkeypatch.setattr("hybridrag.kb.ingest.get_embeddings", lambda spec: fake)
    monkeypatch.setattr("hybridrag.kb.base.get_embeddings", lambda spec: fake)
    return fake


def _directors(kb) -> set[Triple]:
    k = KnowledgeBase(kb)
    try:
        assert type(k.graph).__name__ != "InMemoryGraphStore", "the live build reads its graph from the server"
        films = [e for name in ("Heat", "Alien", "Collateral") for e in k.graph.lookup(name)]
        return set(k.graph.neighbors([e.id for e in films], ["directed_by"], "out"))
    finally:
        k.graph.close()  # type: ignore[attr-defined]


@pytest.mark.parametrize("backend", ["neo4j", "falkordb", "falkordb-named"])
def test_add_and_delete_on_a_graph_server_kb(tmp_path, emb, module_falkordb, capsys, backend):
    films = tmp_path / "films.txt"
    films.write_text("Heat|directed_by|Michael Mann\nCollateral|directed_by|Michael Mann\n", encoding="utf-8")
    alien = tmp_path / "alien.txt"
    alien.write_text("Alien|directed_by|Ridley Scott\n", encoding="utf-8")
    server = {
        "neo4j": ["--neo4j", module_falkordb.uri],
        "falkordb": ["--falkordb", module_falkordb.redis_uri],
        "falkordb-named": ["--falkordb", f"{module_falkordb.redis_uri}?graph=films_{uuid.uuid4().hex[:6]}"],
    }[backend]
    kb = tmp_path / "kb"
    assert main(["ingest", "--kb", str(kb), "--triples", str(films), *server]) == 0
    first = read_existing(kb).manifest["graph"]
    assert main(["ingest", "--kb", str(kb), "--triples", str(alien), "--add"]) == 0
    added = read_existing(kb).manifest["graph"]
    assert added["backend"] == first["backend"] and added != first, "a graph of the new build's own"
    if backend == "falkordb-named":
        assert added["graph"].split(".")[0] == first["graph"].split(".")[0], "the ?graph= name is kept"
    assert _directors(kb) == {
        Triple("Heat", "directed_by", "Michael Mann"),
        Triple("Collateral", "directed_by", "Michael Mann"),
        Triple("Alien", "directed_by", "Ridley Scott"),
    }
    assert main(["kb", "delete", "--kb", str(kb), "--source", "films.txt"]) == 0
    assert "removed 2 triples" in capsys.readouterr().out
    assert _directors(kb) == {Triple("Alien", "directed_by", "Ridley Scott")}


def test_documents_added_and_deleted_stay_on_the_graph_server(tmp_path, emb, module_falkordb, capsys):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "heat.md").write_text("Heat is a 1995 crime film directed by Michael Mann.", encoding="utf-8")
    (docs / "alien.md").write_text("Alien is a 1979 film directed by Ridley Scott.", encoding="utf-8")
    films = tmp_path / "films.txt"
    films.write_text("Heat|directed_by|Michael Mann\n", encoding="utf-8")
    kb = tmp_path / "kb"
    assert main(["ingest", "--kb", str(kb), "--triples", str(films), "--falkordb", module_falkordb.redis_uri]) == 0
    assert main(["ingest", "--kb", str(kb), "--documents", str(docs), "--add"]) == 0
    live = read_existing(kb)
    assert live.manifest["graph"]["backend"] == "falkordb" and len(live.passages) == 2
    assert main(["kb", "delete", "--kb", str(kb), "--document", "alien.md"]) == 0
    live = read_existing(kb)
    assert live.manifest["graph"]["backend"] == "falkordb" and [p.id for p in live.passages] == ["heat.md#0"]
    assert _directors(kb) == {Triple("Heat", "directed_by", "Michael Mann")}
