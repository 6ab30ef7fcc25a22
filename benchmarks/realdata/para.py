"""The paraphrase section of docs/benchmarks_realdata.md: MetaQA questions in people's words.

Each row asks the same questions twice, as MetaQA wrote them and as ``scripts/make_paraphrases.py``
rewrote them. Fusion (no LLM) and the stand-in ask every question; SmolLM2 asks the first
``--para-limit`` of each hop on the bank KB of :mod:`benchmarks.realdata.para_bank`, whose solved
examples are other MetaQA dev questions. :func:`bank_check` counts how many evaluated questions the
bank holds (in either wording), so the page states it rather than assumes it.
"""

from __future__ import annotations

import argparse

from benchmarks.realdata import tables as T
from benchmarks.realdata.cells import LLM_METHODS, SMOLLM, Cell
from benchmarks.realdata.page import PARA_SIZES, RANKING, Runner, commits
from benchmarks.realdata.para_bank import para_bank_kb

HELD_OUT = 61  # questions of metaqa-paraphrase-test (scripts/make_paraphrases.py --held-out)

PARA_TEXT = """## Free wording: MetaQA questions as people type them

`evals/data/metaqa_paraphrases.jsonl` (`scripts/make_paraphrases.py`): 250 MetaQA dev questions, every question
type at 1, 2 and 3 hops (91 / 84 / 75), rewritten in wordings of our own ("who made stand by me"), no brackets,
some names lower-cased or with two letters swapped. `metaqa-paraphrase:Khop` asks them;
`metaqa-paraphrase:original:Khop` asks the same questions as MetaQA wrote them (brackets removed): each pair
is templated / paraphrased on the same questions. Score: Hit@1 of the ranked list for fusion, hybgrag and
mor; answer Hits@1 for hydrarag and ssrag.
SmolLM2 rows: `--llm local:smollm2` with each method's defaults on the bank KB `para-bank-metaqa-full`
(`benchmarks/realdata/para_bank.py`): MetaQA's KB with a `bank.jsonl` (docs/bank.md) built by `hybridrag bank
build` from questions 300-1300 of the seed-0 shuffle of each hop's MetaQA dev file, every paraphrased question
left out, plus the examples synthesized from the KB's schema. The bank shows MetaQA's templated wording of
*other* questions (other films, people, tags) with their relation paths; it generalises to a question only
through the masked wording of its nearest examples (entity replaced by `<E>`): a paraphrase whose wording
no bank question shares ("Tell me the cast of ...") gets examples of whatever relation reads closest.
Fusion's held-out row: `metaqa-paraphrase-test[:original]`, 61 other 1-hop dev questions in wordings fusion's
lexicon was not tuned on (docs/benchmarks_fusion.md, "Free wording")."""


def bank_check(kb_dir: str, questions: list[str]) -> str:
    """How many examples the bank KB's bank holds, and how many of them are one of ``questions`` (normalised)."""
    from hybridrag.agents.shots import bank_for
    from hybridrag.evals.metrics import normalize_answer
    from hybridrag.kb.base import open_kb

    bank = bank_for(open_kb(kb_dir))
    asked = {normalize_answer(q) for q in questions}
    same = sum(normalize_answer(e.question) in asked for e in bank.examples)
    sources = ", ".join(
        f"{s} {sum(e.source == s for e in bank.examples)}" for s in sorted({e.source for e in bank.examples})
    )
    return (
        f"Checked by this suite: the bank holds {len(bank.examples)} examples ({sources}), and"
        f" {same} of them is one of the {len(asked)} evaluated questions in either wording (normalised text)."
    )


