"""Hostile strings against a real FalkorDB, on the Bolt path (Neo4jGraphStore) and the native path
(FalkorDBGraphStore): no user string may reach the server's query text, whatever it does with parameters.

FalkorDB's Bolt layer splices parameters into the query text without escaping ``'`` (a question emptied
the graph), and falkordb-py splices them client-side (escaping only ``\\`` and ``"``). Every test here
runs on both paths; the in-memory store is the oracle for what a read must return.
"""

from __future__ import annotations

import re

import pytest
from conftest import memory_graph, write_test_graph
from falkordb_server import bolt_answers

from hybridrag.kb.build import assemble
from hybridrag.kb.graph_codec import SAFE
from hybridrag.kb.graph_cypher_store import REL_TYPE
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import Entity, Triple

pytestmark = pytest.mark.integration

INJECTION = "zz' lc='zz' match (n) detach delete n with count(*) as k //"
QUESTION = f'who directed "{INJECTION}"'
BIG_ID = "big_" + "x" * 8200
HOSTILE = [
    Entity("ocean's", "Ocean's Eleven", "movie", "Danny Ocean's crew; it's 'quoted'", ("Oceans 11", "L'Auberge")),
    Entity('say "hi"', 'The "Best" Film', 'type"quote', 'He said "no" \\" twice', ('a"b',)),
    Entity("C:\\dir\\", "back\\slash \\' \\\\ mid\\x", "t\\ype", "tab\there \\n literal \\", ("\\",)),
    Entity("line\nbreak", "Line\r\nBreak\u2028Sep", "multi\nline", "para1\n\npara2\r\n", ("x\ny",)),
    Entity("東京物語", "Tōkyō Monogatari 🎬", "映画", "Ünïcödé ß ﬁ İ \x00 nul", ("Токио", "e\u0301")),
    Entity(INJECTION, INJECTION, INJECTION, INJECTION, (INJECTION,)),
    Entity(BIG_ID, "N" * 9000 + "'s", "movie", "T'\"\\" * 5000, ("A\\'" * 3000, "short")),
]
TRIPLES = [
    Triple("ocean's", "directed_by", INJECTION),
    Triple(BIG_ID, "starred_actors", "東京物語"),
    Triple('say "hi"', "has_tags", "C:\\dir\\"),
    Triple("line\nbreak", "in_language", "東京物語"),
    Triple(INJECTION, "written_by", BIG_ID),
]


def _store(kind: str, server, graph: str):
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    if kind == "bolt":
        return Neo4jGraphStore.connect(server.uri)
    return FalkorDBGraphStore.connect(server.redis_uri, graph)


@pytest.fixture(params=["bolt", "native"])
def kind(request) -> str:
    return request.param


@pytest.fixture
def plain_store(kind, module_falkordb):
    """The small test graph (no hostile strings: today's code can write it)."""
    store = _store(kind, module_falkordb, "plain")
    write_test_graph(store)
    yield store
    store.close()


@pytest.fixture
def hostile_store(kind, module_falkordb):
    """A graph whose ids, names, types, texts and aliases are hostile strings."""
    store = _store(kind, module_falkordb, "hostile")
    store.clear()
    store.write(HOSTILE, TRIPLES, progress=False)
    yield store
    store.close()


def oracle() -> InMemoryGraphStore:
    return InMemoryGraphStore(*assemble(TRIPLES, {e.id: e for e in HOSTILE}))


def test_injected_question_leaves_the_graph_intact(plain_store):
    before = plain_store.counts()
    assert before == {"entities": 10, "triples": 13}
    calls = {
        "lookup": (lambda: plain_store.lookup(QUESTION), []),
        "lookup bare": (lambda: plain_store.lookup(INJECTION), []),
        "get": (lambda: plain_store.get(QUESTION), None),
        "get_many": (lambda: plain_store.get_many([QUESTION, INJECTION]), {}),
        "neighbors": (lambda: plain_store.neighbors([QUESTION]), []),
        "relation filter": (lambda: plain_store.neighbors(["marie"], relations=[INJECTION, QUESTION]), []),
        "target type": (lambda: plain_store.neighbors(["marie"], target_type=QUESTION), []),
        "ego graph": (lambda: plain_store.ego_graph([QUESTION], radius=2).distance, {}),
        "paths": (lambda: plain_store.paths([QUESTION], ["marie"]) + plain_store.paths(["marie"], [INJECTION]), []),
        "triples": (lambda: plain_store.triples([QUESTION, "marie"]), []),
    }
    for name, (call, expected) in calls.items():
        assert call() == expected, name
        assert plain_store.counts() == before, f"the graph changed after {name}"
    assert [e.id for e in plain_store.lookup("Marie Curie")] == ["marie"]


def test_injection_string_as_data_round_trips(hostile_store):
    evil = next(e for e in HOSTILE if e.id == INJECTION)
    assert hostile_store.get(INJECTION) == evil
    assert hostile_store.lookup(INJECTION) == [evil] and hostile_store.lookup(f"  {INJECTION.upper()} ") == [evil]
    assert hostile_store.lookup(QUESTION) == []
    assert hostile_store.neighbors(["ocean's"], target_type=INJECTION) == [Triple("ocean's", "directed_by", INJECTION)]
    assert hostile_store.counts() == {"entities": len(HOSTILE), "triples": len(TRIPLES)}


