"""Fusion's ranking and answer on tiny KBs that reproduce the failures seen on full MetaQA.

Each KB is built here with the real ingest (MiniLM embeddings, FAISS), small enough that the
dense branch returns the entities that caused each failure.
"""

import json

import pytest

from hybridrag.graphs import context_for, get_graph

ALIEN = """\
Alien|directed_by|Ridley Scott
Alien|starred_actors|Sigourney Weaver
Alien|starred_actors|Tom Skerritt
"""
# "gump" is a tag whose name is a word of the question; Steve Forrest shares a word with it.
FORREST = """\
Forrest Gump|directed_by|Robert Zemeckis
Forrest Gump|starred_actors|Tom Hanks
Forrest Gump|starred_actors|Sally Field
Forrest Gump|has_tags|gump
Mommie Dearest|starred_actors|Steve Forrest
"""
# Alien's director is held out of the graph and stated only in a passage
HELD_OUT = """\
Alien|starred_actors|Sigourney Weaver
Alien|release_year|1979
Gladiator|directed_by|Ridley Scott
"""
PASSAGES = [
    {
        "id": "p:Alien",
        "entity_id": "Alien",
        "text": "Alien is a Horror film. Alien was directed by Ridley Scott. Tom Skerritt starred in Alien.",
    },
    {"id": "p:Gladiator", "entity_id": "Gladiator", "text": "Gladiator is an Action film."},
]


def _build(root, triples, passages=None):
    from hybridrag.kb.ingest import ingest
    from hybridrag.kb.sample import TYPE_MAP

    root.mkdir(parents=True, exist_ok=True)
    (root / "triples.txt").write_text(triples, encoding="utf-8")
    extra = {}
    if passages:
        (root / "passages.jsonl").write_text("\n".join(json.dumps(p) for p in passages), encoding="utf-8")
        extra["passages"] = root / "passages.jsonl"
    ingest(root / "kb", [root / "triples.txt"], type_map=TYPE_MAP, progress=False, **extra)
    return str(root / "kb")


@pytest.fixture(scope="module")
def kbs(tmp_path_factory):
    base = tmp_path_factory.mktemp("fusion-ranking")
    return {
        "alien": _build(base / "alien", ALIEN),
        "forrest": _build(base / "forrest", FORREST),
        "held_out": _build(base / "held-out", HELD_OUT, PASSAGES),
    }


def _ask(kb, question, **settings):
    return get_graph("fusion").invoke({"question": question}, context=context_for("fusion", kb=kb, **settings))


def test_alien_kb_reproduces_the_dedupe_case(kbs):
    """Precondition of the next test: Ridley Scott is also a dense hit scoring above his triple."""
    out = _ask(kbs["alien"], "who directed Alien", scoring="paper")
    ridley = next(r for r in out["ranked"] if r["name"] == "Ridley Scott")
    assert ridley["source"] == "doc"
    assert "Ridley Scott" in next(s for s in out["trace"] if s["node"] == "expand_seeds")["decision"]


@pytest.mark.parametrize("scoring", [None, "paper", "normalised", "rrf"])
def test_who_directed_alien_answers_the_director(kbs, scoring):
    settings = {"scoring": scoring} if scoring else {}
    out = _ask(kbs["alien"], "who directed Alien", **settings)
    assert out["answer"] == "Ridley Scott"


def test_forrest_kb_fills_top_3_with_name_hits_under_the_paper(kbs):
    """Precondition of the next test: with top_k=3 the paper's top 3 are all dense name hits."""
    out = _ask(kbs["forrest"], "who directed Forrest Gump", top_k=3, scoring="paper")
    assert [r["source"] for r in out["ranked"]] == ["doc"] * 3
    assert "Steve Forrest" in [r["name"] for r in out["ranked"]]


@pytest.mark.parametrize("scoring", [None, "paper"])
def test_who_directed_forrest_gump_with_top_3_answers_the_director(kbs, scoring):
    settings = {"scoring": scoring} if scoring else {}
    out = _ask(kbs["forrest"], "who directed Forrest Gump", top_k=3, **settings)
    assert out["answer"] == "Robert Zemeckis"


def test_default_ranks_the_answer_first_and_the_question_entity_last(kbs):
    out = _ask(kbs["alien"], "who directed Alien")
    names = [r["name"] for r in out["ranked"]]
    assert names[0] == "Ridley Scott"
    assert names[-1] == "Alien"
    assert out["evidence"][0]["path"] == ["Alien → directed by → Ridley Scott"]


@pytest.mark.parametrize("mode", ["hybrid", "vector", "bm25", "graph"])
@pytest.mark.parametrize(
    "question", ["who directed Alien", "what films did Ridley Scott direct", "who starred in Alien", "Sigourney Weaver"]
)
def test_answer_is_never_the_question_entity(kbs, mode, question):
    out = _ask(kbs["alien"], question, mode=mode)
    named = {
        "who directed Alien": "Alien",
        "what films did Ridley Scott direct": "Ridley Scott",
        "who starred in Alien": "Alien",
        "Sigourney Weaver": "Sigourney Weaver",
    }[question]
    assert out["answer"] != named


def test_a_fact_held_out_of_the_graph_is_ranked_and_answered_from_text(kbs):
    out = _ask(kbs["held_out"], "who directed Alien")
    assert out["ranked"][0]["id"] == "p:Alien"
    assert out["evidence"][0]["path"] == ["Alien was directed by Ridley Scott."]
    assert out["answer"] == "Ridley Scott"


def test_two_hops_reach_the_answer_of_a_two_hop_question(kbs):
    """k1=1: on a KB this small every entity is a dense hit, and seeds are not reached again."""
    one = _ask(kbs["alien"], "who directed the films Sigourney Weaver acted in", k1=1)
    two = _ask(kbs["alien"], "who directed the films Sigourney Weaver acted in", k1=1, hops=2)
    assert one["ranked"][0]["name"] != "Ridley Scott"
    assert two["ranked"][0]["name"] == "Ridley Scott"
    assert two["evidence"][0]["path"] == [
        "Alien → starred actors → Sigourney Weaver",
        "Alien → directed by → Ridley Scott",
    ]


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"scoring": "magic"}, "unknown fusion scoring"),
        ({"hops": 4}, "hops must be between 1 and 3"),
        ({"hops": 0}, "hops must be between 1 and 3"),
    ],
)
def test_bad_scoring_or_hops_is_a_clear_error(kbs, setting, message):
    with pytest.raises(ValueError, match=message):
        _ask(kbs["alien"], "who directed Alien", **setting)


def test_seed_passages_search_only_a_kb_holding_passages(kbs, monkeypatch):
    """A KB of entity documents only has no passage to name a seed: no lexical search is run for it."""
    from hybridrag.agents.fusion.scoring import has_passages, seeded_passages
    from hybridrag.kb.base import KnowledgeBase, open_kb

    alien, held_out = open_kb(kbs["alien"]), open_kb(kbs["held_out"])
    assert not has_passages(alien) and has_passages(held_out)
    assert [c.id for c in seeded_passages(held_out, ["Alien"], 200)] == ["p:Alien"]
    searched = []
    real = KnowledgeBase.lexical_search

    def lexical_search(self, *args, **kwargs):
        searched.append(args)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(KnowledgeBase, "lexical_search", lexical_search)
    assert seeded_passages(alien, ["Alien"], 200) == [] and searched == []
    assert seeded_passages(held_out, ["Alien"], 0) == [] and searched == []
    assert seeded_passages(held_out, ["Alien"], 200) and searched == [("Alien", 200)]
