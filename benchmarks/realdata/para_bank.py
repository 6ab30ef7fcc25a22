"""The bank KB of the paraphrase section: MetaQA's KB plus a bank of dev questions none of the evaluated ones.

The paraphrase set (``evals/data/metaqa_paraphrases.jsonl``) holds 250 MetaQA dev questions. Its
SmolLM2 cells run on a *bank KB* (``para-bank-metaqa-full`` beside the MetaQA KB in the cache): the
same graph files, linked as :mod:`benchmarks.smollm.bank` links them, and a ``bank.jsonl`` built by
``hybridrag bank build`` / ``bank add`` from questions 300 to 1300 of the seed-0 shuffle of each
``dev_<k>hop.txt`` with every question of the paraphrase set (and of the held-out set
``metaqa_paraphrases_test.jsonl``) left out; the held-out 2- and 3-hop questions
(``metaqa_paraphrases_test_multihop.jsonl``) come from outside positions 0-1300, so they never were candidates.
So the bank holds MetaQA's own templated wording of other questions, never a question it is evaluated on in
either wording.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from benchmarks.smollm.bank import _link_kb, _plain, bank_lines, source_kb

NAME = "para-bank-metaqa-full"
DONE = "para-bank.done"
DATA = Path(__file__).resolve().parents[2] / "evals" / "data"
SETS = ("metaqa_paraphrases.jsonl", "metaqa_paraphrases_test.jsonl", "metaqa_paraphrases_test_multihop.jsonl")


def evaluated() -> set[str]:
    """The plain (unbracketed, case-folded) MetaQA wording of every paraphrased question."""
    out = set()
    for name in SETS:
        path = DATA / name
        if path.exists():
            out |= {_plain(json.loads(line)["original"]) for line in path.read_text(encoding="utf-8").splitlines()}
    return out


def para_bank_lines(hops: int) -> list[str]:
    """The bank's questions of one hop count: the smollm bank's slice without any evaluated question."""
    asked = evaluated()
    return [line for line in bank_lines(hops) if _plain(line) not in asked]


def para_bank_kb() -> Path:
    """The paraphrase section's bank KB (built on first use: links, then the bank)."""
    src = source_kb("metaqa-1hop")
    dst = src.parent / NAME
    if (dst / DONE).exists():
        return dst
    _link_kb(src, dst)
    exe = shutil.which("hybridrag") or "hybridrag"
    for hops in (1, 2, 3):
        path = dst / f"bank_questions_{hops}hop.txt"  # the name tells the builder the hop count
        path.write_text("\n".join(para_bank_lines(hops)) + "\n", encoding="utf-8")
        verb = (
            ["bank", "build", "--kb", str(dst), "--questions"]
            if hops == 1
            else ["bank", "add", "--kb", str(dst), "--file"]
        )
        subprocess.run([exe, *verb, str(path)], check=True)
    (dst / DONE).write_text("bank built from dev_1hop, dev_2hop, dev_3hop without the paraphrased questions\n")
    return dst
