"""benchmarks.smollm.matrix: cells, their eval arguments, the bank split, and path accuracy from traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.__main__ import main as benchmarks_main
from benchmarks.smollm import bank as smollm_bank
from benchmarks.smollm import matrix as smollm_matrix
from benchmarks.smollm import report as smollm_report
from hybridrag.evals.datasets import Question


def test_cells_parse_and_bad_cells_are_one_line_errors():
    assert smollm_matrix.parse_cell("hybgrag:bank:1hop") == ("hybgrag", "bank", "1hop")
    with pytest.raises(SystemExit, match="bad cell 'hybgrag:bank'"):
        smollm_matrix.parse_cell("hybgrag:bank")
    with pytest.raises(SystemExit, match="ssrag has no 'fixed'"):
        smollm_matrix.parse_cell("ssrag:fixed:1hop")
    for cell in smollm_matrix.DEFAULT_CELLS:
        smollm_matrix.parse_cell(cell)


def test_eval_arguments_of_a_cell(monkeypatch, tmp_path):
    monkeypatch.setattr(smollm_matrix, "bank_kb", lambda dataset: Path("/kb") / f"bank-{dataset}")
    argv = smollm_matrix.eval_argv(("mor", "bank", "2hop"), 50, tmp_path)
    assert argv[argv.index("--kb") + 1] == "/kb/bank-metaqa-2hop" and "local:smollm2" in argv
    assert ["--set", "examples=kb"] == argv[argv.index("--set") : argv.index("--set") + 2]
    none = smollm_matrix.eval_argv(("hybgrag", "none", "1hop"), 50, tmp_path)
    assert "--kb" not in none and none[-1] == "num_few_shot=0"


def _lines(hops: int) -> list[str]:
    return [f"question {i} about [E{i}]\tanswer {i}" for i in range(1400)]


def test_bank_takes_questions_never_evaluated(monkeypatch):
    monkeypatch.setattr(smollm_bank, "question_lines", _lines)
    bank = smollm_bank.bank_lines(1)
    assert len(bank) == smollm_bank.BANK_TO - smollm_bank.BANK_FROM
    questions = [
        Question(id=str(i), question=f"question {i} about E{i}", answers=(f"answer {i}",)) for i in range(1400)
    ]
    monkeypatch.setattr(smollm_bank, "load_metaqa", lambda path: questions)
    smollm_bank.check_disjoint("metaqa-1hop", 300)  # the first 300 of the same shuffle: none in the bank
    with pytest.raises(SystemExit, match="in the bank"):
        smollm_bank.check_disjoint("metaqa-1hop", 301)


def _record(qtype: str, step: dict) -> dict:
    return {"qtype": qtype, "trace": [step]}


def test_first_path_of_router_and_planner_against_the_gold_path():
    router = _record("movie_to_director_to_movie", {"node": "route_question", "relations": ["directed_by"]})
    assert smollm_report.path_correct(router, smollm_report.first_path(router))  # listed once
    nodes = [
        {"type": "movie"},
        {"type": "person", "relation": "directed_by"},
        {"type": "movie", "relation": "written_by"},
    ]
    plan = {"node": "plan_question", "raw": {"routes": [{"nodes": nodes}]}}
    wrong = _record("movie_to_director_to_movie", plan)
    assert smollm_report.first_path(wrong) == ["directed_by", "written_by"]
    assert not smollm_report.path_correct(wrong, smollm_report.first_path(wrong))
    assert smollm_report.path_accuracy([router, wrong]) == (0.5, 2)
    sky = {"node": "analyze_question", "decision": "depth 2: Big - directed by - entity - directed by - answer(movie)"}
    analysed = _record("movie_to_director_to_movie", sky)
    assert smollm_report.first_path(analysed) == ["directed_by", "directed_by"]
    assert smollm_report.path_correct(analysed, smollm_report.first_path(analysed))


def test_report_rows_from_records(tmp_path):
    folder = tmp_path / "hybgrag-bank-1hop"
    folder.mkdir()
    rec = {
        "id": "q1",
        "question": "who directed Heat",
        "qtype": "movie_to_director",
        "error": None,
        "ranked": [{"id": "Michael Mann", "kind": "entity", "name": "Michael Mann", "score": 1.0}],
        "relevant": [["Michael Mann"]],
        "answer": "",
        "gold": {"answers": ["Michael Mann"], "answer_ids": [], "keys": ["Michael Mann"]},
        "trace": [{"node": "route_question", "relations": ["directed_by"]}],
        "seconds": 4.0,
        "usage": {"llm_calls": 2, "llm_seconds": 3.0, "stages": {}},
        "evidence": [{"source": "kg", "id": "Heat", "path": ["Heat directed by Michael Mann"]}],
    }
    missed = {**rec, "id": "q2", "ranked": [], "relevant": [], "evidence": [{"text": "Heat release year 1995"}]}
    (folder / "records.jsonl").write_text(json.dumps(rec) + "\n" + json.dumps(missed) + "\n", encoding="utf-8")
    row = smollm_report.cell_row(("hybgrag", "bank", "1hop"), folder)
    cells = [c.strip() for c in row.split("|")[1:-1]]
    assert len(cells) == len(smollm_report.HEAD)
    assert cells[3] == "2" and cells[4].startswith("0.500 (goal ≥ 0.8: **no**)")
    assert cells[7] == "50.0%"  # gold in evidence: q1's evidence names Michael Mann, q2's does not
    assert cells[8] == "100.0%" and cells[10] == "1.50"
    row = smollm_report.cell_row(("hybgrag", "bank", "1hop"), folder, first=1)
    assert [c.strip() for c in row.split("|")[1:-1]][7] == "100.0%"
    missing = smollm_report.cell_row(("mor", "bank", "1hop"), tmp_path / "missing")
    assert len(missing.split("|")) == len(smollm_report.HEAD) + 2
    assert "not run" in smollm_report.cell_row(("mor", "bank", "1hop"), tmp_path / "missing")


def test_reproduce_line_leaves_out_notes_and_report_only():
    argv = ["--limit", "25", "--report-only", "--note", "ran at 50", "--note=x", "--stop-at", "07:22"]
    assert smollm_matrix.shown_argv(argv) == ["--limit", "25", "--stop-at", "07:22"]


def test_rows_name_their_commit_and_come_from_the_first_runs_folder_with_records(tmp_path):
    rec = {
        "id": "q1",
        "question": "who directed Heat",
        "qtype": "movie_to_director",
        "error": None,
        "ranked": [],
        "relevant": [["Michael Mann"]],
        "answer": "",
        "gold": {"answers": ["Michael Mann"], "answer_ids": [], "keys": ["Michael Mann"]},
        "trace": [],
        "seconds": 1.0,
        "usage": {},
    }
    new, old = tmp_path / "new", tmp_path / "old"
    for runs, commit in ((new, None), (old, "abc1234")):
        folder = runs / "mor-bank-1hop"
        folder.mkdir(parents=True)
        (folder / "records.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
        if commit:
            (folder / "summary.json").write_text(json.dumps({"commit": commit}), encoding="utf-8")
    (old / "mor-bank-2hop").mkdir()
    (old / "mor-bank-2hop" / "records.jsonl").write_text(json.dumps(rec) + "\n", encoding="utf-8")
    (old / "mor-bank-2hop" / "summary.json").write_text(json.dumps({"commit": "abc1234"}), encoding="utf-8")
    one, two = ("mor", "bank", "1hop"), ("mor", "bank", "2hop")
    assert smollm_report.cell_folder(one, [new, old]) == new / "mor-bank-1hop"  # the newer runs first
    assert smollm_report.cell_folder(two, [new, old]) == old / "mor-bank-2hop"  # else an older one
    assert smollm_report.cell_row(one, new / "mor-bank-1hop").endswith("| `(unfinished)` |")
    assert smollm_report.cell_row(two, old / "mor-bank-2hop").endswith("| `abc1234` |")
    out = tmp_path / "report.md"
    info = {"date": "d", "commit": "c", "machine": {"cores": 2, "cpu": "x"}}
    smollm_report.render(out, [new, old], [one, two], info, [])
    table = [line for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("| mor")]
    assert [line.split("|")[-2].strip() for line in table] == ["`(unfinished)`", "`abc1234`"]


def test_every_run_and_first_n_compare_runs_of_a_cell_on_the_same_questions(tmp_path):
    def rec(i: int, right: bool) -> dict:
        return {
            "id": f"q{i}",
            "question": "who directed Heat",
            "qtype": "movie_to_director",
            "error": None,
            "ranked": [
                {
                    "id": "Michael Mann" if right else "x",
                    "kind": "entity",
                    "name": "Michael Mann" if right else "x",
                    "score": 1.0,
                }
            ],
            "relevant": [["Michael Mann"] if right else []],
            "answer": "",
            "gold": {"answers": ["Michael Mann"], "answer_ids": [], "keys": ["Michael Mann"]},
            "trace": [],
            "seconds": 1.0,
            "usage": {},
        }

    new, old = tmp_path / "new", tmp_path / "old"
    for runs, rights in ((new, [True, True]), (old, [False, True, True, True])):
        (runs / "mor-bank-1hop").mkdir(parents=True)
        lines = [json.dumps(rec(i, r)) for i, r in enumerate(rights)]
        (runs / "mor-bank-1hop" / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    info = {"date": "d", "commit": "c", "machine": {"cores": 2, "cpu": "x"}}
    out = tmp_path / "report.md"
    smollm_report.render(out, [new, old], [("mor", "bank", "1hop")], info, [], first=2, every=True)
    rows = [
        [c.strip() for c in line.split("|")[1:-1]]
        for line in out.read_text(encoding="utf-8").splitlines()
        if line.startswith("| mor")
    ]
    assert [(r[3], r[4][:5]) for r in rows] == [("2 (new)", "1.000"), ("2 (old)", "0.500")]
    smollm_report.render(out, [new, old], [("mor", "bank", "1hop")], info, [])
    rows = [line for line in out.read_text(encoding="utf-8").splitlines() if line.startswith("| mor")]
    assert len(rows) == 1 and "| 2 |" in rows[0]  # without them: one row, from the newer folder, all records


def test_stop_at_is_the_next_occurrence_and_a_bad_time_is_a_clear_error():
    from datetime import UTC, datetime

    night = datetime(2026, 11, 24, 23, 40, tzinfo=UTC)
    assert smollm_matrix.deadline("01:40", night) == datetime(2026, 11, 25, 1, 40, tzinfo=UTC)
    assert smollm_matrix.deadline("23:50", night) == datetime(2026, 11, 24, 23, 50, tzinfo=UTC)
    assert smollm_matrix.deadline("2026-11-25T01:40", night) == datetime(2026, 11, 25, 1, 40, tzinfo=UTC)
    assert smollm_matrix.past(datetime(2020, 1, 1, tzinfo=UTC)) and not smollm_matrix.past(None)
    with pytest.raises(SystemExit):
        benchmarks_main(["smollm", "--report-only", "--stop-at", "half past one"])
