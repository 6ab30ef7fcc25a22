"""`hybridrag eval` with a damaged or wrong output folder: a resume, or one line and exit 2."""

import json
import logging
import os

import pytest

from hybridrag.app.cli import main

QUESTIONS = [
    '{"question": "who directed [Big]", "answers": ["Penny Marshall"]}',
    '{"question": "who directed [Apollo 13]", "answers": ["Ron Howard"]}',
]


@pytest.fixture
def questions(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text("\n".join(QUESTIONS) + "\n", encoding="utf-8")
    return path


def _eval(tiny_kb, questions, out):
    return main(
        [
            "eval",
            "--method",
            "fusion",
            "--questions",
            str(questions),
            "--kb",
            tiny_kb,
            "--out",
            str(out),
            "--no-progress",
        ]
    )


def _one_line_error(capsys, *needles):
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
    return err


def test_torn_run_json_is_named_repaired_and_the_records_kept(tiny_kb, questions, tmp_path, capsys, caplog):
    out = tmp_path / "run"
    assert _eval(tiny_kb, questions, out) == 0
    run_json, records = out / "run.json", (out / "records.jsonl").read_text(encoding="utf-8")
    text = run_json.read_text(encoding="utf-8")
    run_json.write_text(text[: text.index('"dataset": "') + 13], encoding="utf-8")  # cut inside a string
    capsys.readouterr()
    with caplog.at_level(logging.WARNING):
        assert _eval(tiny_kb, questions, out) == 0
    named = [r.getMessage() for r in caplog.records if str(run_json) in r.getMessage()]
    assert len(named) == 1 and "\n" not in named[0] and "Unterminated string" in named[0]
    assert json.loads(run_json.read_text(encoding="utf-8"))["method"] == "fusion"  # rewritten from this run
    assert (out / "records.jsonl").read_text(encoding="utf-8") == records  # nothing re-run, nothing lost
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["resumed"] == 2


def test_run_json_that_is_not_an_object_is_repaired(tiny_kb, questions, tmp_path, caplog):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text("[1, 2]", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert _eval(tiny_kb, questions, out) == 0
    assert any(str(out / "run.json") in r.getMessage() for r in caplog.records)
    assert json.loads((out / "run.json").read_text(encoding="utf-8"))["method"] == "fusion"


def test_run_json_is_replaced_atomically(tiny_kb, questions, tmp_path):
    out = tmp_path / "run"
    assert _eval(tiny_kb, questions, out) == 0
    inode = (out / "run.json").stat().st_ino
    assert _eval(tiny_kb, questions, out) == 0
    assert (out / "run.json").stat().st_ino != inode  # a new file renamed over the old, never rewritten in place
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("run.json")) == ["run.json"]


def test_records_jsonl_that_is_a_directory_is_one_line(tiny_kb, questions, tmp_path, capsys):
    out = tmp_path / "run"
    (out / "records.jsonl").mkdir(parents=True)
    assert _eval(tiny_kb, questions, out) == 2
    _one_line_error(capsys, str(out / "records.jsonl"), "directory")


def test_out_that_is_a_file_is_one_line(tiny_kb, questions, tmp_path, capsys):
    out = tmp_path / "a-file"
    out.write_text("not a folder\n", encoding="utf-8")
    assert _eval(tiny_kb, questions, out) == 2
    _one_line_error(capsys, str(out), "is a file")


def test_out_under_a_file_is_one_line(tiny_kb, questions, tmp_path, capsys):
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    out = tmp_path / "a-file" / "run"
    assert _eval(tiny_kb, questions, out) == 2
    _one_line_error(capsys, str(out))


def test_out_where_nothing_can_be_written_is_one_line(tiny_kb, questions, tmp_path, capsys):
    if os.geteuid() == 0:  # root ignores file modes; /sys refuses new entries even to root
        out = "/sys/hybridrag-test-out"
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        out = locked / "run"
    assert _eval(tiny_kb, questions, out) == 2
    _one_line_error(capsys, str(out))


def test_library_run_refuses_records_that_are_a_directory(tmp_path):
    from hybridrag.evals.runner import run_questions

    (tmp_path / "records.jsonl").mkdir()
    with pytest.raises(ValueError, match="is a directory"):
        run_questions(object(), None, [], tmp_path, judge=None, progress=False)
