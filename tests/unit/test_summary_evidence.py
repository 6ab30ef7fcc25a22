"""The evidence ceiling of a run's summary, and ``python -m evals.summary`` over a records file."""

import json

import pytest

from hybridrag.evals.summary import main, names_gold, summarise, to_markdown


def _record(qid: str, evidence, answers: list[str], ranked_hit: bool) -> dict:
    return {
        "id": qid,
        "gold": {"answers": answers, "keys": answers},
        "relevant": [answers[:1] if ranked_hit else []],
        "answer": answers[0] if ranked_hit else "nope",
        "evidence": evidence,
        "usage": {},
        "seconds": 1.0,
    }


def test_gold_is_named_as_whole_words_in_any_string_of_the_evidence():
    facts = [
        {"source": "kg", "id": "Fred Claus", "path": ["Fred Claus release year 2007", "Fred Claus has genre Comedy"]}
    ]
    assert names_gold(facts, ["2007"])
    assert names_gold(facts, ["comedy"])  # normalised: case
    assert not names_gold(facts, ["200"])  # a part of a word is not a name
    assert not names_gold(facts, ["Drama"])
    assert names_gold([{"text": "The film was shot by The Coen Brothers."}], ["Coen Brothers"])  # articles dropped
    assert not names_gold([], ["2007"]) and not names_gold(facts, [""])


def test_the_summary_reports_how_often_the_evidence_names_an_answer_the_ranking_missed():
    records = [
        _record("a", [{"text": "X directed by Ron Howard"}], ["Ron Howard"], ranked_hit=True),
        _record("b", [{"text": "X release year 2005"}], ["2005"], ranked_hit=False),
        _record("c", [{"text": "nothing here"}], ["Paris"], ranked_hit=False),
        {**_record("d", None, ["Rome"], ranked_hit=False), "evidence": None},
    ]  # not judged
    s = summarise(records)
    assert s["ceiling_evidence"] == {"n": 3, "hit": pytest.approx(2 / 3)}
    assert s["metrics"]["hit@1"] == pytest.approx(1 / 4)
    assert "| some gold answer named in the run's evidence | 0.667 |" in to_markdown(s)


def test_the_command_prints_a_runs_summary_with_its_title_and_names_a_missing_file(tmp_path, capsys):
    run = tmp_path / "cell"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"method": "ssrag", "dataset": "metaqa-3hop"}))
    rec = _record("a", [{"text": "X release year 2005"}], ["2005"], ranked_hit=False)
    (run / "records.jsonl").write_text(json.dumps(rec) + "\n")
    main([str(run / "records.jsonl")])
    out = capsys.readouterr().out
    assert out.startswith("## ssrag / metaqa-3hop") and "named in the run's evidence | 1.000" in out
    main([str(run / "records.jsonl"), "--json"])
    assert json.loads(capsys.readouterr().out)["ceiling_evidence"] == {"n": 1, "hit": 1.0}
    with pytest.raises(SystemExit, match="no records file at"):
        main([str(tmp_path / "missing.jsonl")])
