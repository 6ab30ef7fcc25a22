"""One GraphStore test suite on every backend: embedded, Bolt (Neo4jGraphStore on FalkorDB's Bolt layer)
and FalkorDB's own client (FalkorDBGraphStore); then what only graph servers do: timeouts, a frozen,
killed and restarted server, the Bolt GOODBYE stall."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import write_test_graph
from falkordb_server import free_port

from hybridrag.kb.model import Entity, GraphUnavailableError, KBError, Triple
from hybridrag.kb.store import GraphStore

ROOT = Path(__file__).resolve().parents[1]

T = Triple
MARIE_OUT = {
    T("marie", "spouse", "pierre"),
    T("marie", "born_in", "warsaw"),
    T("marie", "award_received", "nobel_physics"),
    T("marie", "employer", "sorbonne"),
    T("marie", "citizen_of", "france"),
    T("marie", "citizen_of", "poland"),
    T("marie", "discovered", "radium"),
}
MARIE_IN = {T("curie_unit", "named_after", "marie")}


def ids(entities: list[Entity]) -> list[str]:
    return [e.id for e in entities]


def test_protocol(graph_store):
    assert isinstance(graph_store, GraphStore)


def test_counts(graph_store):
    assert graph_store.counts() == {"entities": 10, "triples": 13}


def test_get(graph_store):
    assert graph_store.get("marie") == Entity(
        "marie", "Marie Curie", "person", "Physicist and chemist.", ("Maria Skłodowska", "Madame Curie")
    )
    assert graph_store.get("radium") == Entity("radium", "radium", "element", None, ())
    assert graph_store.get("Marie") is None
    assert graph_store.get("nobody") is None


def test_lookup(graph_store):
    assert ids(graph_store.lookup("Marie Curie")) == ["marie"]
    assert ids(graph_store.lookup("marie CURIE")) == ["marie"]  # name, any case
    assert ids(graph_store.lookup("  madame curie ")) == ["marie"]  # alias, stripped
    assert ids(graph_store.lookup("Maria Skłodowska")) == ["marie"]
    assert ids(graph_store.lookup("MARIE")) == ["marie"]  # id, any case
    assert ids(graph_store.lookup("Curie")) == ["pierre", "curie_unit"]  # exact-case alias first
    assert set(ids(graph_store.lookup("curie"))) == {"pierre", "curie_unit"}
    assert graph_store.lookup("nobody") == []


def test_neighbors_directions(graph_store):
    both = graph_store.neighbors(["marie"])
    assert len(both) == 8 and set(both) == MARIE_OUT | MARIE_IN
    assert set(graph_store.neighbors(["marie"], direction="out")) == MARIE_OUT
    assert graph_store.neighbors(["marie"], direction="in") == list(MARIE_IN)
    assert set(graph_store.neighbors(["paris"], direction="in")) == {
        T("pierre", "born_in", "paris"),
        T("sorbonne", "located_in", "paris"),
    }
    assert graph_store.neighbors(["paris"], direction="out") == [T("paris", "capital_of", "france")]
    assert graph_store.neighbors(["nobody"]) == []


def test_neighbors_filters(graph_store):
    citizen = {T("marie", "citizen_of", "france"), T("marie", "citizen_of", "poland")}
    assert set(graph_store.neighbors(["marie"], relations=["citizen_of"])) == citizen
    assert set(graph_store.neighbors(["marie"], relations=["citizen_of", "spouse", "no_such"])) == citizen | {
        T("marie", "spouse", "pierre")
    }
    assert graph_store.neighbors(["marie"], relations=[]) == []
    assert set(graph_store.neighbors(["marie"], direction="out", target_type="country")) == citizen
    assert graph_store.neighbors(["marie"], target_type="city") == [T("marie", "born_in", "warsaw")]
    assert graph_store.neighbors(["marie"], direction="in", target_type="unit") == list(MARIE_IN)
    assert graph_store.neighbors(["marie"], direction="in", relations=["spouse"]) == []
    assert set(graph_store.neighbors(["pierre", "warsaw"], relations=["born_in", "capital_of"])) == {
        T("pierre", "born_in", "paris"),
        T("marie", "born_in", "warsaw"),
        T("warsaw", "capital_of", "poland"),
    }


def test_ego_graph_radius_1(graph_store):
    sub = graph_store.ego_graph(["marie", "nobody"], radius=1)
    assert sub.seeds == ["marie"]
    assert sub.distance == {
        "marie": 0,
        **{n: 1 for n in ("pierre", "warsaw", "nobel_physics", "sorbonne", "france", "poland", "radium", "curie_unit")},
    }
    assert set(sub.triples) == MARIE_OUT | MARIE_IN and len(sub.triples) == 8
    assert sub.path_to("curie_unit") == [T("curie_unit", "named_after", "marie")]
    assert sub.path_to("marie") == []


def test_ego_graph_radius_2(graph_store):
    sub = graph_store.ego_graph(["marie"], radius=2)
    assert sub.distance["paris"] == 2 and len(sub.distance) == 10
    assert len(sub.triples) == 13 == len(set(sub.triples))
    path = sub.path_to("paris")
    assert len(path) == 2 and "marie" in (path[0].head, path[0].tail)
    assert "paris" in (path[1].head, path[1].tail)
    middle = ({path[0].head, path[0].tail} - {"marie"}).pop()
    assert middle in {"pierre", "sorbonne", "france"} and middle in (path[1].head, path[1].tail)


def test_ego_graph_relation_filter(graph_store):
    sub = graph_store.ego_graph(["marie"], radius=2, relations=["spouse", "born_in"])
    assert sub.distance == {"marie": 0, "pierre": 1, "warsaw": 1, "paris": 2}
    assert set(sub.triples) == {
        T("marie", "spouse", "pierre"),
        T("marie", "born_in", "warsaw"),
        T("pierre", "born_in", "paris"),
    }
    assert sub.path_to("paris") == [T("marie", "spouse", "pierre"), T("pierre", "born_in", "paris")]
    assert graph_store.ego_graph(["nobody"], radius=2).distance == {}


def test_paths(graph_store):
    found = graph_store.paths(["marie"], ["paris"], max_hops=2)
    assert len(found) == len(set(map(tuple, found))) and set(map(tuple, found)) == set(
        [
            (T("marie", "spouse", "pierre"), T("pierre", "born_in", "paris")),
            (T("marie", "employer", "sorbonne"), T("sorbonne", "located_in", "paris")),
            (T("marie", "citizen_of", "france"), T("paris", "capital_of", "france")),
        ]
    )
    assert graph_store.paths(["marie"], ["paris"], max_hops=1) == []
    three = graph_store.paths(["marie"], ["france"], max_hops=3)
    assert [len(p) for p in three] == [1, 3, 3]
    assert three[0] == [T("marie", "citizen_of", "france")]
    assert len(graph_store.paths(["marie"], ["france"], max_hops=3, limit=2)) == 2


def test_paths_stop_at_first_target_and_none_found(graph_store):
    found = graph_store.paths(["marie"], ["pierre", "paris"], max_hops=2)
    assert len(found) == len(set(map(tuple, found))) and set(map(tuple, found)) == set(
        [
            (T("marie", "spouse", "pierre"),),
            (T("marie", "award_received", "nobel_physics"), T("pierre", "award_received", "nobel_physics")),
            (T("marie", "employer", "sorbonne"), T("sorbonne", "located_in", "paris")),
            (T("marie", "citizen_of", "france"), T("paris", "capital_of", "france")),
        ]
    )
    assert graph_store.paths(["radium"], ["paris"], max_hops=2) == []
    assert graph_store.paths(["nobody"], ["paris"], max_hops=3) == []


def test_triples_induced(graph_store):
    got = graph_store.triples(["marie", "pierre", "paris", "nobel_physics", "nobody"])
    assert len(got) == 4 and set(got) == {
        T("marie", "spouse", "pierre"),
        T("pierre", "born_in", "paris"),
        T("marie", "award_received", "nobel_physics"),
        T("pierre", "award_received", "nobel_physics"),
    }
    assert graph_store.triples(["marie"]) == []


def test_schema(graph_store):
    schema = graph_store.schema()
    assert schema.entity_types == {
        "person": 2,
        "city": 2,
        "country": 2,
        "award": 1,
        "university": 1,
        "unit": 1,
        "element": 1,
    }
    assert set(schema.relation_types) == {
        "spouse",
        "born_in",
        "capital_of",
        "award_received",
        "employer",
        "located_in",
        "citizen_of",
        "named_after",
        "discovered",
    }
    born = schema.relation_types["born_in"]
    assert (born.head_types, born.tail_types, born.count) == (("person",), ("city",), 2)
    named = schema.relation_types["named_after"]
    assert (named.head_types, named.tail_types, named.count) == (("unit",), ("person",), 1)
    assert schema.relation_types["discovered"].tail_types == ("element",)
    assert "named_after(unit -> person)" in schema.describe()


# -- graph-server backends only ------------------------------------------------------------------------
@pytest.mark.integration
def test_invalid_relation_type_refused(server_graph_store):
    for bad in ["bad rel", "1st", "x`y", "r) DETACH DELETE (n", ""]:
        with pytest.raises(KBError, match="invalid relation type") as err:
            server_graph_store.write([Entity("a", "A")], [Triple("a", bad, "b")], progress=False)
        assert repr(bad) in str(err.value)
    assert server_graph_store.counts() == {"entities": 10, "triples": 13}  # nothing written


@pytest.mark.integration
def test_no_apoc_means_python_dice(server_graph_store):
    via_cypher = getattr(server_graph_store, "one_hop_dice", lambda *a: None)  # as agents/fusion/scoring.py
    assert via_cypher(["marie"], "Who did Marie Curie marry?", 5) is None


@pytest.mark.integration
def test_write_is_idempotent(server_graph_store):
    server_graph_store.write(
        [Entity("paris", "Paris", "city")], [T("paris", "capital_of", "france")], progress=False, batch_size=1
    )
    assert server_graph_store.counts() == {"entities": 10, "triples": 13}
    assert server_graph_store.schema().relation_types["capital_of"].count == 2


@pytest.mark.integration
def test_falkordb_bolt_is_not_taken_for_neo4j(neo4j_graph_store):
    """FalkorDB says ``Neo4j/5.13.0`` over Bolt; the store must still encode values and cap messages."""
    assert not neo4j_graph_store.genuine_neo4j
    assert neo4j_graph_store.codec.name == "hex" and 0 < neo4j_graph_store.max_message_bytes < 4000


def test_graph_timeout_setting(monkeypatch):
    from hybridrag.kb.graph_timeouts import graph_timeout

    monkeypatch.delenv("HYBRIDRAG_GRAPH_TIMEOUT", raising=False)
    assert graph_timeout() == 10.0
    monkeypatch.setenv("HYBRIDRAG_GRAPH_TIMEOUT", "2.5")
    assert graph_timeout() == 2.5
    for bad in ("0", "-1", "soon", "nan", "inf"):
        monkeypatch.setenv("HYBRIDRAG_GRAPH_TIMEOUT", bad)
        with pytest.raises(KBError, match="HYBRIDRAG_GRAPH_TIMEOUT"):
            graph_timeout()


def test_unreachable_server_is_one_line_kberror():
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    uri = f"bolt://127.0.0.1:{free_port()}"
    t = time.monotonic()
    with pytest.raises(GraphUnavailableError) as err:
        Neo4jGraphStore.connect(uri)
    msg = str(err.value)
    assert msg.startswith(f"cannot reach Neo4j at {uri}: ") and "\n" not in msg
    assert time.monotonic() - t < 30


def test_unreachable_falkordb_is_one_line_without_credentials():
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore

    port = free_port()
    t = time.monotonic()
    with pytest.raises(GraphUnavailableError) as err:
        FalkorDBGraphStore.connect(f"redis://admin:s3cret-pw@127.0.0.1:{port}", "g")
    msg = str(err.value)
    assert msg.startswith(f"cannot reach FalkorDB at redis://127.0.0.1:{port}") and "\n" not in msg
    assert "s3cret" not in msg and "admin" not in msg
    assert time.monotonic() - t < 10


# -- a frozen, killed and restarted server ---------------------------------------------------------------
def _open(kind: str, server, timeout: float):
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore
    from hybridrag.kb.neo4j_store import Neo4jGraphStore

    if kind == "neo4j":
        return Neo4jGraphStore.connect(server.uri, timeout=timeout)
    return FalkorDBGraphStore.connect(server.redis_uri, "faults", timeout=timeout)


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["neo4j", "falkordb"])
def test_frozen_server_times_out_then_same_store_recovers(private_falkordb, kind):
    store = _open(kind, private_falkordb, timeout=1.5)
    write_test_graph(store)
    private_falkordb.freeze()
    try:
        for call in (store.counts, lambda: store.lookup("Marie Curie")):
            t = time.monotonic()
            with pytest.raises(GraphUnavailableError) as err:
                call()
            took = time.monotonic() - t
            assert 1.0 < took < 10, took  # waited about the timeout, and did not hang (loose: a busy CI machine)
            assert "within 1.5 s" in str(err.value) and "\n" not in str(err.value)
    finally:
        private_falkordb.thaw()
    assert store.counts() == {"entities": 10, "triples": 13}
    assert [e.id for e in store.lookup("Marie Curie")] == ["marie"]
    store.close()


@pytest.mark.integration
@pytest.mark.parametrize("kind", ["neo4j", "falkordb"])
def test_killed_server_is_unavailable_then_same_store_recovers(private_falkordb, kind):
    store = _open(kind, private_falkordb, timeout=3)
    write_test_graph(store)
    private_falkordb.save()
    private_falkordb.kill()
    t = time.monotonic()
    with pytest.raises(GraphUnavailableError) as err:
        store.get("marie")
    assert time.monotonic() - t < 4 and "\n" not in str(err.value)
    private_falkordb.start()  # same ports, loads the saved graph
    assert store.get("marie").name == "Marie Curie"
    assert store.counts() == {"entities": 10, "triples": 13}
    store.close()


@pytest.mark.integration
def test_no_stall_after_another_process_closed_its_bolt_connection(private_falkordb):
    """``ingest --neo4j`` then ``ask``: FalkorDB stalled the next connection after the driver's GOODBYE."""
    code = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from conftest import write_test_graph
        from hybridrag.kb.neo4j_store import Neo4jGraphStore
        t = time.monotonic()
        store = Neo4jGraphStore.connect({private_falkordb.uri!r})
        if sys.argv[1] == "write":
            write_test_graph(store)
        print(store.counts()["triples"], round(time.monotonic() - t, 2))
        store.close()
    """)
    env = {**os.environ, "HYBRIDRAG_GRAPH_TIMEOUT": "20"}
    for step in ("write", "read", "read"):
        done = subprocess.run(
            [sys.executable, "-c", code, step], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, done.stderr[-2000:]
        triples, seconds = done.stdout.split()
        assert triples == "13" and float(seconds) < 5, (step, seconds)


# -- the pieces that keep user strings out of query text -------------------------------------------------
def test_hex_codec_round_trips_anything_into_safe_characters():
    from hybridrag.kb.graph_codec import HEX, PLAIN, SAFE, digest

    for text in ["", "a'b", 'q"q', "back\\slash", "nl\n\r\t", "東京 🎬", "lone \ud800 surrogate", "\x00", "x" * 9000]:
        stored = HEX.enc(text)
        assert SAFE.match(stored) and HEX.dec(stored) == text and PLAIN.enc(text) == text
        assert SAFE.match(digest(text)) and len(digest(text)) == 32
    assert HEX.enc(None) is None and digest("a") != digest("A")


def test_batches_stay_under_the_message_cap():
    from hybridrag.kb.graph_write import batches, message_bytes

    rows = [{"v": "ab" * n} for n in (10, 300, 5, 900, 2000, 1, 1, 1)]
    query = "UNWIND $rows AS row RETURN row"
    cap, base = 2500, message_bytes(query, {"rows": []})
    out = list(batches(rows, 3, cap, base))
    assert [r for chunk, _ in out for r in chunk] == rows
    for chunk, fits in out:
        assert len(chunk) <= 3
        assert (message_bytes(query, {"rows": chunk}) <= cap) == fits
        assert fits or len(chunk) == 1
    assert [fits for _, fits in out].count(False) == 1  # only the 4,000-character row
    assert list(batches(rows, 100, 0, base)) == [(rows, True)]


@pytest.mark.integration
def test_missing_falkordb_graph_is_refused(falkordb_server, tmp_path):
    from hybridrag.kb.graph_backends import open_graph

    cfg = {"backend": "falkordb", "uri": falkordb_server.redis_uri, "graph": "never_written"}
    with pytest.raises(KBError, match="graph 'never_written' not found at FalkorDB .*re-run `hybridrag ingest`"):
        open_graph(cfg, tmp_path)


@pytest.mark.integration
def test_graph_of_an_older_format_is_refused(falkordb_server):
    from hybridrag.kb.falkordb_store import FalkorDBGraphStore

    falkordb_server.command("GRAPH.QUERY", "old_format", "CREATE (:HybridragMeta {key: 'schema', schema: '{}'})")
    with pytest.raises(KBError, match="written with an older hybridrag"):
        FalkorDBGraphStore.connect(falkordb_server.redis_uri, "old_format")
