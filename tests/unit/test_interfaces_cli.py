"""CLI gaps of issue 14: a fast --help, `ask --set`, `serve --set/--bound`, `eval --kb sample`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from hybridrag.app.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "langgraph", "langchain_core", "sentence_transformers", "numpy")


@pytest.mark.parametrize("argv", [["--help"], ["ask", "--help"], ["serve", "--help"], ["eval", "--help"], ["ask"]])
def test_help_and_usage_errors_import_nothing_heavy(argv):
    code = (
        f"import sys\nfrom hybridrag.app.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]", (out.stdout[-500:], out.stderr[-500:])


def test_ask_set_any_context_field(capsys):
    assert main(["ask", "who directed Forrest Gump", "--json", "--set", "mode=vector", "--set", "top_k=2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["ranked"]) == 2 and {r["source"] for r in out["ranked"]} == {"doc"}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "nope=1"], "--set nope: fusion has no such setting; known: "),
        (["--set", "top_k=many"], "--set top_k=many: expected an integer"),
        (["--set", "top_k"], "--set 'top_k': expected FIELD=VALUE"),
    ],
)
def test_ask_set_mistakes_are_one_line(capsys, argv, message):
    assert main(["ask", "who directed Forrest Gump", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err


def test_serve_set_and_bound_become_operator_settings():
    from hybridrag.app.operator import operator_config

    sets = ["structured_method=json_mode", "hybgrag.num_few_shot=3", "fusion.mode=vector", "mor.fill_with_text=false"]
    args = build_parser().parse_args(["serve", *(a for s in sets for a in ("--set", s)), "--bound", "beam_width=1:50"])
    config = operator_config(args)
    assert config.settings == {
        "*": {"structured_method": "json_mode"},
        "hybgrag": {"num_few_shot": 3},
        "fusion": {"mode": "vector"},
        "mor": {"fill_with_text": False},
    }
    assert config.bounds == {"beam_width": (1.0, 50.0)}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "nope.top_k=3"], "--set nope.top_k: unknown method 'nope'"),
        (["--set", "fusion.few_shot=x"], "--set fusion.few_shot: fusion has no setting 'few_shot'"),
        (["--bound", "beam_width=50"], "--bound 'beam_width=50': expected FIELD=LO:HI"),
    ],
)
def test_serve_set_mistakes_are_one_line(capsys, argv, message):
    assert main(["serve", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1, err


def test_eval_accepts_kb_sample_like_ask(tmp_path, capsys):
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"question": "who directed [Forrest Gump]", "answers": ["Robert Zemeckis"]}\n', encoding="utf-8"
    )
    out = tmp_path / "run"
    argv = [
        "eval",
        "--method",
        "fusion",
        "--questions",
        str(questions),
        "--kb",
        "sample",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 0, capsys.readouterr().err
    assert (out / "records.jsonl").read_text(encoding="utf-8").count("\n") == 1
