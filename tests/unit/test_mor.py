"""MoR on the scripted fake model and a tiny real KB: planning, mixed traversal, reranking."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from langgraph.types import Send

from hybridrag.agents.mor import rerank as rr
from hybridrag.agents.mor.plan import (
    Plan,
    PlanNode,
    PlanRoute,
    PlanTriplet,
    TripletPlan,
    hop_relations,
    plan_from_triplets,
    validate_plan,
)
from hybridrag.agents.mor.roles import Answer
from hybridrag.agents.mor.traversal import merge_routes, traverse_route
from hybridrag.graphs.mor import MoRContext, builder, graph, render_trace, route_after_planning
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.prompts import Prompt, load_examples
from hybridrag.prompts import mor as P

Q = "which movies starring Tom Hanks were released in 1995"


def node(t: str, restriction: str = "", relation: str = "") -> PlanNode:
    return PlanNode(type=t, restriction=restriction, relation=relation)


def plan(*routes: list[PlanNode]) -> Plan:
    return Plan(routes=[PlanRoute(nodes=list(r)) for r in routes])


HANKS_1995 = plan(
    [node("person", "Tom Hanks"), node("movie", relation="starred_actors")], [node("year", "1995"), node("movie")]
)
BAD = plan([node("spaceship", "Tom Hanks"), node("movie")])


def run(kb: str, question: str = Q, **kw) -> dict:
    return graph.invoke({"question": question}, context=MoRContext(kb=kb, llm="fake:test", **kw))


def steps(out: dict, name: str) -> list[dict]:
    return [s for s in out["trace"] if s["node"] == name]


def calls_by_role(out: dict) -> dict[str, int]:
    return {role: v["llm_calls"] for role, v in out["usage"]["by_role"].items()}


def schema(kb: str):
    return resolve_kb(MoRContext(kb=kb)).graph.schema()


# -- the graph -------------------------------------------------------------------------------


def test_two_routes_intersect_to_the_answer(tiny_kb, fake_llm):
    fake_llm(HANKS_1995)
    out = run(tiny_kb)
    assert set(out) == {"answer", "ranked", "evidence", "trace", "usage"}
    assert out["answer"] == "Apollo 13" and out["ranked"][0]["source"] == "kg"
    assert [s["node"] for s in out["trace"]] == [
        "plan_question",
        "traverse_route",
        "traverse_route",
        "intersect_routes",
        "rerank_trajectories",
    ]
    [merge] = steps(out, "intersect_routes")
    assert merge["decision"] == "intersection" and merge["merged"] >= 1
    kg = [e for e in out["evidence"] if e["source"] == "kg" and e["id"] == "Apollo 13"]
    assert kg[0]["text"] in {
        "Tom Hanks → starred_actors (inverse) → Apollo 13",
        "1995 → release_year (inverse) → Apollo 13",
    }
    assert kg[0]["path"] and any(e["source"] == "doc" and e["id"] == "Apollo 13" for e in out["evidence"])
    assert out["usage"]["llm_calls"] == 1 and calls_by_role(out) == {"planner": 1}
    assert {"planning", "reasoning", "organizing"} <= set(out["usage"]["stages"])
    text = render_trace(out["trace"])
    assert "Plan 1: person<Tom Hanks> → movie; year<1995> → movie" in text and "Merge: intersection" in text


def test_answer_skips_entities_the_question_names(tiny_kb, fake_llm):
    fake_llm(plan([node("person", "Tom Hanks"), node("movie"), node("person", relation="directed_by")]))
    # the paper's pool keeps the topic entity, so the answer must skip it (graph_first drops it)
    out = run(tiny_kb, question="who directed the movies Tom Hanks starred in", ranking="paper", max_iterations=1)
    names = [r["name"] for r in out["ranked"]]
    assert "Tom Hanks" in names and out["answer"] in {"Penny Marshall", "Ron Howard"}
    assert any(
        e["text"] == "Tom Hanks → starred_actors (inverse) → Big → directed_by → Penny Marshall"
        for e in out["evidence"]
    )


def test_router_fans_out_one_send_per_route(tiny_kb):
    checked = validate_plan(HANKS_1995, schema(tiny_kb), [])
    runtime = SimpleNamespace(context=MoRContext(kb=tiny_kb))
    sends = route_after_planning({"question": Q, "plan": checked, "iteration": 1}, runtime)
    assert all(isinstance(s, Send) and s.node == "traverse_route" for s in sends)
    assert [s.arg["index"] for s in sends] == [0, 1] and sends[1].arg["route"]["nodes"][0]["type"] == "year"


def test_invalid_plan_falls_back_to_text_matching(tiny_kb, fake_llm):
    fake_llm(BAD)
    out = run(tiny_kb, question="a comedy about a boy who wakes up as an adult", max_iterations=1)
    [planned] = steps(out, "plan_question")
    assert planned["decision"] == "invalid plan: textual matching"
    assert "unknown entity type" in planned["problems"][0]
    assert steps(out, "match_text") and not steps(out, "traverse_route")
    assert out["answer"] == "Big" and out["ranked"][0]["source"] == "doc"
    assert out["usage"]["llm_calls"] == 1


def test_unparseable_plan_retries_once_then_text(tiny_kb, fake_llm):
    fake_llm("routes: person then movie", "{not json")
    out = run(tiny_kb, question="a comedy about a boy who wakes up as an adult", max_iterations=1)
    assert calls_by_role(out) == {"planner": 2}
    assert steps(out, "plan_question")[0]["problems"] == ["unparseable planner output"]
    assert steps(out, "match_text") and out["answer"] == "Big"


def test_single_node_plan_is_textual_matching(tiny_kb, fake_llm):
    fake_llm(plan([node("movie", "a boy who wakes up as an adult")]))
    out = run(tiny_kb, question="a comedy about a boy who wakes up as an adult", max_iterations=1)
    assert steps(out, "match_text") and out["answer"] == "Big"


def test_invalid_plan_is_replanned_with_its_problems(tiny_kb, fake_llm):
    fake = fake_llm(BAD, HANKS_1995)
    out = run(tiny_kb, max_iterations=2)
    assert [s["decision"] for s in steps(out, "plan_question")] == [
        "invalid plan: re-plan",
        "mixed traversal over 2 route(s)",
    ]
    replan = fake.calls[1]["messages"]
    assert replan[-2].type == "ai" and "spaceship" in replan[-2].content
    assert "unknown entity type" in replan[-1].content
    assert calls_by_role(out) == {"planner": 2} and out["answer"] == "Apollo 13"


def test_replanning_stops_at_max_iterations(tiny_kb, fake_llm):
    fake_llm(BAD, plan([node("rocket", "Tom Hanks"), node("movie")]), plan([node("boat", "Tom Hanks"), node("movie")]))
    out = run(tiny_kb, max_iterations=3)  # three different invalid plans (a repeated one ends the loop earlier)
    assert [s["iteration"] for s in steps(out, "plan_question")] == [1, 2, 3]
    assert steps(out, "plan_question")[-1]["decision"] == "invalid plan: textual matching"
    assert steps(out, "match_text") and out["usage"]["llm_calls"] == 3


def test_empty_intersection_takes_the_union(tiny_kb, fake_llm):
    fake_llm(plan([node("person", "Kevin Bacon"), node("movie")], [node("language", "French"), node("movie")]))
    out = run(tiny_kb, question="Kevin Bacon French", layer_match="restricted", max_iterations=1)
    [merge] = steps(out, "intersect_routes")
    assert merge["decision"] == "union (empty intersection)" and merge["route_sizes"] == [2, 1]
    assert {r["id"] for r in out["ranked"][:3]} == {"Apollo 13", "Tremors", "Amelie"}


def test_short_lists_are_topped_up_with_text_ranked_last(tiny_kb, fake_llm):
    fake_llm(plan([node("language", "French"), node("movie")]))
    out = run(tiny_kb, question="French films like Big", layer_match="restricted", top_k=3)
    assert steps(out, "intersect_routes")[0]["fillers"] == 1
    assert out["ranked"][0]["id"] == "Amelie" and len(out["ranked"]) == 2
    assert out["ranked"][1]["score"] < out["ranked"][0]["score"]


def test_triplet_planner_merges_triplets_into_routes(tiny_kb, fake_llm):
    fake = fake_llm(
        TripletPlan(
            target="movie",
            triplets=[
                PlanTriplet(head=node("movie"), relation="starred_actors", tail=node("person", "Tom Hanks")),
                PlanTriplet(head=node("movie"), relation="release_year", tail=node("year", "1995")),
            ],
        )
    )
    out = run(tiny_kb, planner="triplets")
    assert fake.calls[0]["schema"] == "TripletPlan" and "head entity" in fake.calls[0]["messages"][0].content
    assert steps(out, "plan_question")[0]["routes"] == ["person<Tom Hanks> → movie", "year<1995> → movie"]
    assert out["answer"] == "Apollo 13"


def test_qa_mode_answers_and_falls_back(tiny_kb, fake_llm):
    fake_llm(HANKS_1995, Answer(reasoning="Apollo 13 is the match.", answer="Apollo 13 (1995)"))
    out = run(tiny_kb, answer=True)
    assert out["answer"] == "Apollo 13 (1995)" and calls_by_role(out) == {"planner": 1, "answerer": 1}
    fake_llm(HANKS_1995, "??", "??")
    out = run(tiny_kb, answer=True)
    assert out["answer"] == "Apollo 13"
    assert steps(out, "generate_answer")[0]["decision"] == "fallback: top entity"


def test_module_ablations(tiny_kb, fake_llm):
    fake_llm(HANKS_1995, HANKS_1995, HANKS_1995)
    textual = run(tiny_kb, retrieval="textual")
    assert all(x["struct"] == 0 for s in steps(textual, "traverse_route") for x in s["layers"])
    structural = run(tiny_kb, retrieval="structural")
    assert all(x["text"] == 0 for s in steps(structural, "traverse_route") for x in s["layers"][1:])
    assert structural["answer"] == "Apollo 13"
    plain = run(tiny_kb, reranker="none", reranker_features="ti")
    assert steps(plain, "rerank_trajectories")[0]["reranker"] == "none" and plain["ranked"][0]["score"] > 0


def test_builder_compiles_with_a_checkpointer(tiny_kb, fake_llm):
    from langgraph.checkpoint.memory import InMemorySaver

    fake_llm(HANKS_1995)
    g = builder.compile(checkpointer=InMemorySaver())
    out = g.invoke(
        {"question": Q}, {"configurable": {"thread_id": "t1"}}, context=MoRContext(kb=tiny_kb, llm="fake:test")
    )
    assert out["answer"] == "Apollo 13"


# -- planning graphs ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (plan([node("person", "Tom Hanks"), node("year")]), "no relation connects person and year"),
        (plan([node("person"), node("movie")]), "no restriction"),
        (plan(), "no route"),
    ],
)
def test_invalid_routes(tiny_kb, bad, problem):
    checked = validate_plan(bad, schema(tiny_kb), [])
    assert not checked["valid"] and problem in " ".join(checked["problems"])


def test_validation_targets_relations_and_hops(tiny_kb):
    s = schema(tiny_kb)
    mixed = plan(
        [node("person", "Tom Hanks"), node("movie")],
        [node("movie", "Big"), node("person")],
        [node("genre", "Comedy"), node("movie")],
    )
    checked = validate_plan(mixed, s, [])
    assert checked["target"] == "movie" and len(checked["routes"]) == 2
    assert validate_plan(mixed, s, ["person"])["shown"] == ["movie<Big> → person"]
    named = validate_plan(plan([node("movie", "Big"), node("person", relation="directed_by")]), s, [])
    assert named["routes"][0]["relations"] == [["directed_by"]]
    wrong = validate_plan(plan([node("movie", "Big"), node("person", relation="has_genre")]), s, [])
    assert wrong["routes"][0]["relations"] == [hop_relations(s, "movie", "person")] and wrong["valid"]
    assert "all used" in wrong["problems"][0] and len(hop_relations(s, "movie", "person")) > 1
    long = plan([node("movie", "Big"), node("person"), node("movie"), node("person"), node("movie")])
    assert validate_plan(long, s, [], max_hops=3)["problems"][0].endswith("no restriction to start from")
    assert len(validate_plan(long, s, [], max_hops=4)["routes"][0]["nodes"]) == 5


def test_triplets_merge_into_routes():
    tp = TripletPlan(
        target="genre",
        triplets=[
            PlanTriplet(head=node("movie"), relation="written_by", tail=node("person", "Nora Ephron")),
            PlanTriplet(head=node("movie"), relation="has_genre", tail=node("genre")),
        ],
    )
    [route] = plan_from_triplets(tp).routes
    assert [(n.type, n.restriction, n.relation) for n in route.nodes] == [
        ("person", "Nora Ephron", ""),
        ("movie", "", "written_by"),
        ("genre", "", "has_genre"),
    ]
    assert plan_from_triplets(TripletPlan(target="year", triplets=tp.triplets)).routes == []


# -- traversal and reranking -------------------------------------------------------------


def test_traversal_keeps_trajectories(tiny_kb):
    kb = resolve_kb(MoRContext(kb=tiny_kb))
    checked = validate_plan(plan([node("person", "Tom Hanks"), node("movie")]), kb.graph.schema(), [])
    route = checked["routes"][0]
    res = traverse_route(kb, "Tom Hanks", route, layer_match="restricted")
    assert set(res["candidates"]) == {"Big", "A League of Their Own", "Apollo 13"}
    seed, hop = res["candidates"]["Big"]
    assert seed["via"] == "text" and seed["id"] == "Tom Hanks" and seed["tf"] == 1.0
    assert hop["via"] == "struct" and hop["edge"] == ["Big", "starred_actors", "Tom Hanks"]
    assert [x["struct"] for x in res["layers"]] == [0, 3]
    textual = traverse_route(kb, "Tom Hanks comedy", route, structure=False)
    assert all(len(t) == 1 for t in textual["candidates"].values()) and textual["layers"][1]["struct"] == 0
    merged, mode = merge_routes([res, {"candidates": {}}])
    assert mode == "intersection" and set(merged) == set(res["candidates"])


def test_features_default_weights_and_fillers():
    traj = [
        {"id": "a", "type": "person", "via": "text", "tf": 1.0, "edge": None},
        {"id": "b", "type": "movie", "via": "struct", "tf": 0.4, "edge": ["b", "r", "a"]},
    ]
    f = rr.features(traj, 0.5)
    assert f == {
        "semantic": 0.5,
        "tf_0": 0.0,
        "tf_1": 1.0,
        "tf_2": 0.4,
        "sf_0_padding": 1.0,
        "sf_1_person": 1.0,
        "sf_2_movie": 1.0,
        "ti_0_padding": 1.0,
        "ti_1_text": 1.0,
        "ti_2_struct": 1.0,
        "sfp_padding|person|movie": 1.0,
    }
    assert rr.score(f, rr.default_weights()) == pytest.approx(0.5 + 0.25 + 0.2 + 0.1)
    assert set(rr.features(traj, 0.5, groups=("tf",))) == {"semantic", "tf_0", "tf_1", "tf_2"}
    assert set(rr.features(traj, 0.5, length=1, groups=rr.parse_groups("sf, ti"))) == {
        "sf_0_movie",
        "ti_0_struct",
        "sfp_movie",
    }
    with pytest.raises(ValueError):
        rr.parse_groups("tf,graph")
    text_only = [{"id": "c", "type": "movie", "via": "text", "tf": 0.9, "edge": None}]
    ranked = rr.rerank(
        [
            {"id": "c", "semantic": 0.9, "trajectory": text_only, "filler": True},
            {"id": "b", "semantic": 0.5, "trajectory": traj},
        ],
        rr.default_weights(),
    )
    assert [c["id"] for c in ranked] == ["b", "c"] and ranked[1]["score"] < ranked[0]["score"]


def test_fit_weights_learns_from_gold(tmp_path):
    def cand(tf0: float, sem: float) -> dict[str, float]:
        return {"semantic": sem, "tf_0": tf0, "tf_2": 0.5}

    data = [([cand(0.9, 0.2), cand(0.1, 0.8), cand(0.0, 0.6)], [True, False, False]) for _ in range(5)]
    data.append(([cand(0.0, 0.5)], [False]))  # no gold: skipped
    before = rr.listwise_loss(rr.default_weights(), data)
    fitted = rr.fit_weights(data)
    assert rr.listwise_loss(fitted, data) < before
    assert rr.score(cand(0.9, 0.2), fitted) > rr.score(cand(0.1, 0.8), fitted)
    path = tmp_path / "w.json"
    rr.save_weights(fitted, path)
    assert rr.load_weights(path) == fitted and rr.load_weights("") == rr.default_weights()
    with pytest.raises(ValueError):
        rr.load_weights(path, length=2)
    assert rr.fit_weights([([cand(0, 0)], [False])]) == rr.default_weights()


# -- prompts and examples ----------------------------------------------------------------


@pytest.mark.parametrize("prompt", P.ALL, ids=lambda p: p.name)
def test_declared_inputs_match_template(prompt: Prompt):
    assert prompt.fields() == set(prompt.inputs)


def test_bundled_examples_are_valid_plans_on_the_sample_schema():
    s = resolve_kb(MoRContext(kb="sample")).graph.schema()
    examples = load_examples("mor_planner")
    assert len(examples) == 10
    for ex in examples:
        checked = validate_plan(Plan.model_validate(ex["plan"]), s, [])
        single = len(ex["plan"]["routes"]) == 1 and len(ex["plan"]["routes"][0]["nodes"]) == 1
        assert checked["valid"] != single, (ex["question"], checked["problems"])
    for ex in load_examples("mor_triplets"):
        assert validate_plan(plan_from_triplets(TripletPlan.model_validate(ex["triplets"])), s, [])["valid"]


# -- graph-first ranking (ours; ranking="paper" is the paper's single pool) ---------------------

SHARE = "which movies share a director with Big"
SAME_DIRECTOR = plan(
    [node("movie", "Big"), node("person", relation="directed_by"), node("movie", relation="directed_by")]
)


def test_topic_entity_is_never_ranked(tiny_kb, fake_llm):
    fake_llm(SAME_DIRECTOR, SAME_DIRECTOR)
    out = run(tiny_kb, question=SHARE)
    ids = [r["id"] for r in out["ranked"]]
    assert "Big" not in ids and ids[0] == "A League of Their Own"
    assert steps(out, "traverse_route")[0]["topics"] == ["Big"]
    paper = run(tiny_kb, question=SHARE, ranking="paper")  # the route walks back to its seed
    assert "Big" in [r["id"] for r in paper["ranked"]]


LOOKALIKE_TRIPLES = """\
The Astronaut Farmer|directed_by|Michael Polish
The Astronaut Farmer|starred_actors|Billy Bob Thornton
The Astronaut Farmer|release_year|2006
More|starred_actors|Mimsy Farmer
More|directed_by|Barbet Schroeder
Four Flies on Grey Velvet|starred_actors|Mimsy Farmer
1941|directed_by|Steven Spielberg
The Great Lie|release_year|1941
"""


@pytest.fixture(scope="module")
def lookalike_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A KB where a person's name looks like the question's film (Mimsy Farmer)."""
    from hybridrag.kb.ingest import ingest
    from hybridrag.kb.sample import TYPE_MAP

    src = tmp_path_factory.mktemp("lookalike-src") / "triples.txt"
    src.write_text(LOOKALIKE_TRIPLES, encoding="utf-8")
    out = tmp_path_factory.mktemp("lookalike-kb") / "kb"
    ingest(out, [src], type_map=TYPE_MAP, progress=False)
    return str(out)


