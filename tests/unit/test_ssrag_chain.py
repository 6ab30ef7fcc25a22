"""SSRAG's small-model chain walk: the nearest solved example's relation chain followed in the KB."""

from __future__ import annotations

import pytest

from hybridrag.agents.shots import SolvedExample
from hybridrag.agents.ssrag.chain import chain_text, example_chain, follow_chain
from hybridrag.agents.ssrag.small import rule_answer
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.graphs.ssrag import SSRAGContext, graph

DIRECTED_HANKS_FILMS = SolvedExample(
    question="who directed the films Meg Ryan starred in",
    masked="who directed the films <E> starred in",
    topic=("Meg Ryan",),
    topic_types=("person",),
    relations=("starred_actors", "directed_by"),
    answer_type="person",
    answers=("Rob Reiner",),
    source="user",
    directions=("in", "out"),
)


def test_follow_chain_counts_paths_respects_directions_and_never_returns_a_seed(tiny_kb):
    kb = resolve_kb(SSRAGContext(kb=tiny_kb))
    chain = [("starred_actors", "in"), ("directed_by", "out")]
    # Tom Hanks -> Big, A League of Their Own (both Penny Marshall), Apollo 13 (Ron Howard)
    assert follow_chain(kb, ["Tom Hanks"], chain, 10) == ["Penny Marshall", "Ron Howard"]
    assert follow_chain(kb, ["Tom Hanks"], chain, 1) == ["Penny Marshall"]
    assert follow_chain(kb, ["Tom Hanks"], [("starred_actors", "out")], 10) == []  # an actor is a tail
    assert set(follow_chain(kb, ["Tom Hanks"], [("starred_actors", "both")], 10)) == {
        "Big",
        "A League of Their Own",
        "Apollo 13",
    }
    co_stars = follow_chain(kb, ["Kevin Bacon"], [("starred_actors", "in"), ("starred_actors", "out")], 10)
    assert co_stars == ["Tom Hanks"]  # Kevin Bacon himself is a seed, never an answer
    assert follow_chain(kb, ["Tom Hanks"], chain, 10, max_frontier=1) == ["Penny Marshall"]  # one film carried
    assert follow_chain(kb, [], chain, 10) == [] and follow_chain(kb, ["Tom Hanks"], [], 10) == []


def test_example_chain_takes_the_first_example_with_relations():
    assert example_chain([DIRECTED_HANKS_FILMS]) == [("starred_actors", "in"), ("directed_by", "out")]
    undirected = SolvedExample(**{**DIRECTED_HANKS_FILMS.__dict__, "directions": ()})
    assert example_chain([undirected]) == [("starred_actors", "both"), ("directed_by", "both")]
    assert example_chain([]) == []
    assert chain_text(example_chain([DIRECTED_HANKS_FILMS])) == "starred_actors< directed_by>"


def test_rule_answer_takes_the_first_chain_end_that_was_not_asked():
    items = [
        {"id": n, "kind": "entity", "name": n, "text": n, "source": "kg", "path": [], "score": 1.0, **extra}
        for n, extra in (("Big", {}), ("Tom Hanks", {"chain": True}), ("Ron Howard", {"chain": True}))
    ]
    answer, order, why = rule_answer(items, {"Tom Hanks"}, [DIRECTED_HANKS_FILMS])
    assert answer == "Ron Howard" and order[0]["name"] == "Ron Howard" and "chain" in why


@pytest.mark.parametrize("walk", [True, False])
def test_small_model_run_follows_the_nearest_example_chain(tiny_kb, tiny_llama, monkeypatch, walk):
    from hybridrag.agents.ssrag import shots

    monkeypatch.delenv("TAVILY_API_KEY", raising=False)
    monkeypatch.setattr(shots, "nearest", lambda *a, **k: [DIRECTED_HANKS_FILMS])
    tiny_llama()  # one KB name in the question: no call
    ctx = SSRAGContext(kb=tiny_kb, llm="local:tiny", chain_walk=walk)
    out = graph.invoke({"question": "who directed the films Tom Hanks starred in"}, context=ctx)
    step = next(s for s in out["trace"] if s["node"] == "retrieve_graph")
    if walk:
        assert step["chain"] == "starred_actors< directed_by>"
        assert step["chain_ends"] == ["Penny Marshall", "Ron Howard"]
        assert out["answer"] in {"Penny Marshall", "Ron Howard"}  # the first chain end in rank order
        assert "chain" in next(s for s in out["trace"] if s["node"] == "generate_answer")["fallback"]
    else:
        assert "chain" not in step and "chain" not in step["decision"]


def test_a_hop_stated_only_in_a_passage_is_followed_through_it(tmp_path_factory):
    from kb_fixtures import movie_kb

    triples = "Heat|directed_by|Michael Mann\nCollateral|starred_actors|Tom Cruise\nHeat|starred_actors|Al Pacino\n"
    passages = [
        {
            "id": "p:Collateral",
            "entity_id": "Collateral",
            "text": "Collateral is a thriller. Collateral was directed by Michael Mann in Los Angeles.",
        }
    ]
    from hybridrag.tools.text_hops import text_steps

    kb = resolve_kb(SSRAGContext(kb=movie_kb(tmp_path_factory, "chain-text", triples, passages)))
    assert follow_chain(kb, ["Collateral"], [("directed_by", "out")], 10, text=text_steps) == ["Michael Mann"]
    assert follow_chain(kb, ["Collateral"], [("directed_by", "out")], 10) == []  # the graph alone lacks the edge
    # Tom Cruise -> Collateral (graph) -> Michael Mann (text) -> Heat (graph) and Collateral (text)
    chain = [("starred_actors", "in"), ("directed_by", "out"), ("directed_by", "in")]
    assert follow_chain(kb, ["Tom Cruise"], chain, 10, text=text_steps) == ["Collateral", "Heat"]
    assert follow_chain(kb, ["Collateral"], [("starred_actors", "out")], 10, text=text_steps) == ["Tom Cruise"]


def test_a_chain_end_the_rerank_cut_is_put_back_first():
    ctx = [
        {"id": n, "kind": "entity", "name": n, "text": n, "source": "kg", "path": [], "score": 1.0}
        for n in ("Big", "Geena Davis")
    ]
    graph_items = [
        {**ctx[0]},
        {
            "id": "Ron Howard",
            "kind": "entity",
            "name": "Ron Howard",
            "text": "",
            "source": "kg",
            "path": [],
            "score": 0.0,
            "chain": True,
        },
    ]
    answer, order, why = rule_answer(ctx, {"Tom Hanks"}, [DIRECTED_HANKS_FILMS], graph_items)
    assert answer == "Ron Howard" and [i["name"] for i in order] == ["Ron Howard", "Big", "Geena Davis"]
    assert "put back" in why
    assert rule_answer(ctx, {"Tom Hanks"}, [], [])[0] == "Big"  # no chain: the top context, as before
