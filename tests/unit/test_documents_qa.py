"""AdvHotpotQA as a documents benchmark: loader, corpus files, and the document metrics."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybridrag.evals.documents_qa import (
    document_scores,
    evidence_documents,
    load_advhotpotqa,
    planted_answer,
    write_corpus,
)
from hybridrag.evals.summary import summarise
from hybridrag.kb.model import MalformedInputError

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "advhotpotqa_3.json"


def test_the_loader_keeps_gold_documents_for_scoring_only():
    questions, corpus = load_advhotpotqa(FIXTURE)
    assert [q.answers for q in questions] == [
        ("Sochi, Russia",),
        ("8th",),
        ("Victorian College of the Arts and Melbourne Conservatorium of Music",),
    ]
    q = questions[0]
    assert len(q.supporting) == 2 and len(q.planted) == 2 and not q.unsupported
    assert len(corpus) == 12  # four paragraphs a question, all distinct
    # a planted paragraph is named after the real one it imitates: nothing marks it as planted
    assert not any("added" in name.lower() for name in corpus)
    olympics = [n for n in q.supporting if n.startswith("Ukraine_at_the_2014")]
    assert olympics and all(n.startswith("Ukraine_at_the_2014_Winter_Olympics_") for n in q.planted)
    assert "Sochi, Russia" in corpus[olympics[0]]


def test_the_corpus_is_one_file_per_paragraph(tmp_path):
    _, corpus = load_advhotpotqa(FIXTURE)
    folder = write_corpus(corpus, tmp_path / "docs")
    assert sorted(p.name for p in folder.iterdir()) == sorted(corpus)
    assert write_corpus(corpus, folder) == folder  # rewriting is idempotent


def test_a_malformed_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('[{"question": "q"}]')
    with pytest.raises(MalformedInputError, match="question 1 has no qas_id, answer, paragraphs"):
        load_advhotpotqa(bad)


def _record(q, evidence, answer, planted=False):
    gold = {"answers": list(q.answers), "supporting": list(q.supporting), "planted": list(q.planted)}
    return {"id": q.id, "gold": gold, "evidence": evidence, "answer": answer, "relevant": [], "planted_answer": planted}


def test_document_metrics_recall_all_found_and_misled():
    questions, _ = load_advhotpotqa(FIXTURE)
    q = questions[0]
    s1, s2 = q.supporting
    p1 = q.planted[0]
    ev = [
        {"source": "doc", "id": f"{p1}#0"},
        {"source": "kg", "id": "x"},
        {"source": "doc", "id": f"{s1}#0"},
        {"source": "doc", "id": f"{s1}#1"},
        {"source": "doc", "id": f"{s2}#0"},
    ]
    assert evidence_documents(ev) == [p1, s1, s2]
    scores = document_scores(_record(q, ev, "Sochi, Russia"))
    assert scores["support_recall@2"] == 0.5 and scores["support_all@2"] == 0.0
    assert scores["support_recall@5"] == 1.0 and scores["support_all@5"] == 1.0
    assert scores["misled"] == 1.0  # the top evidence is a planted document
    clean = document_scores(_record(q, ev[2:], "Sochi, Russia"))
    assert clean["misled"] == 0.0 and clean["support_recall@2"] == 1.0
    assert document_scores(_record(q, ev[2:], "Sochi, moscow", planted=True))["misled"] == 1.0


def test_planted_answer_is_an_answer_only_a_planted_document_states():
    questions, corpus = load_advhotpotqa(FIXTURE)
    q = questions[0]
    gold = {"supporting": list(q.supporting), "planted": list(q.planted), "unsupported": []}
    assert planted_answer("Sochi, moscow", corpus, gold)
    assert not planted_answer("Sochi, Russia", corpus, gold)
    assert not planted_answer("", corpus, gold)


def test_the_summary_reports_the_document_metrics_with_em_and_f1():
    questions, _ = load_advhotpotqa(FIXTURE)
    recs = [_record(q, [{"source": "doc", "id": f"{q.supporting[0]}#0"}], q.answers[0]) for q in questions]
    summary = summarise(recs)
    assert summary["metrics"]["answer_em"] == 1.0 and summary["metrics"]["answer_f1"] == 1.0
    assert summary["metrics"]["support_recall@2"] == 0.5 and summary["metrics"]["misled"] == 0.0


def test_a_dataset_asked_of_another_kb_builds_no_kb_of_its_own(monkeypatch):
    from hybridrag.evals import hybrid
    from hybridrag.evals.sets import resolve_dataset

    def refuse(*args, **kwargs):
        raise AssertionError("the dataset's own KB must not be built when --kb names one")

    monkeypatch.setattr(hybrid, "full_kb", refuse)
    es = resolve_dataset("metaqa-paraphrase:1hop", build_kb=False)
    assert es.kb_dir is None and len(es.questions) == 91
    es = resolve_dataset(f"advhotpotqa:{FIXTURE}", build_kb=False)
    assert es.kb_dir is None and len(es.questions) == 3
