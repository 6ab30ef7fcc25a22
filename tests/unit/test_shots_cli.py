"""``hybridrag bank build / add / show``: questions with gold answers, user files, bad input."""

from __future__ import annotations

import json

import test_shots

from hybridrag.agents.shots.bank import bank_path, read_bank_file
from hybridrag.app.cli import main

company_kb_src, company_kb = test_shots.company_kb_src, test_shots.company_kb  # the fixtures, shared

QUESTIONS = """\
what does [Acme] make\tRocket Skates|Giant Magnet
what are the products of [Acme] made of\tSteel
which company supplies [Globex]\tInitech
what does [Umbrella Corp] make\tT-Virus
where is [Initech] based\tNowhere Land
"""


def test_build_from_questions_finds_paths_and_counts_skips(company_kb, tmp_path, capsys):
    qs = tmp_path / "qa_dev.txt"
    qs.write_text(QUESTIONS, encoding="utf-8")
    assert main(["bank", "build", "--kb", str(company_kb.directory), "--questions", str(qs), "--synth", "1"]) == 0
    out = capsys.readouterr().out
    assert "solved 3, skipped 2" in out and "topic not in KB: 1" in out and "answers not in KB: 1" in out
    bank = read_bank_file(bank_path(company_kb.directory))
    run = {e.question: e for e in bank if e.source == "run"}
    assert run["what does Acme make"].relations == ("makes",)
    assert run["what does Acme make"].masked == "what does <E> make"
    assert run["what are the products of Acme made of"].relations == ("makes", "made_of")
    assert run["which company supplies Globex"].relations == ("supplies",)
    assert run["which company supplies Globex"].directions == ("in",)
    assert any(e.source == "schema" for e in bank)
    assert (company_kb.directory / "bank.vectors.npz").exists()
    assert not list((company_kb.directory / "builds").glob("*/bank.jsonl"))  # beside `current`, not in a build


def test_add_keeps_user_examples_and_show_finds_them(company_kb, tmp_path, capsys):
    mine = tmp_path / "mine.jsonl"
    rows = [
        {
            "question": "which city hosts Globex",
            "topic": ["Globex"],
            "relations": ["based_in"],
            "answer_type": "city",
            "answers": ["Cypress Creek"],
            "outputs": {"router": {"relations": ["based_in"]}},
        },
        {"question": "what does Initech make", "answers": ["TPS Report Software"]},
    ]
    mine.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    kb = str(company_kb.directory)
    assert main(["bank", "add", "--kb", kb, "--file", str(mine)]) == 0
    bank = read_bank_file(bank_path(kb))
    user = {e.question: e for e in bank if e.source == "user"}
    assert user["which city hosts Globex"].masked == "which city hosts <E>"
    assert user["which city hosts Globex"].outputs == {"router": {"relations": ["based_in"]}}
    assert user["which city hosts Globex"].topic_types == ("company",)  # filled in from the KB
    assert user["what does Initech make"].relations == ("makes",)
    assert any(e.source == "schema" for e in bank)  # the synthesized examples stay
    capsys.readouterr()
    assert main(["bank", "show", "--kb", kb, "--question", "which city hosts Acme", "-k", "1", "--role", "router"]) == 0
    out = capsys.readouterr().out
    assert "masked: which city hosts <E>" in out and "which city hosts Globex" in out
    assert main(["bank", "build", "--kb", kb, "--synth", "0"]) == 0  # a rebuild keeps the user's examples
    assert {e.question for e in read_bank_file(bank_path(kb))} == set(user)


def test_bad_input_is_one_line_naming_the_problem(company_kb, tmp_path, capsys):
    kb = str(company_kb.directory)
    assert main(["bank", "show", "--kb", str(tmp_path / "nope")]) == 2
    assert "KB directory not found" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "what does Acme make", "answers": ["Hammock"]}\n{not json\n', encoding="utf-8")
    assert main(["bank", "add", "--kb", kb, "--file", str(bad)]) == 2
    assert f"{bad}:2" in capsys.readouterr().err
    bad.write_text('{"question": "who directed Acme", "relations": ["directed_by"]}\n', encoding="utf-8")
    assert main(["bank", "add", "--kb", kb, "--file", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:1" in err and "'directed_by' is not in the KB" in err
    txt = tmp_path / "qa.txt"
    txt.write_text("what does [Acme] make\n", encoding="utf-8")
    assert main(["bank", "build", "--kb", kb, "--questions", str(txt)]) == 2
    assert f"{txt}:1" in capsys.readouterr().err
    assert main(["bank", "build", "--kb", kb, "--synth", "-1"]) == 2
    assert main(["bank", "build", "--kb", kb, "--limit", "5"]) == 2
    assert "--limit needs --questions" in capsys.readouterr().err
    assert not bank_path(kb).exists()  # nothing written by a refused command
