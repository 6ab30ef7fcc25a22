"""``hybridrag train-reranker`` reaches MoR's training command, with one-line errors."""

import pytest

from hybridrag.app.cli import main


def test_train_reranker_is_listed(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "train-reranker" in capsys.readouterr().out


def test_train_reranker_options_are_the_training_commands(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["train-reranker", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "--questions" in out and "--holdout" in out and "--out" in out


def test_missing_question_file_is_one_line(tmp_path, capsys):
    code = main(["train-reranker", "--questions", str(tmp_path / "nope.txt"), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: ") and "nope.txt" in err and len(err.strip().splitlines()) == 1