def wording_check(kb_dir: str, limit: int) -> str:
    """How many of the SmolLM2 cells' questions are worded as a bank example word for word, entity masked.

    The bank's nearest-example search keeps only the matching example's relation path when it finds such a twin
    (docs/bank.md); a question with none gets the examples whose masked wording merely reads closest.
    """
    from hybridrag.agents.shots import bank as B
    from hybridrag.evals.datasets import sample
    from hybridrag.evals.sets import paraphrases
    from hybridrag.kb.base import open_kb

    kb = open_kb(kb_dir)
    banked = {B._normalise(e.masked) for e in B.bank_for(kb).examples}
    parts = []
    for h in (1, 2, 3):
        counts = []
        for variant in (f"original:{h}hop", f"{h}hop"):
            qs = sample(paraphrases(variant), limit, 0)
            masked = [B.mask_spans(q.question, [(m.start, m.end) for m in B.find_mentions(q.question, kb)]) for q in qs]
            counts.append(f"{sum(B._normalise(m) in banked for m in masked)}/{len(qs)}")
        parts.append(f"{h} hop{'s' * (h > 1)} {counts[0]} templated, {counts[1]} paraphrased")
    return (
        "Of the SmolLM2 cells' questions, worded as a bank example word for word once the entity is masked (so the"
        " bank shows exactly their relation path): " + "; ".join(parts) + "."
    )


def smollm_cells(limit: int, kb: str) -> list[tuple[int, Cell, Cell]]:
    """(hops, templated cell, paraphrased cell) of every SmolLM2 row, hop by hop (1-hop cells of all methods first)."""
    return [
        (
            h,
            Cell(m, f"metaqa-paraphrase:original:{h}hop", SMOLLM, limit=limit, kb=kb),
            Cell(m, f"metaqa-paraphrase:{h}hop", SMOLLM, limit=limit, kb=kb),
        )
        for h in (1, 2, 3)
        for m in LLM_METHODS
    ]


def para(runner: Runner, args: argparse.Namespace) -> tuple[str, int]:
    """The paraphrase set against MetaQA's wording: fusion, the stand-in, SmolLM2 with the bank."""
    rows, failed, done = [], 0, []
    kb = str(para_bank_kb())
    plan: list[tuple[str, str | None, int | None]] = [
        ("fusion", None, None),
        *((m, "oracle", None) for m in LLM_METHODS),
    ]
    plan += [(m, SMOLLM, args.para_limit) for m in LLM_METHODS]
    for m, llm, limit in plan:
        key = "hit@1" if m in ("fusion", *RANKING) else "answer_hits@1"
        cells = []
        for h in (1, 2, 3):
            n = min(limit or PARA_SIZES[h], PARA_SIZES[h])
            on = kb if llm == SMOLLM else None
            a = runner(Cell(m, f"metaqa-paraphrase:original:{h}hop", llm, limit=limit, kb=on), n)
            b = runner(Cell(m, f"metaqa-paraphrase:{h}hop", llm, limit=limit, kb=on), n)
            failed += bool(a.failed) + bool(b.failed)
            done += [a, b]
            cells.append(T.pair(a, b, key, 3))
        label = {None: "none", "oracle": "stand-in", SMOLLM: f"SmolLM2 + bank (first {limit} a hop)"}[llm]
        rows.append([m, label, key, *cells])
    a = runner(Cell("fusion", "metaqa-paraphrase-test:original"), HELD_OUT)
    b = runner(Cell("fusion", "metaqa-paraphrase-test"), HELD_OUT)
    failed += bool(a.failed) + bool(b.failed)
    done += [a, b]
    rows.append(
        ["fusion", f"none, held out ({HELD_OUT} other questions, other wordings)", "hit@1", T.pair(a, b, "hit@1", 3)]
        + ["1 hop only"] * 2
    )
    head = ["method", "LLM", "score", "1 hop: templated / paraphrased", "2 hops", "3 hops"]
    cmd = (
        "\n\nCommands: `hybridrag eval --method M --dataset metaqa-paraphrase:original:Khop [--llm L] [--limit N]"
        " [--kb BANK_KB]` and the same with `--dataset metaqa-paraphrase:Khop`. " + commits(done)
    )
    from hybridrag.evals.sets import paraphrases

    asked = [q.question for v in ("", "original") for q in paraphrases(v)]
    checks = bank_check(kb, asked) + "\n" + wording_check(kb, args.para_limit)
    return PARA_TEXT + "\n" + checks + "\n\n" + T.table(head, rows) + cmd, failed
