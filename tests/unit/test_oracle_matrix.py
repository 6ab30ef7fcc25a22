"""The oracle matrix report: scores over the ceiling against the goal, loop rows with repair shares."""

import json

import pytest

from benchmarks.common import finished
from benchmarks.quality import oracle_matrix as om


def summary(hit1=0.9, answer=0.8, ceiling=0.95, calls=2.5, n=100):
    metrics = {"hit@1": hit1, "mrr": 0.9, "hit@5": 0.97, "recall@20": 0.5, "answer_em": 0.7, "answer_hits@1": answer}
    usage = {"llm_calls_per_question": calls, "latency_seconds": {"total": {"p50": 0.05, "p95": 0.2}}}
    return {
        "metrics": metrics,
        "ceiling": {"hit": ceiling},
        "usage": usage,
        "n": n,
        "errors": 0,
        "command": "hybridrag eval ...",
    }


def test_ranking_methods_are_held_to_hit1_and_answering_methods_to_answer_hits():
    assert om.score_key("hybgrag") == om.score_key("mor") == "hit@1"
    assert om.score_key("hydrarag") == om.score_key("ssrag") == "answer_hits@1"


def test_goal_is_85_percent_at_three_hops_and_95_elsewhere():
    assert om.goal("metaqa-3hop") == 0.85
    assert om.goal("metaqa-1hop") == om.goal("metaqa-hybrid-50") == 0.95


def test_ceiling_row_divides_the_method_score_by_the_ceiling():
    row = om.ceiling_row("hybgrag", "metaqa-1hop", summary(hit1=0.9, ceiling=1.0))
    assert "| 90.0% (hit@1) | 95%: **no** |" in row
    row = om.ceiling_row("ssrag", "metaqa-3hop", summary(answer=0.9, ceiling=1.0))
    assert "| 90.0% (answer_hits@1) | 85%: yes |" in row
    assert "oracle" in row  # rows are labelled as perfect-LLM ceilings


def test_failed_cell_is_reported_not_raised():
    row = om.ceiling_row("mor", "metaqa-2hop", {"failed": "KBError: boom", "command": "hybridrag eval x"})
    assert "failed: KBError: boom" in row and "`hybridrag eval x`" in row


def test_loop_row_reports_both_scores_and_the_repair_share(tmp_path):
    counts = {
        "applied": 10,
        "looped": 9,
        "repaired": 8,
        "repair_share": 0.8,
        "by_type": {"wrong_entity": {"applied": 4, "repaired": 4}, "wrong_module": {"applied": 6, "repaired": 4}},
    }
    (tmp_path / "oracle_noise.json").write_text(json.dumps({"summary": counts}))
    outcome = {"harmful": 6, "rescued": 5, "share": 5 / 6}
    row = om.loop_row(
        "hybgrag", "metaqa-1hop", summary(hit1=0.85), summary(hit1=0.7), om.noise_summary(tmp_path), outcome
    )
    assert "| 0.850 | 0.700 | hit@1 | 10 | 9 | 8 | 80.0% (goal 80 %: yes) | 5/6 = 83.3% |" in row
    assert "wrong_entity 4/4, wrong_module 4/6" in row


def test_missing_noise_file_gives_no_share(tmp_path):
    row = om.loop_row(
        "mor",
        "metaqa-1hop",
        summary(),
        summary(),
        om.noise_summary(tmp_path),
        {"harmful": 0, "rescued": 0, "share": None},
    )
    assert "| n/a | n/a |" in row


def test_method_limits():
    assert om.parse_limits(["hydrarag=300"], 1000) == {"hybgrag": 1000, "mor": 1000, "hydrarag": 300, "ssrag": 1000}
    for bad in ("fusion=3", "hydrarag", "mor=0", "mor=x"):
        with pytest.raises(SystemExit, match="bad --method-limit"):
            om.parse_limits([bad], 1000)
    with pytest.raises(SystemExit, match="bad --method-noise-limit"):
        om.parse_limits(["ssrag"], 300, "--method-noise-limit")


def test_finished_only_reports_unrun_cells_without_running_them(tmp_path, monkeypatch):
    monkeypatch.setattr(om, "run_cell", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran a cell")))
    done = tmp_path / "oracle" / "mor-default-metaqa-1hop"
    done.mkdir(parents=True)
    (done / "summary.json").write_text(json.dumps({"n": 10}))
    cell = om._cell("mor", "metaqa-2hop", 10, tmp_path, "oracle", [], finished_only=True)
    assert cell["failed"].startswith("not run") and "--dataset metaqa-2hop" in cell["command"]
    assert finished(done, 10) and not finished(done, 11)
    assert om._cell("mor", "metaqa-1hop", 10, tmp_path, "oracle", [], finished_only=True) == {"n": 10}
