"""The realistic stand-in: measured per-type error rates drawn as measured; first decisions classified."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks.fidelity.classify import classify
from benchmarks.fidelity.rates import tally
from hybridrag.evals.oracle import rates
from hybridrag.evals.oracle.gold import GoldRecord
from hybridrag.evals.oracle.model import parse_spec
from hybridrag.evals.oracle.noise import DRAWABLE, Noise

N = 6000


def table(hop_rates: dict[int, dict[str, float]] | None = None) -> rates.RateTable:
    """A rates file's content: every method gets MoR-like pooled rates; ``hop_rates`` per hop for mor."""
    pooled = {"wrong_entity": 0.1, "missing_relation": 0.2}
    methods = {m: {"all": {"rates": {t: p for t, p in pooled.items() if t in DRAWABLE[m]}}} for m in DRAWABLE}
    methods["mor"]["by_hops"] = {str(h): {"rates": r} for h, r in (hop_rates or {}).items()}
    return rates.parse_table("synthetic", {"methods": methods}, DRAWABLE)


def record(i: int, hops: int = 1) -> GoldRecord:
    kinds = ("movie", "director", "movie", "director")[: hops + 1]
    rels = ("directed_by",) * hops
    return GoldRecord(
        f"q{i}", f"which films did the director of Film Number {i} make", f"Film Number {i}", kinds, rels, ("X",)
    )


def shares(noise: Noise, method: str, hops: int = 1) -> dict[str, float]:
    drawn = [noise.draw(record(i, hops), method) for i in range(N)]
    counts = Counter(d.type if d else "none" for d in drawn)
    return {t: c / N for t, c in counts.items()}


def test_drawn_types_follow_the_measured_rates():
    got = shares(Noise(rates=table()), "mor")
    assert got["wrong_entity"] == pytest.approx(0.1, abs=0.02)
    assert got["missing_relation"] == pytest.approx(0.2, abs=0.02)
    assert got["none"] == pytest.approx(0.7, abs=0.02)
    assert set(got) == {"wrong_entity", "missing_relation", "none"}


def test_a_measured_hop_count_uses_its_own_rates_and_others_the_pooled_ones():
    noise = Noise(rates=table({2: {"wrong_category": 0.5}}))
    two = shares(noise, "mor", hops=2)
    assert two["wrong_category"] == pytest.approx(0.5, abs=0.025) and "wrong_entity" not in two
    three = shares(noise, "mor", hops=3)
    assert three["missing_relation"] == pytest.approx(0.2, abs=0.02) and "wrong_category" not in three


def test_the_draw_is_deterministic_per_question_and_seed():
    noise = Noise(rates=table())
    assert [noise.draw(record(i), "mor") for i in range(200)] == [noise.draw(record(i), "mor") for i in range(200)]
    other = Noise(rates=table(), seed=1)
    assert [noise.draw(record(i), "mor") for i in range(200)] != [other.draw(record(i), "mor") for i in range(200)]


def test_zero_rates_draw_nothing():
    empty = rates.parse_table("zero", {"methods": {m: {"all": {"rates": {}}} for m in DRAWABLE}}, DRAWABLE)
    assert all(Noise(rates=empty).draw(record(i), "hybgrag") is None for i in range(500))


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("oracle:rates=no_such_file", "no rates file 'no_such_file'"),
        ("oracle:rates=../x", "bad rates name"),
        ("oracle:rates=", "bad oracle setting"),
        ("oracle:realistic=1", "bad oracle setting"),
        ("oracle:realistic,p=0.3", "measured rates replace p and types"),
        ("oracle:rates=smollm2,types=wrong_entity", "measured rates replace p and types"),
    ],
)
def test_a_bad_spec_is_a_clear_value_error(spec, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        parse_spec(spec)


@pytest.mark.parametrize(
    ("methods", "words"),
    [
        ({}, "no 'all' rates for method"),
        ({m: {"all": {"rates": {"wrong_module": 0.1}}} for m in DRAWABLE}, "unknown error type"),  # mor has none
        ({m: {"all": {"rates": {"wrong_entity": 0.7, "missing_entity": 0.4}}} for m in DRAWABLE}, "sum to at most 1"),
    ],
)
def test_a_bad_rates_file_is_a_clear_value_error(methods, words):
    with pytest.raises(ValueError, match=words):
        rates.parse_table("bad", {"methods": methods}, DRAWABLE)


def test_the_shipped_smollm2_rates_load_for_every_method():
    noise = parse_spec("oracle:realistic")
    assert noise.rates is not None and noise.rates.name == "smollm2" and noise.active
    data = json.loads((rates.FOLDER / "smollm2.json").read_text(encoding="utf-8"))
    assert data["model"] == "local:smollm2" and data["command"].startswith("python -m benchmarks realistic-rates")
    for method in DRAWABLE:
        cell = data["methods"][method]["all"]
        assert cell["n"] > 0 and sum(cell["counts"].values()) == cell["n"]
        assert noise.rates.rates(method, 1) == cell_rates(data, method, 1)


def cell_rates(data: dict, method: str, hops: int) -> dict[str, float]:
    return {t: float(p) for t, p in data["methods"][method]["by_hops"][str(hops)]["rates"].items()}


TWO = GoldRecord(
    "q",
    "who directed the films starring Kevin Bacon",
    "Kevin Bacon",
    ("actor", "movie", "director"),
    ("starred_actors", "directed_by"),
    ("Ron Howard",),
)


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ({"module": "hybrid", "linked": ["Kevin Bacon"], "relations": ["starred_actors", "directed_by"]}, "correct"),
        ({"module": "text", "linked": ["Kevin Bacon"], "relations": ["starred_actors", "directed_by"]}, "wrong_module"),
        ({"module": "hybrid", "linked": [], "relations": ["starred_actors", "directed_by"]}, "missing_entity"),
        ({"module": "hybrid", "linked": ["Footloose"], "relations": ["starred_actors", "directed_by"]}, "wrong_entity"),
        (
            {"module": "hybrid", "linked": ["Kevin Bacon"], "relations": ["starred_actors", "written_by"]},
            "wrong_relation",
        ),
        (
            {"module": "hybrid", "linked": ["Kevin Bacon"], "relations": ["directed_by", "starred_actors"]},
            "wrong_relation",
        ),
        ({"module": "hybrid", "linked": ["Kevin Bacon"], "relations": ["directed_by"]}, "missing_relation"),
        (
            {"module": "hybrid", "linked": ["Kevin Bacon", "Big"], "relations": ["starred_actors", "directed_by"]},
            "extra_entity",
        ),
    ],
)
def test_hybgrag_router_decisions_are_typed(step, expected):
    assert classify("hybgrag", [{"node": "route_question", **step}], TWO).type == expected


