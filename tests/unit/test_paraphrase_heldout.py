"""The held-out paraphrase set at 1, 2 and 3 hops (issue 26 item 8): its loader, its sources, its wordings."""

import argparse
import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.realdata.para_bank import para_bank_lines
from benchmarks.smollm.bank import _plain, question_lines
from hybridrag.evals.hybrid import metaqa_dir
from hybridrag.evals.sets import PARAPHRASES, PARAPHRASES_TEST, PARAPHRASES_TEST_MULTIHOP, resolve_dataset
from hybridrag.kb.model import KBError
from scripts import make_paraphrases as M

ONE_HOP_SHA256 = "23223f172d805a46666b4faaae0ebeb315c113f35dec428ab068cbbe4f5a09ac"  # fusion's published 0.902


def _rows(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _ids(name):
    return [q.id for q in resolve_dataset(name, build_kb=False).questions]


def test_the_one_hop_rows_are_unchanged_and_the_bare_name_still_means_them():
    assert hashlib.sha256(PARAPHRASES_TEST.read_bytes()).hexdigest() == ONE_HOP_SHA256
    ids = [r["id"] for r in _rows(PARAPHRASES_TEST)]
    assert len(ids) == 61 and (ids[0], ids[-1]) == ("metaqa-1hop-para-test:527", "metaqa-1hop-para-test:9495")
    for name in ("metaqa-paraphrase-test", "metaqa-paraphrase-test:1hop", "metaqa-paraphrase-test:original"):
        assert _ids(name) == ids


@pytest.mark.parametrize("hops,count", [(2, 63), (3, 45)])
def test_each_multi_hop_variant_asks_its_own_hop_in_either_wording(hops, count):
    rows = [r for r in _rows(PARAPHRASES_TEST_MULTIHOP) if r["hops"] == hops]
    para = resolve_dataset(f"metaqa-paraphrase-test:{hops}hop", build_kb=False).questions
    assert [q.id for q in para] == [r["id"] for r in rows] and len(rows) == count
    assert [q.question for q in para] == [r["question"] for r in rows]
    for name in (f"metaqa-paraphrase-test:original:{hops}hop", f"metaqa-paraphrase-test:{hops}hop:original"):
        same = resolve_dataset(name, build_kb=False).questions
        assert [q.question for q in same] == [r["original"].replace("[", "").replace("]", "") for r in rows]
        assert [list(q.answers) for q in same] == [r["answers"] for r in rows] and {q.hops for q in same} == {hops}


@pytest.mark.parametrize("variant", ["4hop", "2hop:3hop", "original:original", "held", "2hop:"])
def test_a_bad_variant_is_one_line_naming_the_valid_ones(variant):
    with pytest.raises(KBError) as err:
        resolve_dataset(f"metaqa-paraphrase-test:{variant}", build_kb=False)
    assert "metaqa-paraphrase-test[:1hop|2hop|3hop][:original]" in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("hops", [2, 3])
def test_every_question_type_has_three_questions_no_suite_asks_or_banks(hops):
    rows = [r for r in _rows(PARAPHRASES_TEST_MULTIHOP) if r["hops"] == hops]
    types = {t.strip() for t in (metaqa_dir() / f"dev_{hops}hop_qtype.txt").read_text().splitlines()}
    assert Counter(r["qtype"] for r in rows) == dict.fromkeys(types, 3)
    held = {_plain(r["original"]) for r in rows}
    assert len(held) == len(rows)
    lines = question_lines(hops)
    order = list(range(len(lines)))
    random.Random(0).shuffle(order)  # 0-299 the smollm suite asks, 300-1299 the banks hold
    assert not held & {_plain(lines[i]) for i in order[:1300]}
    assert not held & {_plain(line) for line in para_bank_lines(hops)}
    assert not held & {_plain(r["original"]) for r in _rows(PARAPHRASES)}
    for r in rows:  # the answers and type are the dev line's own
        n = int(r["id"].rpartition(":")[2]) - 1
        assert lines[n] == r["original"] + "\t" + "|".join(r["answers"])


def _pattern(template):
    return re.escape(template).replace(re.escape("{x}"), "(.+)")


def test_the_wordings_are_the_held_out_table_and_none_of_the_tuned_set():
    rows = _rows(PARAPHRASES_TEST_MULTIHOP)
    tuned = [_pattern(w) for r in _rows(PARAPHRASES) for w in M.wordings(r["qtype"])]
    for r in rows:
        names = [m.group(1) for w in M.held_out_wordings(r["qtype"]) if (m := re.fullmatch(_pattern(w), r["question"]))]
        assert names, r["question"]
        name = names[0]
        if r["noise"] == "lower-case":
            assert name == r["topic"].lower()
        elif r["noise"] == "typo":
            assert name != r["topic"] and sorted(name) == sorted(r["topic"]) and len(name) == len(r["topic"])
        else:
            assert name == r["topic"]
        assert not any(re.fullmatch(p, r["question"]) for p in tuned), r["question"]
    noise = Counter(r["noise"] for r in rows)
    assert 0.25 < noise["lower-case"] / len(rows) < 0.45 and 0.08 < noise["typo"] / len(rows) < 0.25


def test_the_script_writes_the_same_files_again(monkeypatch):
    written = {}
    monkeypatch.setattr(M, "_write", lambda path, rows: written.__setitem__(path.name, rows))
    M.held_out()
    assert written[PARAPHRASES_TEST.name] == _rows(PARAPHRASES_TEST)
    assert written[PARAPHRASES_TEST_MULTIHOP.name] == _rows(PARAPHRASES_TEST_MULTIHOP)


@pytest.mark.parametrize("hops,size", [(1, 61), (2, 63), (3, 45)])
def test_the_page_names_each_held_out_cell_by_a_dataset_of_that_hop(hops, size):
    from benchmarks.realdata.para import held_name

    para, same = (resolve_dataset(held_name(hops, o), build_kb=False).questions for o in (False, True))
    assert len(para) == len(same) == size and [q.id for q in para] == [q.id for q in same]
    assert {q.hops for q in para} == {hops} and para[0].question != same[0].question
    assert held_name(1, False) == "metaqa-paraphrase-test" and held_name(1, True) == "metaqa-paraphrase-test:original"


def test_the_paraphrase_section_asks_the_held_out_set_and_sets_its_gap_beside_the_tuned_one(monkeypatch):
    from benchmarks.realdata import para
    from benchmarks.realdata.cells import SMOLLM, Result

    asked = []

    def runner(cell, expected):  # templated 1.0; paraphrased 0.5 on the tuned set, 0.25 held out
        asked.append((cell, expected))
        hit = 1.0 if "original" in cell.dataset else 0.25 if "test" in cell.dataset else 0.5
        return Result(cell, {"n": expected, "metrics": {"hit@1": hit}}, [{"id": "q", "answer": "", "gold": {}}])

    monkeypatch.setattr(para, "bank_check", lambda kb, questions: "bank checked")
    monkeypatch.setattr(para, "para_bank_kb", lambda: Path("/cache/para-bank-metaqa-full"))
    monkeypatch.setattr(para, "wording_check", lambda kb, limit, load=None, what="": f"{what}wording checked")
    text, failed = para.para(runner, argparse.Namespace(para_limit=7))
    held = [(c, n) for c, n in asked if c.dataset.startswith("metaqa-paraphrase-test")]
    smollm = [(c, n) for c, n in held if c.llm == SMOLLM]
    assert len(smollm) == 4 * 3 * 2 and {(c.limit, n) for c, n in smollm} == {(7, 7)}
    assert {c.kb for c, _ in smollm} == {"/cache/para-bank-metaqa-full"}
    oracle = [(c.dataset, n) for c, n in held if c.llm == "oracle"]
    assert len(oracle) == 4 * 3 * 2 and ("metaqa-paraphrase-test:original:3hop", 45) in oracle
    assert ("metaqa-paraphrase-test:2hop", 63) in oracle and ("metaqa-paraphrase-test", 61) in oracle
    assert failed == 0 and "### Held out" in text and "61 / 63 / 45" in text and "held-out wording checked" in text
    assert "| fusion | none | +0.500 / +0.750 | +0.500 / +0.750 | +0.500 / +0.750 |" in text
    assert "| mor | SmolLM2 + bank (first 7 a hop) | +0.500 / +0.750 |" in text
