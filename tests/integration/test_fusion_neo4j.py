"""Fusion with the graph in a real FalkorDB gives the in-memory ranking, over Bolt and over FalkorDB's
own client, on the whole bundled sample (names with apostrophes included: they used to crash the
server over Bolt).
"""

import pytest

from hybridrag.graphs import context_for, get_graph
from hybridrag.kb.ingest import ingest
from hybridrag.kb.sample import SAMPLE_SRC, TYPE_MAP

pytestmark = pytest.mark.integration
QUESTIONS = [
    "who directed Forrest Gump",
    "what movies did Tom Hanks star in",
    "which films were released in 1994",
    "who directed Charlie Wilson's War",
]


def _ingest(out, neo4j_uri=None, falkordb_uri=None):
    ingest(
        out,
        [SAMPLE_SRC / "triples.txt"],
        passages=SAMPLE_SRC / "passages.jsonl",
        type_map=TYPE_MAP,
        neo4j_uri=neo4j_uri,
        falkordb_uri=falkordb_uri,
        progress=False,
    )
    return out


@pytest.fixture(scope="module")
def memory_kb(tmp_path_factory):
    return _ingest(tmp_path_factory.mktemp("memory-kb"))


@pytest.fixture(scope="module")
def neo4j_kb(tmp_path_factory, module_falkordb):
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    with Neo4jGraphStore.connect(module_falkordb.uri) as store:
        store.clear()
    return _ingest(tmp_path_factory.mktemp("neo4j-kb"), neo4j_uri=module_falkordb.uri)


@pytest.fixture(scope="module")
def falkordb_kb(tmp_path_factory, module_falkordb):
    return _ingest(tmp_path_factory.mktemp("falkordb-kb"), falkordb_uri=module_falkordb.redis_uri)


@pytest.fixture(params=["neo4j", "falkordb"])
def server_kb(request):
    return request.param, request.getfixturevalue(f"{request.param}_kb")


@pytest.mark.parametrize("scoring", ["evidence", "paper"])
@pytest.mark.parametrize("question", QUESTIONS)
def test_same_ranking_as_memory_store(server_kb, memory_kb, question, scoring):
    g = get_graph("fusion")
    on_server = g.invoke({"question": question}, context=context_for("fusion", kb=str(server_kb[1]), scoring=scoring))
    in_memory = g.invoke({"question": question}, context=context_for("fusion", kb=str(memory_kb), scoring=scoring))
    key = lambda out: sorted((r["id"], round(r["score"], 6), r["source"]) for r in out["ranked"])  # noqa: E731
    assert key(on_server) == key(in_memory)
    if question in (QUESTIONS[0], QUESTIONS[3]):
        assert any(r["source"] == "kg" for r in on_server["ranked"])


def test_manifest_points_at_the_server(server_kb, memory_kb):
    from hybridrag.kb.base import open_kb
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    backend, kb_dir = server_kb
    kb = open_kb(kb_dir)
    assert kb.manifest["graph"]["backend"] == backend
    assert isinstance(kb.graph, {"neo4j": Neo4jGraphStore, "falkordb": FalkorDBGraphStore}[backend])
    assert kb.graph.counts() == open_kb(memory_kb).graph.counts()
    assert [e.id for e in kb.graph.lookup("charlie wilson's war")] == ["Charlie Wilson's War"]
