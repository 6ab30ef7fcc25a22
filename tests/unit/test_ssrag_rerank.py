"""SSRAG's joint rerank: the paper's cosine order, and ours, which keeps the vector branch's own order."""

from __future__ import annotations

import numpy as np
import pytest

from hybridrag.agents.ssrag import rerank as rr
from hybridrag.agents.ssrag import retrieval as ret
from hybridrag.graphs.runtime import resolve_kb
from hybridrag.graphs.ssrag import SSRAGContext, graph
from tests.unit.test_ssrag import AUGMENT, FACTUAL, run, step


def _item(id_: str, source: str = "doc", text: str | None = None) -> dict:
    kind = "entity" if source == "kg" else "passage"
    return {"id": id_, "kind": kind, "name": f"name {id_}", "text": text or f"text of {id_}", "source": source}


def _ids(items: list[dict]) -> list[str]:
    return [i["id"] for i in items]


# the vector branch's texts (in its order: d1 d2 d3), then the graph contexts
ITEMS = [_item("d1"), _item("d2"), _item("d3"), _item("g1", "kg"), _item("g2", "kg")]
SCORES = np.array([0.2, 0.9, 0.5, 0.3, 0.8], dtype=np.float32)  # cosine: d2 g2 d3 g1 d1


def test_paper_mode_is_one_cosine_order():
    pool = rr.joint_rerank(None, ITEMS, np.zeros(1), 5, scores=SCORES, mode="paper")  # type: ignore[arg-type]
    assert _ids(pool) == ["d2", "g2", "d3", "g1", "d1"]
    assert [i["score"] for i in pool] == sorted((i["score"] for i in pool), reverse=True)


def test_interleave_keeps_the_branch_order_in_the_places_the_cosine_gives_the_branch():
    pool = rr.joint_rerank(None, ITEMS, np.zeros(1), 5, scores=SCORES)  # type: ignore[arg-type]
    assert _ids(pool) == ["d1", "g2", "d2", "g1", "d3"]  # text places 1, 3, 5; graph places 2, 4 by cosine
    assert pool[0]["score"] == pytest.approx(0.2)  # each context keeps its own cosine
    top = rr.joint_rerank(None, ITEMS, np.zeros(1), 2, scores=SCORES)  # type: ignore[arg-type]
    assert _ids(top) == ["d1", "g2"]  # the branch's first text, though its cosine is the lowest


def test_bare_contexts_last_in_each_mode():
    items = [_item("d1"), {**_item("d2"), "text": "name d2"}, _item("d3"), _item("g1", "kg")]
    scores = np.array([0.1, 0.9, 0.5, 0.4], dtype=np.float32)
    inter = rr.joint_rerank(None, items, np.zeros(1), 4, scores=scores)  # type: ignore[arg-type]
    paper = rr.joint_rerank(None, items, np.zeros(1), 4, scores=scores, mode="paper")  # type: ignore[arg-type]
    assert _ids(inter) == ["d1", "g1", "d3", "d2"]
    assert _ids(paper) == ["d3", "g1", "d1", "d2"]
    one = rr.joint_rerank(None, items, np.zeros(1), 4, False, scores, "interleave")  # type: ignore[arg-type]
    assert _ids(one) == ["d1", "d2", "g1", "d3"]  # one group: the bare text takes a text place


def test_unknown_mode_is_refused_in_one_line():
    with pytest.raises(ValueError, match=r"^unknown ssrag joint_rerank 'cosine'; use interleave, paper$"):
        rr.joint_rerank(None, ITEMS, np.zeros(1), 5, scores=SCORES, mode="cosine")  # type: ignore[arg-type]


def test_the_corroborated_copy_survives_the_dedup_and_a_cosine_reorder_would_drop_it(tiny_kb):
    """A doctored near-copy that scores higher by cosine loses its place to the paragraph the branch put first."""
    kb = resolve_kb(SSRAGContext(kb=tiny_kb))
    real = _item("real", text="Big is a 1988 comedy film directed by Penny Marshall and starring Tom Hanks.")
    fake = _item("fake", text="Big is a 1988 comedy film directed by Ron Howard and starring Tom Hanks.")
    other = _item("other", text="Apollo 13 is a film about astronauts.")
    items = [real, other, fake]  # the vector branch's order: corroboration put the real paragraph first
    vecs = rr.item_vectors(kb, items)
    assert float(vecs[0] @ vecs[2]) >= 0.9  # near-duplicates for the dedup
    scores = np.array([0.6, 0.3, 0.7], dtype=np.float32)  # the copy's wording lands nearer the query
    for mode, first in (("interleave", "real"), ("paper", "fake")):
        pool = rr.joint_rerank(kb, items, np.zeros(1), 3, scores=scores, mode=mode)  # type: ignore[arg-type]
        kept, removed = rr.text_dedup(kb, pool, 0.9, rr.item_vectors(kb, pool))
        assert kept[0]["id"] == first and {r["id"] for r in removed} == {"real", "fake"} - {first}, mode


def test_the_graph_run_keeps_the_vector_branch_order_unless_told_paper(tiny_kb, fake_llm, monkeypatch):
    real = ret.vector_branch

    def backwards(*args):  # a branch whose order is the reverse of its texts' cosine order
        items, used, note = real(*args)
        return items[::-1], used, note

    monkeypatch.setattr(ret, "vector_branch", backwards)
    fake_llm(*AUGMENT, FACTUAL, *AUGMENT, FACTUAL)
    settings = {"vector_k": 5, "graph_k": 2, "top_k": 10, "graph_to_text": "template", "llm_dedup": False}
    settings.update(bare_contexts_last=False, dedup_threshold=1.01)
    ours = run(tiny_kb, answer=False, **settings)
    paper = run(tiny_kb, answer=False, joint_rerank="paper", **settings)
    branch = step(ours, "retrieve_vectors")["top"]
    assert [e["id"] for e in ours["evidence"] if e["source"] == "doc"] == branch
    texts = [e for e in paper["evidence"] if e["source"] == "doc"]
    assert [e["score"] for e in texts] == sorted((e["score"] for e in texts), reverse=True)
    assert [e["id"] for e in texts] != branch


def test_an_unknown_joint_rerank_is_refused_with_the_choices(tiny_kb, fake_llm):
    fake_llm()
    with pytest.raises(ValueError, match=r"unknown ssrag joint_rerank 'cosine'; use interleave, paper"):
        graph.invoke(
            {"question": "who directed Big"},
            context=SSRAGContext(kb=tiny_kb, llm="fake:test", joint_rerank="cosine"),  # type: ignore[arg-type]
        )
