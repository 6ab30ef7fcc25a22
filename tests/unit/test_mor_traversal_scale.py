"""MoR traversal's array path (agents/mor/frontier.py) against the per-triple loop, caps and type filters.

A small real KB with a hub (most films share one genre, one actor is in many films), a name that
plays two roles (the film "1941" is also a release year), films with a passage besides their name
(an entity with two document rows). The array path must give exactly the loop's trajectories,
layer counts and order, with and without a frontier cap and topic entities.
"""

from __future__ import annotations

import numpy as np
import pytest
from kb_fixtures import movie_kb

from hybridrag.agents.mor import frontier, trajectory, traversal
from hybridrag.agents.mor.matching import LayerScores
from hybridrag.kb.base import KnowledgeBase


def _triples() -> str:
    rows = []
    for i in range(40):
        film = f"Film {i}"
        rows += [f"{film}|has_genre|{'Drama' if i % 5 else 'Comedy'}", f"{film}|release_year|{1980 + i % 7}"]
        rows += [f"{film}|starred_actors|Actor {i % 9}", f"{film}|starred_actors|Star Hub"]
        rows.append(f"{film}|directed_by|Director {i % 4}")
    rows += ["1941|release_year|1979", "1941|directed_by|Director 1", "Pearl|release_year|1941"]
    return "\n".join(rows) + "\n"


PASSAGES = [
    {"id": f"p:{i}", "entity_id": f"Film {i}", "text": f"Film {i} is a drama about a star and a hub of actors."}
    for i in range(0, 40, 3)
]

ROUTES = [
    {
        "nodes": [{"type": "person", "restriction": "Star Hub"}, {"type": "movie", "restriction": ""}],
        "relations": [["starred_actors"]],
    },
    {
        "nodes": [
            {"type": "person", "restriction": "Director 1"},
            {"type": "movie", "restriction": "drama"},
            {"type": "year", "restriction": ""},
        ],
        "relations": [["directed_by"], ["release_year"]],
    },
    {
        "nodes": [
            {"type": "genre", "restriction": "Drama"},
            {"type": "movie", "restriction": ""},
            {"type": "person", "restriction": "actor"},
            {"type": "movie", "restriction": "star"},
        ],
        "relations": [["has_genre"], ["starred_actors"], ["starred_actors"]],
    },
    {
        "nodes": [{"type": "movie", "restriction": "Pearl"}, {"type": "year", "restriction": ""}],
        "relations": [["release_year"]],
    },
]


@pytest.fixture(scope="module")
def hub_kb(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeBase:
    return KnowledgeBase(movie_kb(tmp_path_factory, "hub", _triples(), PASSAGES))


def _both(kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch, question: str, route: dict, **kw) -> tuple[dict, dict]:
    fast = traversal.traverse_route(kb, question, route, **kw)
    with monkeypatch.context() as m:
        m.setattr(frontier, "applies", lambda *_: False)
        loop = traversal.traverse_route(kb, question, route, **kw)
    return fast, loop


def _topics(kb: KnowledgeBase):
    def rule(seeds: list[str]) -> set[str]:
        return set(seeds[:1])

    return rule


@pytest.mark.parametrize("max_frontier", [1, 3, 8, 5000])
@pytest.mark.parametrize("text_edges", [False, True])
@pytest.mark.parametrize("with_topics", [False, True])
def test_array_path_gives_the_loops_trajectories(hub_kb, monkeypatch, max_frontier, text_edges, with_topics):
    for route in ROUTES:
        question = "which drama films starred Star Hub " + " ".join(n["restriction"] for n in route["nodes"])
        kw = {
            "max_frontier": max_frontier,
            "text_edges": text_edges,
            "topic_rule": _topics(hub_kb) if with_topics else None,
        }
        fast, loop = _both(hub_kb, monkeypatch, question, route, **kw)
        assert fast == loop
        assert list(fast["candidates"]) == list(loop["candidates"])  # the order too: it breaks later ties


def test_the_array_path_runs_and_the_hub_is_cut_to_the_best(hub_kb, monkeypatch):
    calls = []
    real = frontier.structural
    monkeypatch.setattr(frontier, "structural", lambda *a, **k: calls.append(a[5]) or real(*a, **k))
    route = ROUTES[0]
    whole = traversal.traverse_route(hub_kb, "films with Star Hub", route, max_frontier=5000, text_edges=False)
    cut = traversal.traverse_route(hub_kb, "films with Star Hub", route, max_frontier=4, text_edges=False)
    assert calls == [5000, 4]
    assert whole["layers"][1]["struct"] == cut["layers"][1]["struct"] >= 40  # counted before the cap
    ranked = sorted(whole["candidates"].items(), key=lambda kv: trajectory.rank_key(kv[1]), reverse=True)[:4]
    assert list(cut["candidates"].items()) == ranked


def test_a_name_playing_another_role_is_kept_by_the_schema(hub_kb):
    out = traversal.traverse_route(hub_kb, "Pearl release year", ROUTES[3], text_edges=False)
    step = out["candidates"]["1941"][-1]
    assert step["via"] == "struct" and step["type"] == "year" and step["edge"] == ["Pearl", "release_year", "1941"]
    assert hub_kb.graph.get("1941").type == "movie"


@pytest.mark.parametrize("categories", [None, ["movie"], ["person", "genre"], ["spaceship"]])
@pytest.mark.parametrize("rows_per_entity", [1, 4])
def test_top_of_is_layer_scores_top(hub_kb, monkeypatch, categories, rows_per_entity):
    monkeypatch.setattr(frontier, "TOP_ROWS", rows_per_entity)  # 1: films with a passage make the first rows too few
    for query in ("Film 3 drama", "drama star hub", "Director 1", "1941 Pearl", "nothing matches zzz"):
        scores = LayerScores(hub_kb, query)
        for k in (1, 5, 100):
            assert frontier.top_of(hub_kb, scores, categories, k) == scores.top(categories, k)


def test_entity_scores_are_scores_of_rounded(hub_kb):
    scores = LayerScores(hub_kb, "drama about a star hub")
    store = hub_kb.graph
    idx = list(range(len(store.entities)))
    got = frontier.entity_scores(hub_kb, scores, np.asarray(idx))
    assert got.tolist() == [round(scores.of(store.entities[i].id), 6) for i in idx]
    assert len(frontier.doc_table(hub_kb).rows_of["Film 0"]) == 2  # its name and its passage: the best counts


def test_another_store_takes_the_loop(hub_kb):
    class Wrapped:  # a store that is not the in-memory one (a server store, a counting wrapper)
        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

    kb = KnowledgeBase.__new__(KnowledgeBase)
    kb.__dict__.update(hub_kb.__dict__)
    kb.graph = Wrapped(hub_kb.graph)
    scores = LayerScores(kb, "x")
    assert not frontier.applies(kb, scores) and frontier.applies(hub_kb, LayerScores(hub_kb, "x"))
    assert traversal.traverse_route(kb, "films with Star Hub", ROUTES[0]) == traversal.traverse_route(
        hub_kb, "films with Star Hub", ROUTES[0]
    )
