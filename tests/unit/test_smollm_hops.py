"""The smollm-hops benchmark without a model: held-out questions, the page's rows and its first lines."""

from __future__ import annotations

import pytest


def _row(method: str, hops: int, variant: str, qid: str, seconds: float, hit: float, **more) -> dict:
    base = {"evaluated": 100, "prompt_tokens": 400, "prompt_ms": 800.0, "gen_ms": 300.0, "other_ms": 50.0}
    usage = {
        "llm_calls": 1,
        "by_role": {"router": {"llm_calls": 1, "input_tokens": 400, "output_tokens": 30, "llm_seconds": seconds - 0.1}},
    }
    return {
        "method": method,
        "hops": hops,
        "variant": variant,
        "id": qid,
        "question": qid,
        "seconds": seconds,
        "hit@1": hit,
        "usage": usage,
        "error": None,
        **base,
        **more,
    }


ROWS = [
    _row("hybgrag", 1, "new", "a", 1.0, 1.0, cpu_s=0.3),
    _row("hybgrag", 1, "baseline", "a", 3.0, 1.0, other_ms=2000.0),
    _row("hybgrag", 1, "new", "b", 1.5, 0.0, cpu_s=0.5),
    _row("hybgrag", 1, "baseline", "b", 2.5, 1.0),
]


def test_held_out_questions_are_past_the_bank_and_never_banked():
    from benchmarks.smollm.bank import _plain, bank_lines
    from benchmarks.smollm.speed_hops import held_out

    qs = held_out(2, 5, 1300)
    banked = {_plain(line) for h in (1, 2, 3) for line in bank_lines(h)}
    assert len(qs) == 5 and not {_plain(q.question) for q in qs} & banked
    with pytest.raises(SystemExit, match="--offset 300"):
        held_out(2, 5, 300)


def test_rows_give_p50_goal_hit_and_counters_per_variant():
    from benchmarks.smollm.speed_report import groups, speed_row

    g = groups(ROWS)
    new = speed_row(("hybgrag", 1, "new"), g[("hybgrag", 1, "new")])
    base = speed_row(("hybgrag", 1, "baseline"), g[("hybgrag", 1, "baseline")])
    assert new[4] == "**1.25** (yes)" and base[4] == "2.75"
    assert new[6] == "0.40" and base[6] == "0.00"
    assert new[8] == "0.500" and base[8] == "1.000"
    assert new[9] == "100 / 400" and new[12] == "50" and base[12] == "1025"


def test_same_answers_and_roles():
    from benchmarks.smollm.speed_report import role_rows, same_answers

    assert same_answers(ROWS) == (1, 2)
    assert role_rows(ROWS) == [["hybgrag", "1-hop", "router", "1.00", "400", "30.0", "1.15"]]


def test_page_names_its_suite_and_command_in_the_first_lines(tmp_path):
    from benchmarks.smollm.speed_report import write_report

    info = {"date": "2026-11-27 07:00 UTC", "commit": "abc", "machine": {"cores": 2, "cpu": "x"}}
    copies = {"new": {"tokens": 600, "mb": 13.0, "save_ms": 5.0, "load_ms": 7.0}}
    out = tmp_path / "speed.md"
    write_report(
        out,
        ROWS,
        copies,
        info,
        "python -m benchmarks smollm-hops --per-hop 2",
        "1 1 1 → 2 2 2",
        {"new": "N", "baseline": "B"},
    )
    head = "\n".join(out.read_text(encoding="utf-8").splitlines()[:8])
    assert "smollm-hops" in head and "--per-hop 2" in head and "1 1 1 → 2 2 2" in head
    assert "**new**: N; **baseline**: B" in head
    assert "| new | 600 | 13.0 | 5.0 | 7.0 |" in out.read_text(encoding="utf-8")