def test_hostile_values_round_trip_exactly(hostile_store):
    mem = oracle()
    assert hostile_store.get_many([e.id for e in HOSTILE]) == {e.id: e for e in HOSTILE}
    for e in HOSTILE:
        assert hostile_store.get(e.id) == e
        for probe in (e.id, e.name, *e.aliases, e.name.upper(), e.name.lower()):
            assert sorted(x.id for x in hostile_store.lookup(probe)) == sorted(x.id for x in mem.lookup(probe))
        assert set(hostile_store.neighbors([e.id])) == set(mem.neighbors([e.id]))
        typed = hostile_store.neighbors([e.id], target_type=e.type)
        assert set(typed) == set(mem.neighbors([e.id], target_type=e.type))
    ids = [e.id for e in HOSTILE]
    assert set(hostile_store.triples(ids)) == set(TRIPLES)
    assert hostile_store.ego_graph(["ocean's"], radius=3).distance == mem.ego_graph(["ocean's"], radius=3).distance
    assert {tuple(p) for p in hostile_store.paths(["ocean's"], ["東京物語"], max_hops=3)} == {
        tuple(p) for p in mem.paths(["ocean's"], ["東京物語"], max_hops=3)
    }
    schema = hostile_store.schema()
    assert schema.entity_types == mem.schema().entity_types
    assert schema.relation_types["directed_by"].tail_types == (INJECTION,)


def test_values_of_8kb_and_more_round_trip_and_the_server_survives(hostile_store, module_falkordb):
    big = next(e for e in HOSTILE if e.id == BIG_ID)
    assert len(big.id) > 8000 and len(big.name) > 8000 and len(big.text) > 8000 and len(big.aliases[0]) > 8000
    assert hostile_store.get(BIG_ID) == big
    assert hostile_store.lookup(big.name.lower()) == [big] and hostile_store.lookup(big.aliases[0]) == [big]
    assert hostile_store.neighbors([BIG_ID], direction="out") == [Triple(BIG_ID, "starred_actors", "東京物語")]
    assert module_falkordb.proc.poll() is None and bolt_answers(module_falkordb.bolt_port, 2)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _safe(text: str) -> bool:
    return bool(SAFE.match(text) or REL_TYPE.match(text))


def _exercise(store) -> None:
    store.clear()
    store.write(HOSTILE, TRIPLES, progress=False)
    for e in HOSTILE:
        store.get(e.id), store.lookup(e.name), store.neighbors([e.id], [INJECTION, "directed_by"], "both", e.type)
    store.lookup(QUESTION), store.ego_graph([INJECTION]), store.paths([INJECTION], [BIG_ID]), store.schema()
    store.triples([e.id for e in HOSTILE]), store.get_many([QUESTION])


def test_bolt_parameters_hold_only_safe_characters(module_falkordb, monkeypatch):
    """FalkorDB splices Bolt parameters into the query text: every string sent must be hex or a type."""
    import neo4j

    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    sent: list[tuple[str, dict]] = []
    run = neo4j.Session.run

    def spy(self, query, parameters=None, **kwargs):
        sent.append((query, dict(parameters or {})))
        return run(self, query, parameters, **kwargs)

    monkeypatch.setattr(neo4j.Session, "run", spy)
    with Neo4jGraphStore.connect(module_falkordb.uri) as store:
        _exercise(store)
    assert len(sent) > 50
    unsafe = [(q[:40], s[:60]) for q, params in sent for s in _strings(params) if not _safe(s)]
    assert unsafe == []
    assert not any(INJECTION[:6] in q or "Ocean" in q for q, _ in sent)


def test_native_query_text_holds_only_safe_characters(module_falkordb, monkeypatch):
    """falkordb-py builds ``CYPHER k=v`` headers: every quoted value in them must be hex or a type."""
    from falkordb.graph import Graph

    from hybridrag.kb.falkordb_store import FalkorDBGraphStore

    headers: list[str] = []
    build = Graph._build_params_header

    def spy(self, params):
        headers.append(build(self, params))
        return headers[-1]

    monkeypatch.setattr(Graph, "_build_params_header", spy)
    with FalkorDBGraphStore.connect(module_falkordb.redis_uri, "spied") as store:
        _exercise(store)
    assert len(headers) > 20
    for header in headers:
        assert "'" not in header and "\\" not in header, header[:200]
        assert all(_safe(v) for v in re.findall(r'"([^"]*)"', header)), header[:200]


def test_export_and_open_through_the_manifest_entry(module_falkordb, tmp_path):
    from hybridrag.kb.graph_backends import export_graph, open_graph

    cfg = export_graph("falkordb", f"{module_falkordb.redis_uri}?graph=from_manifest", memory_graph(), progress=False)
    assert cfg == {"backend": "falkordb", "uri": module_falkordb.redis_uri, "graph": "from_manifest"}
    store = open_graph(cfg, tmp_path)
    assert store.lookup(QUESTION) == [] and store.counts() == {"entities": 10, "triples": 13}
    assert store.get("marie").aliases == ("Maria Skłodowska", "Madame Curie")
    store.close()
