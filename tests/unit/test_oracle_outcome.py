"""Repairs by outcome: errors that cost the single pass its answer, and the loop's rescues."""

import json

from hybridrag.evals.oracle.outcome import outcome_repairs, right


def _record(qid, answer, ranked_right, reachable=True):
    return {
        "id": qid,
        "answer": answer,
        "gold": {"answers": ["Ridley Scott"]},
        "relevant": [["Ridley Scott"]] if ranked_right else [[]],
        "reachable": ["Ridley Scott"] if reachable else [],
    }


def _run(folder, records, applied):
    folder.mkdir()
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    entries = [{"id": r["id"], "applied": r["id"] in applied} for r in records]
    (folder / "oracle_noise.json").write_text(json.dumps({"entries": entries}))


def test_right_uses_the_ranked_list_or_the_answer():
    rec = _record("q", "Sigourney Weaver", ranked_right=True)
    assert right(rec, "hit@1") and not right(rec, "answer_hits@1")
    assert right(_record("q", "It was Ridley Scott.", ranked_right=False), "answer_hits@1")


def test_only_applied_reachable_errors_the_single_pass_got_wrong_count(tmp_path):
    single = [
        _record("a", "x", False),
        _record("b", "Ridley Scott", True),  # a harmful, b absorbed
        _record("c", "x", False, reachable=False),
        _record("d", "x", False),
    ]  # c unreachable, d not applied
    loop = [
        _record("a", "Ridley Scott", True),
        _record("b", "Ridley Scott", True),
        _record("c", "x", False, reachable=False),
        _record("d", "x", False),
    ]
    _run(tmp_path / "single", single, applied={"a", "b", "c"})
    _run(tmp_path / "loop", loop, applied={"a", "b", "c"})
    assert outcome_repairs(tmp_path / "loop", tmp_path / "single", "answer_hits@1") == {
        "harmful": 1,
        "rescued": 1,
        "share": 1.0,
    }


def test_a_loop_that_does_not_help_rescues_nothing(tmp_path):
    _run(tmp_path / "single", [_record("a", "x", False)], applied={"a"})
    _run(tmp_path / "loop", [_record("a", "y", False)], applied={"a"})
    assert outcome_repairs(tmp_path / "loop", tmp_path / "single", "hit@1") == {
        "harmful": 1,
        "rescued": 0,
        "share": 0.0,
    }


def test_missing_runs_give_no_share(tmp_path):
    assert outcome_repairs(tmp_path / "x", tmp_path / "y", "hit@1")["share"] is None
