"""Fusion's text side on a documents KB: the fused dense + BM25 ranking, top_k, and an answer read off the text.

The KB is built with the documents pipeline a user runs (no extraction model, so no graph) from the
12 paragraphs of the three-question AdvHotpotQA fixture, planted near-duplicates included.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridrag.agents.fusion.answer import answer
from hybridrag.agents.fusion.scoring import Candidate
from hybridrag.agents.fusion.text_fill import corroborated, reciprocal_rank_fusion
from hybridrag.evals.documents_qa import load_advhotpotqa, write_corpus
from hybridrag.graphs import context_for, get_graph

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "advhotpotqa_3.json"
AIRLINE = "What number largest commercial airline in the United States is Hana Hou! published for?"


@pytest.fixture(scope="module")
def documents(tmp_path_factory):
    from hybridrag.agents.extraction import ingest_documents

    questions, corpus = load_advhotpotqa(FIXTURE)
    root = tmp_path_factory.mktemp("fusion-text")
    ingest_documents(root / "kb", [write_corpus(corpus, root / "docs")], progress=False)
    return {q.question: q for q in questions}, str(root / "kb")


def _ask(kb: str, question: str, **settings):
    return get_graph("fusion").invoke({"question": question}, context=context_for("fusion", kb=kb, **settings))


def test_the_answer_is_a_span_of_the_text_not_a_document_id(documents):
    questions, kb = documents
    for question in questions:
        out = _ask(kb, question)
        assert out["answer"].strip(), question
        assert ".txt" not in out["answer"] and "#" not in out["answer"], out["answer"]
        assert not any(out["answer"] == r["id"] or out["answer"] == r["name"] for r in out["ranked"])
    assert _ask(kb, AIRLINE)["answer"] == questions[AIRLINE].answers[0] == "8th"


@pytest.mark.parametrize("top_k", [3, 5, 10])
def test_top_k_is_honoured_on_a_documents_kb(documents, top_k):
    _, kb = documents
    out = _ask(kb, AIRLINE, top_k=top_k)
    assert len(out["ranked"]) == top_k == len(out["evidence"])
    assert {r["source"] for r in out["ranked"]} == {"doc"}  # both text rankings are doc in the output vocabulary
    assert out["trace"][0]["fused_text"] >= top_k


def test_the_real_paragraph_ranks_above_its_planted_copies(documents):
    questions, kb = documents
    gold = questions[AIRLINE]
    docs = [r["id"].split("#")[0] for r in _ask(kb, AIRLINE)["ranked"]]
    real = docs.index(next(d for d in gold.supporting if d.startswith("Hawaiian_Airlines")))
    assert all(real < docs.index(p) for p in gold.planted if p in docs)
    plain = [r["id"].split("#")[0] for r in _ask(kb, AIRLINE, corroborate=False)["ranked"]]
    assert sorted(plain) == sorted(docs)  # corroboration reorders, it does not add or drop


def test_the_paper_scoring_keeps_k1_dense_hits_only(documents):
    _, kb = documents
    out = _ask(kb, AIRLINE, scoring="paper")
    assert len(out["ranked"]) == 3 and {r["source"] for r in out["ranked"]} == {"doc"}
    assert out["answer"] and ".txt" not in out["answer"]


def _passage(pid: str, text: str = "", kind: str = "passage") -> Candidate:
    return Candidate(pid, kind, pid, 0.0, "vector", text)


def test_reciprocal_rank_fusion_sums_one_over_constant_plus_rank():
    dense = [_passage("a"), _passage("b"), _passage("c")]
    lexical = [_passage("c"), _passage("d"), _passage("a")]
    fused = reciprocal_rank_fusion([dense, lexical], 10)
    scores = {c.id: c.score for c in fused}
    assert scores == pytest.approx({"a": 1 / 11 + 1 / 13, "b": 1 / 12, "c": 1 / 13 + 1 / 11, "d": 1 / 12})
    # a and c tie, as do b and d: the dense ranking's order decides
    assert [c.id for c in fused] == ["a", "c", "b", "d"]
    assert fused[0].source == "vector"


def test_a_repeated_id_counts_once_per_ranking():
    fused = reciprocal_rank_fusion([[_passage("a"), _passage("a"), _passage("b")]], 0)
    assert [(c.id, c.score) for c in fused] == [("a", 1.0), ("b", 0.5)]


def test_corroboration_orders_near_duplicates_by_what_other_items_state():
    items = [
        _passage("fake", "Dori shoes is the largest airline in Hawaii and the 9th largest in the US."),
        _passage("real", "Hawaiian Airlines is the largest airline in Hawaii and the 8th largest in the US."),
        _passage("bridge", "Hana Hou! is published for Hawaiian Airlines."),
    ]
    items = [Candidate(c.id, c.kind, c.name, s, c.source, c.text) for c, s in zip(items, (0.3, 0.2, 0.1), strict=True)]
    out = corroborated(items)
    assert [c.id for c in out] == ["real", "fake", "bridge"]
    assert [c.score for c in out] == [0.3, 0.2, 0.1]
    alone = corroborated(items[:2])  # nothing outside the pair states either's own words: order kept
    assert [c.id for c in alone] == ["fake", "real"]


def test_the_answer_falls_back_to_the_top_passages_then_to_an_entity():
    passage = _passage("doc.txt#0", "Robert Zemeckis directed Forrest Gump in 1994.")
    got = answer(None, "who directed Forrest Gump", [passage], [passage], set(), {})  # type: ignore[arg-type]
    assert got == "Robert Zemeckis"
    entity = Candidate("e1", "entity", "Tom Hanks", 0.1, "vector")
    own = Candidate("e0", "entity", "Forrest Gump", 0.2, "vector")
    assert answer(None, "who starred in Forrest Gump", [own, entity], [own, entity], {"e0"}, {}) == "Tom Hanks"  # type: ignore[arg-type]
    assert answer(None, "who starred in Forrest Gump", [own], [own], {"e0"}, {}) == ""  # type: ignore[arg-type]
    assert answer(None, "anything", [], [], set(), {}) == ""  # type: ignore[arg-type]