def plan(nodes: list[dict]) -> list[dict]:
    return [{"node": "plan_question", "raw": {"routes": [{"nodes": nodes}]}}]


def test_mor_plans_are_typed_and_an_extra_hop_is_unclassified():
    good = [
        {"type": "person", "restriction": "Kevin Bacon"},
        {"type": "movie", "relation": "starred_actors"},
        {"type": "person", "relation": "directed_by"},
    ]
    assert classify("mor", plan(good), TWO).type == "correct"
    assert classify("mor", plan([{**good[0], "type": "movie"}, *good[1:]]), TWO).type == "wrong_category"
    assert classify("mor", plan([{**good[0], "restriction": ""}, *good[1:]]), TWO).type == "missing_entity"
    assert classify("mor", plan([good[0], {**good[1], "relation": ""}, good[2]]), TWO).type == "missing_relation"
    extra = classify("mor", plan([*good, {"type": "movie", "relation": "directed_by"}]), TWO)
    assert extra.type == "unclassified" and "extra hop" in extra.reason
    assert classify("mor", [{"node": "plan_question", "raw": {"routes": []}}], TWO).type == "unclassified"


def test_hydrarag_and_ssrag_first_decisions_are_typed():
    analysis = {
        "node": "analyze_question",
        "topic_order": ["Kevin Bacon"],
        "decision": "depth 2: Kevin Bacon - starred actors - movie - directed by - answer(director)",
    }
    assert classify("hydrarag", [analysis, {"node": "select_sources", "decision": "S_a = kg"}], TWO).type == "correct"
    assert (
        classify("hydrarag", [analysis, {"node": "select_sources", "decision": "S_a = docs"}], TWO).type
        == "wrong_module"
    )
    short = {**analysis, "decision": "depth 1: Kevin Bacon - directed by - answer(director)"}
    assert (
        classify("hydrarag", [short, {"node": "select_sources", "decision": "S_a = kg"}], TWO).type
        == "missing_relation"
    )
    route = {"node": "route_query", "decision": "FACTUAL → local"}
    assert classify("ssrag", [{"node": "extract_entities", "linked": ["Kevin Bacon"]}, route], TWO).type == "correct"
    assert classify("ssrag", [{"node": "extract_entities", "linked": []}, route], TWO).type == "missing_entity"
    temporal = {"node": "route_query", "decision": "TEMPORAL → web"}
    assert (
        classify("ssrag", [{"node": "extract_entities", "linked": ["Kevin Bacon"]}, temporal], TWO).type
        == "wrong_module"
    )
    extra = classify("ssrag", [{"node": "extract_entities", "linked": ["Kevin Bacon", "Big"]}, route], TWO)
    assert extra.type == "unclassified"


def test_tally_counts_every_question_once():
    recs = [
        {"type": t, "errors": e, "reason": "", "llm_calls": 1}
        for t, e in [
            ("correct", []),
            ("wrong_entity", ["wrong_entity", "wrong_relation"]),
            ("unclassified", []),
            ("correct", []),
        ]
    ]
    out = tally(recs)
    assert out["n"] == 4 and out["rates"] == {"wrong_entity": 0.25} and out["unclassified"] == 1
    assert out["several_errors"] == 1 and sum(out["counts"].values()) == 4


def test_a_realistic_run_is_labelled_as_such_not_as_a_ceiling():
    from hybridrag.evals.oracle.gold import GoldSet
    from hybridrag.evals.oracle.model import build_oracle
    from hybridrag.evals.oracle.run import label

    assert label("mor", "oracle:realistic,seed=2") == "mor + oracle LLM (realistic stand-in, rates=smollm2 seed=2)"
    assert "perfect-LLM ceiling" in label("mor", "oracle")
    report = build_oracle("oracle:realistic", GoldSet([TWO])).noise_report()
    assert report["rates"] == "smollm2" and report["p"] == 0.0
