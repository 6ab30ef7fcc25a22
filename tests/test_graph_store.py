"""One GraphStore test suite run on the embedded store and on Neo4jGraphStore (against FalkorDB)."""

from __future__ import annotations

import time

import pytest
from falkordb_server import free_port

from kb.model import Entity, KBError, Triple
from kb.store import GraphStore

T = Triple
MARIE_OUT = {
    T("marie", "spouse", "pierre"), T("marie", "born_in", "warsaw"),
    T("marie", "award_received", "nobel_physics"), T("marie", "employer", "sorbonne"),
    T("marie", "citizen_of", "france"), T("marie", "citizen_of", "poland"),
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
        "marie", "Marie Curie", "person", "Physicist and chemist.", ("Maria Skłodowska", "Madame Curie"))
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
        T("pierre", "born_in", "paris"), T("sorbonne", "located_in", "paris")}
    assert graph_store.neighbors(["paris"], direction="out") == [T("paris", "capital_of", "france")]
    assert graph_store.neighbors(["nobody"]) == []


def test_neighbors_filters(graph_store):
    citizen = {T("marie", "citizen_of", "france"), T("marie", "citizen_of", "poland")}
    assert set(graph_store.neighbors(["marie"], relations=["citizen_of"])) == citizen
    assert set(graph_store.neighbors(["marie"], relations=["citizen_of", "spouse", "no_such"])) == citizen | {
        T("marie", "spouse", "pierre")}
    assert graph_store.neighbors(["marie"], relations=[]) == []
    assert set(graph_store.neighbors(["marie"], direction="out", target_type="country")) == citizen
    assert graph_store.neighbors(["marie"], target_type="city") == [T("marie", "born_in", "warsaw")]
    assert graph_store.neighbors(["marie"], direction="in", target_type="unit") == list(MARIE_IN)
    assert graph_store.neighbors(["marie"], direction="in", relations=["spouse"]) == []
    assert set(graph_store.neighbors(["pierre", "warsaw"], relations=["born_in", "capital_of"])) == {
        T("pierre", "born_in", "paris"), T("marie", "born_in", "warsaw"), T("warsaw", "capital_of", "poland")}


def test_ego_graph_radius_1(graph_store):
    sub = graph_store.ego_graph(["marie", "nobody"], radius=1)
    assert sub.seeds == ["marie"]
    assert sub.distance == {"marie": 0, **{n: 1 for n in (
        "pierre", "warsaw", "nobel_physics", "sorbonne", "france", "poland", "radium", "curie_unit")}}
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
    assert set(sub.triples) == {T("marie", "spouse", "pierre"), T("marie", "born_in", "warsaw"),
                                T("pierre", "born_in", "paris")}
    assert sub.path_to("paris") == [T("marie", "spouse", "pierre"), T("pierre", "born_in", "paris")]
    assert graph_store.ego_graph(["nobody"], radius=2).distance == {}


def test_paths(graph_store):
    found = graph_store.paths(["marie"], ["paris"], max_hops=2)
    assert len(found) == len(set(map(tuple, found))) and set(map(tuple, found)) == set([
        (T("marie", "spouse", "pierre"), T("pierre", "born_in", "paris")),
        (T("marie", "employer", "sorbonne"), T("sorbonne", "located_in", "paris")),
        (T("marie", "citizen_of", "france"), T("paris", "capital_of", "france")),
    ])
    assert graph_store.paths(["marie"], ["paris"], max_hops=1) == []
    three = graph_store.paths(["marie"], ["france"], max_hops=3)
    assert [len(p) for p in three] == [1, 3, 3]
    assert three[0] == [T("marie", "citizen_of", "france")]
    assert len(graph_store.paths(["marie"], ["france"], max_hops=3, limit=2)) == 2


def test_paths_stop_at_first_target_and_none_found(graph_store):
    found = graph_store.paths(["marie"], ["pierre", "paris"], max_hops=2)
    assert len(found) == len(set(map(tuple, found))) and set(map(tuple, found)) == set([
        (T("marie", "spouse", "pierre"),),
        (T("marie", "award_received", "nobel_physics"), T("pierre", "award_received", "nobel_physics")),
        (T("marie", "employer", "sorbonne"), T("sorbonne", "located_in", "paris")),
        (T("marie", "citizen_of", "france"), T("paris", "capital_of", "france")),
    ])
    assert graph_store.paths(["radium"], ["paris"], max_hops=2) == []
    assert graph_store.paths(["nobody"], ["paris"], max_hops=3) == []


def test_triples_induced(graph_store):
    got = graph_store.triples(["marie", "pierre", "paris", "nobel_physics", "nobody"])
    assert len(got) == 4 and set(got) == {
        T("marie", "spouse", "pierre"), T("pierre", "born_in", "paris"),
        T("marie", "award_received", "nobel_physics"), T("pierre", "award_received", "nobel_physics")}
    assert graph_store.triples(["marie"]) == []


def test_schema(graph_store):
    schema = graph_store.schema()
    assert schema.entity_types == {"person": 2, "city": 2, "country": 2, "award": 1, "university": 1,
                                   "unit": 1, "element": 1}
    assert set(schema.relation_types) == {"spouse", "born_in", "capital_of", "award_received", "employer",
                                          "located_in", "citizen_of", "named_after", "discovered"}
    born = schema.relation_types["born_in"]
    assert (born.head_types, born.tail_types, born.count) == (("person",), ("city",), 2)
    named = schema.relation_types["named_after"]
    assert (named.head_types, named.tail_types, named.count) == (("unit",), ("person",), 1)
    assert schema.relation_types["discovered"].tail_types == ("element",)
    assert "named_after(unit -> person)" in schema.describe()


# -- Neo4j backend only ---------------------------------------------------------------------------------
@pytest.mark.integration
def test_invalid_relation_type_refused(neo4j_graph_store):
    for bad in ["bad rel", "1st", "x`y", "r) DETACH DELETE (n", ""]:
        with pytest.raises(KBError, match="invalid relation type") as err:
            neo4j_graph_store.write([Entity("a", "A")], [Triple("a", bad, "b")], progress=False)
        assert repr(bad) in str(err.value)
    assert neo4j_graph_store.counts() == {"entities": 10, "triples": 13}  # nothing written


@pytest.mark.integration
def test_no_apoc_means_python_dice(neo4j_graph_store):
    assert neo4j_graph_store.one_hop_dice(["marie"], "Who did Marie Curie marry?", 5) is None


@pytest.mark.integration
def test_write_is_idempotent(neo4j_graph_store):
    neo4j_graph_store.write([Entity("paris", "Paris", "city")], [T("paris", "capital_of", "france")],
                            progress=False, batch_size=1)
    assert neo4j_graph_store.counts() == {"entities": 10, "triples": 13}
    assert neo4j_graph_store.schema().relation_types["capital_of"].count == 2


def test_unreachable_server_is_one_line_kberror():
    from kb.neo4j_store import Neo4jGraphStore

    uri = f"bolt://127.0.0.1:{free_port()}"
    t = time.monotonic()
    with pytest.raises(KBError) as err:
        Neo4jGraphStore.connect(uri)
    msg = str(err.value)
    assert msg.startswith(f"cannot reach Neo4j at {uri}: ") and "\n" not in msg
    assert time.monotonic() - t < 30
