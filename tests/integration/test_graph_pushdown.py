"""HydraRAG's graph work pushed to a real FalkorDB gives what the in-memory store gives.

Over Bolt (the ``neo4j`` driver path) and over FalkorDB's own client, on the bundled sample: the
server's E_q walk (``within_hops``) answers membership exactly as the whole in-memory E_q does, names
read as key and name equal the in-memory names, and HydraRAG's KG exploration and pruning give the
same candidates and the same pruned evidence while never reading the whole question subgraph
(``ego_graph`` is not called).
"""

import pytest

from hybridrag.agents.hydrarag import analysis, kg
from hybridrag.agents.hydrarag.context import HydraRAGContext
from hybridrag.agents.hydrarag.pruning import rank_candidates
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.ingest import ingest
from hybridrag.kb.sample import SAMPLE_SRC, TYPE_MAP

pytestmark = pytest.mark.integration

CASES = [  # (topic names, skyline, depth)
    (["Tom Hanks"], "Tom Hanks - starred actors - movie - directed by - answer(person)", 2),
    (["Forrest Gump"], "Forrest Gump - directed by - answer(person)", 1),
    (["Penny Marshall"], "Penny Marshall - directed by - movie - has genre - genre - has genre - answer(movie)", 3),
    (["Tom Hanks", "Penny Marshall"], "Tom Hanks - starred actors - answer(movie) - directed by - Penny Marshall", 1),
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
    return KnowledgeBase(out)


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
    return request.getfixturevalue(f"{request.param}_kb")


def _probe(kb, names, skyline, depth):
    ctx = HydraRAGContext()
    found = analysis.detect_sources(kb, names, ctx.link_threshold, False)
    topics = analysis.reorder(found["topics"], skyline)
    chain = analysis.chain(topics, skyline, skyline, found["doc_topics"])
    return found, analysis.probe("initial", 1, ["kg"], depth, [chain], floor=ctx.length_floor)


@pytest.mark.parametrize("seeds", [["Tom Hanks"], ["Drama"], ["Forrest Gump", "1994"]])
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_server_walk_answers_membership_as_the_whole_subgraph(server_kb, memory_kb, seeds, depth):
    whole = set(kg.detect_subgraph(memory_kb, seeds, depth))
    everyone = sorted(e.id for e in memory_kb.graph.entities)
    asked = set(everyone[::7]) | {"no such entity"}  # inside and outside E_q, and unknown
    assert whole - set(everyone) == set()
    assert server_kb.graph.within_hops(seeds, asked, depth) == asked & whole
    assert kg.subgraph_members(server_kb, seeds, depth, asked) == asked & whole


def test_names_read_as_key_and_name_equal_memory(server_kb, memory_kb):
    ids = [e.id for e in memory_kb.graph.entities][::5] + ["no such entity"]
    want = {i: e.name for i, e in memory_kb.graph.get_many(ids).items()}
    assert server_kb.graph.names(ids) == want


@pytest.mark.parametrize(("names", "skyline", "depth"), CASES)
def test_explore_and_prune_match_memory_without_reading_the_subgraph(
    server_kb, memory_kb, monkeypatch, names, skyline, depth
):
    ctx = HydraRAGContext()
    out = {}
    for key, kb in (("memory", memory_kb), ("server", server_kb)):
        found, probe = _probe(kb, names, skyline, depth)
        cands, notes = kg.explore_kg(kb, skyline, probe, found["topic_keys"], ctx.pruning())
        seeds = list(dict.fromkeys(t for ch in probe["chains"] for t in ch["topics"]))
        inside = kg.candidate_members(kb, seeds, ctx.max_depth, cands)
        ranked = rank_candidates(kb, cands, skyline, found["topic_keys"], inside, ctx.pruning())
        out[key] = (cands, notes, ranked)
        if key == "memory":  # E_q as the paper reads it: every entity within D_max hops
            whole = set(kg.detect_subgraph(kb, seeds, ctx.max_depth))
            assert all(set(k[3:] for k in c["keys"]) <= whole for c in cands)
        else:
            monkeypatch.setattr(type(kb.graph), "ego_graph", lambda *a, **k: pytest.fail("E_q read whole"))
            kg.candidate_members(kb, seeds, ctx.max_depth, cands)
    assert out["server"] == out["memory"]
    assert out["memory"][0]


@pytest.mark.parametrize("limit", [3, 20])
def test_node_pools_are_the_edges_memory_has_and_a_hubs_first_edges(server_kb, memory_kb, limit):
    ids = [e.id for e in memory_kb.graph.entities][::3] + ["Drama", "no such entity"]
    order = lambda ts: sorted(ts, key=lambda t: (t.type, t.head, t.tail))  # noqa: E731
    want = {}
    for i in ids[:-1]:
        edges = memory_kb.graph.neighbors([i])
        want[i] = order(edges)[:limit] if len(edges) > limit else order(edges)  # SSRAG's pool (facts.pool_of)
    assert any(len(memory_kb.graph.neighbors([i])) > limit for i in want)  # hubs and nodes under the limit
    assert any(len(memory_kb.graph.neighbors([i])) <= limit for i in want)
    got = server_kb.graph.node_pools(ids, limit)
    assert "no such entity" not in got
    assert {i: order(p) for i, p in got.items()} == want
    hubs = [i for i in want if len(memory_kb.graph.neighbors([i])) > limit]
    assert all(got[i] == want[i] for i in hubs)  # a hub's pool arrives cut and sorted by the server


def test_node_pools_bring_the_names_along(server_kb, memory_kb, monkeypatch):
    store = server_kb.graph
    store.__dict__.pop("_names", None)  # names read by earlier tests
    nodes = ["Tom Hanks", "Forrest Gump", "Penny Marshall"]
    pools = store.node_pools(nodes, 500)
    ends = {e for p in pools.values() for t in p for e in (t.head, t.tail)} | set(nodes)
    sent = []
    monkeypatch.setattr(store, "_query", lambda q, p, write=False: sent.append(q) or [])
    assert store.names(ends) == {i: e.name for i, e in memory_kb.graph.get_many(ends).items()}
    assert sent == []


def test_ssrag_facts_on_the_server_equal_memory(server_kb, memory_kb, monkeypatch):
    from hybridrag.agents.ssrag import facts

    monkeypatch.setattr(facts, "FACT_POOL", 5)  # most of these nodes are hubs at 5
    nodes = ["Tom Hanks", "Drama", "Forrest Gump", "1994", "Penny Marshall"]
    got = {}
    for key, kb in (("memory", memory_kb), ("server", server_kb)):
        facts._memo.pop(kb, None)  # pools cached by another test with another FACT_POOL
        names = {n: facts.prefetch(kb, nodes)[n] for n in nodes}  # the nodes' own names (more when not cached)
        got[key] = (names, [facts._node_triples(kb, n) for n in nodes])  # sorted on both, cut at 5 on hubs
        facts._memo.pop(kb, None)
    assert got["server"] == got["memory"] and any(len(p) == 5 for p in got["memory"][1])


@pytest.mark.parametrize(
    ("topic", "question"),
    [("Tom Hanks", "what films did Tom Hanks star in"), ("1994", "which movies were released in 1994")],
)
def test_ssrag_walk_on_the_server_equals_memory_in_one_request_per_hop(
    server_kb, memory_kb, monkeypatch, topic, question
):
    from hybridrag.agents.ssrag import facts
    from hybridrag.agents.ssrag.nodes import relevant_nodes
    from hybridrag.agents.ssrag.vectors import query_vector

    out = {}
    for key, kb in (("memory", memory_kb), ("server", server_kb)):
        facts._memo.pop(kb, None)
        sent: list[str] = []
        if key == "server":
            real = kb.graph._query
            monkeypatch.setattr(
                kb.graph, "_query", lambda q, p, write=False, sent=sent, real=real: sent.append(q) or real(q, p, write)
            )
        nodes = relevant_nodes(kb, [topic], query_vector(kb, question), hops=2, k=12, max_facts=6, text_edges=False)
        out[key] = [(n["id"], n["name"], n["facts"], n["triples"], n["links"]) for n in nodes]
    assert out["server"] == out["memory"] and len(out["memory"]) > 3
    pools = [q for q in sent if "OPTIONAL MATCH (s)-[d]" in q]
    assert len(pools) == 3  # the seeds and two hops: one request each
    assert len(sent) == len(pools) + sum("ORDER BY type(r)" in q for q in sent)  # then only a hub's first edges
