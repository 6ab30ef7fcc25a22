"""``python -m benchmarks realdata``: cells named by their settings, cached runs read back, the page's rows."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from benchmarks.realdata import cells as C
from benchmarks.realdata import page
from benchmarks.realdata import tables as T
from benchmarks.realdata.planted import planted_row
from benchmarks.suites import suite


def test_the_suite_is_registered_with_its_page():
    s = suite("realdata")
    assert s.module == "benchmarks.realdata.main" and s.doc == "docs/benchmarks_realdata.md"
    assert "--limit" in s.quick and "--runs" in s.quick


def test_a_cell_folder_names_every_setting_that_changes_the_result():
    a = C.Cell("hybgrag", "advhotpotqa", "oracle", ("answer=true",), 30)
    assert a.slug != C.Cell("hybgrag", "advhotpotqa", "oracle", ("answer=true",), 31).slug
    assert a.slug != C.Cell("hybgrag", "advhotpotqa", "local:smollm2", ("answer=true",), 30).slug
    assert a.slug != C.Cell("hybgrag", "advhotpotqa", "oracle", (), 30).slug
    untyped = C.Cell("mor", "metaqa-1hop", "oracle", limit=50, kb="/x/metaqa-untyped")
    assert untyped.slug != C.Cell("mor", "metaqa-1hop", "oracle", limit=50).slug
    argv = a.argv(Path("runs"))
    assert argv[-2:] == ["--out", str(Path("runs") / a.slug)]
    assert a.command() == (
        "hybridrag eval --method hybgrag --dataset advhotpotqa --workers 1 --llm oracle --limit 30 --set answer=true"
    )


def _finished(folder: Path, n: int, records: list[dict]) -> None:
    folder.mkdir(parents=True)
    (folder / "summary.json").write_text(json.dumps({"n": n, "metrics": {"hit@1": 0.5}, "usage": {}}))
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (folder / "oracle_answer_shown.json").write_text(json.dumps({"q1": True}))


def test_a_finished_cell_is_read_back_without_running(tmp_path, monkeypatch):
    cell = C.Cell("mor", "advhotpotqa", "oracle", limit=2)
    _finished(tmp_path / cell.slug, 2, [{"id": "q1"}, {"id": "q2"}, {"id": "q1", "answer": "again"}])
    monkeypatch.setattr(C, "eval_cell", lambda argv: pytest.fail("a finished cell ran again"))
    r = C.run_cell(cell, tmp_path, expected=2)
    assert not r.failed and r.summary["n"] == 2 and r.answer_shown == {"q1": True}
    assert sorted(x["id"] for x in r.records) == ["q1", "q2"]  # the last record of an id counts
    assert next(x for x in r.records if x["id"] == "q1")["answer"] == "again"


def test_an_unfinished_cell_runs_and_a_failed_one_says_so(tmp_path, monkeypatch):
    cell = C.Cell("mor", "advhotpotqa", "oracle", limit=5)
    _finished(tmp_path / cell.slug, 2, [{"id": "q1"}])  # 2 of 5: resumed
    seen = []
    monkeypatch.setattr(C, "eval_cell", lambda argv: seen.append(argv) or {"failed": "boom", "command": "x"})
    r = C.run_cell(cell, tmp_path, expected=5)
    assert seen and r.failed == "boom" and r.records == []
    row = T.adv_row("mor", "stand-in", r, {})
    assert "failed: boom" in row and row.count("|") == T.ADV_HEAD.splitlines()[0].count("|")


def _doc_record(evidence: list[str], answer: str, trace: list[dict]) -> dict:
    gold = {"answers": ["Sochi, Russia"], "supporting": ["A_1.txt", "B_2.txt"], "planted": ["A_3.txt", "A_4.txt"]}
    ev = [{"source": "doc", "id": f"{d}#0", "text": d} for d in evidence]
    return {"id": answer, "gold": gold, "evidence": ev, "answer": answer, "trace": trace}


def test_rows_count_rounds_planted_ranks_and_what_was_shown():
    good = _doc_record(["A_1.txt", "B_2.txt", "A_3.txt"], "Sochi, Russia", [{"iteration": 1}, {"iteration": 3}])
    misled = _doc_record(["A_3.txt", "A_1.txt"], "moscow", [{"round": 2}])
    assert T.rounds(good) == 3 and T.rounds(misled) == 2 and T.rounds({"trace": []}) == 1
    row = planted_row([good, misled])
    assert row["planted first"] == 0.5 and row["planted above its original"] == 0.5
    assert row["planted in top 5"] == 1.0 and row["questions"] == 2
    texts = {"A_1.txt": "held in Sochi, Russia", "A_3.txt": "held in Sochi, Russia too"}
    shown = dict(good, evidence=[{"source": "doc", "id": "A_1.txt#0", "text": "held in Sochi, Russia"}])
    only_planted = dict(good, evidence=[{"source": "doc", "id": "A_3.txt#0", "text": "held in Sochi, Russia too"}])
    assert T.gold_shown(shown, texts) and not T.gold_shown(only_planted, texts)


def test_the_paraphrase_section_pairs_each_hop_and_states_its_limits(monkeypatch):
    from benchmarks.realdata import para

    asked = []

    def runner(cell, expected):
        asked.append((cell, expected))
        return C.Result(cell, {"n": expected, "metrics": {"hit@1": 0.25}}, [{"id": "q", "answer": "x", "gold": {}}])

    monkeypatch.setattr(para, "bank_check", lambda kb, questions: f"bank {kb} checked against {len(questions)}")
    monkeypatch.setattr(para, "para_bank_kb", lambda: Path("/cache/para-bank-metaqa-full"))
    monkeypatch.setattr(para, "wording_check", lambda kb, limit, *held: f"wording checked on {limit}")
    args = argparse.Namespace(para_limit=7)
    text, failed = para.para(runner, args)
    assert failed == 0
    smollm = [(c, n) for c, n in asked if c.llm == C.SMOLLM]
    assert len(smollm) == 4 * 3 * 2 * 2 and all(c.limit == 7 and n == 7 for c, n in smollm)
    assert all(c.kb == "/cache/para-bank-metaqa-full" for c, _ in smollm)  # the bank of other questions
    oracle = [(c, n) for c, n in asked if c.llm == "oracle"]
    assert {n for _, n in oracle} == {*page.PARA_SIZES.values(), 61, 63, 45} and all(c.limit is None for c, _ in oracle)
    assert all(c.kb is None for c, _ in oracle)
    datasets = {c.dataset for c, _ in asked}
    assert {"metaqa-paraphrase:1hop", "metaqa-paraphrase:original:1hop", "metaqa-paraphrase-test"} <= datasets
    assert "first 7 a hop" in text and "0.250 / 0.250" in text and "checked against 838" in text
    assert "wording checked on 7" in text


def test_the_paraphrase_bank_leaves_out_every_paraphrased_question(monkeypatch, tmp_path):
    from benchmarks.realdata import para_bank

    row = {"original": "what movies did [Tom Hanks] act in", "question": "films with tom hanks"}
    (tmp_path / "metaqa_paraphrases.jsonl").write_text(json.dumps(row) + "\n", encoding="utf-8")
    monkeypatch.setattr(para_bank, "DATA", tmp_path)
    lines = ["what movies did [Tom Hanks] act in\tBig", "who directed [Big]\tPenny Marshall"]
    monkeypatch.setattr(para_bank, "bank_lines", lambda hops: lines)
    assert para_bank.para_bank_lines(1) == ["who directed [Big]\tPenny Marshall"]