def test_graph_reached_answer_outranks_text_lookalike(lookalike_kb, fake_llm):
    farmer = plan([node("movie", "The Astronaut Farmer"), node("person", relation="directed_by")])
    fake_llm(farmer, farmer)
    question = "who directed The Astronaut Farmer"
    out = run(lookalike_kb, question=question)
    assert out["ranked"][0]["id"] == "Michael Polish" and out["answer"] == "Michael Polish"
    assert "Mimsy Farmer" in [r["id"] for r in out["ranked"]][1:]  # still listed, below the graph
    [merge] = steps(out, "intersect_routes")
    assert merge["text_only"] >= 1
    paper = run(lookalike_kb, question=question, ranking="paper", reranker="structure")
    assert paper["ranked"][0]["id"] == "Mimsy Farmer"  # the look-alike wins the paper's single pool (linear)


def test_neighbour_playing_the_type_on_its_edge_is_reached(lookalike_kb, fake_llm):
    assert resolve_kb(MoRContext(kb=lookalike_kb)).graph.get("1941").type == "movie"  # one type per entity
    lie = plan([node("movie", "The Great Lie"), node("year", relation="release_year")])
    fake_llm(lie, lie)
    for settings in ({}, {"ranking": "paper"}):  # a traversal fix: both rankings
        out = run(lookalike_kb, question="when was The Great Lie released", **settings)
        assert out["ranked"][0]["id"] == "1941" and out["ranked"][0]["source"] == "kg"
