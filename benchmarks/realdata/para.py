"""The paraphrase section of docs/benchmarks_realdata.md: MetaQA questions in people's words.

Each row asks the same questions twice, as MetaQA wrote them and as ``scripts/make_paraphrases.py``
rewrote them. Fusion (no LLM) and the stand-in ask every question; SmolLM2 asks the first
``--para-limit`` of each hop on the bank KB of :mod:`benchmarks.realdata.para_bank`, whose solved
examples are other MetaQA dev questions. :func:`bank_check` counts how many evaluated questions the
bank holds (in either wording), so the page states it rather than assumes it. A second table asks the
held-out set (``metaqa-paraphrase-test[:Khop][:original]``: other questions, wordings no tuning saw) with the
same rows, and a third sets the wording gap (templated minus paraphrased) on the tuned questions beside the gap
on the held-out ones.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from benchmarks.realdata import tables as T
from benchmarks.realdata.cells import LLM_METHODS, SMOLLM, Cell, Result
from benchmarks.realdata.page import PARA_SIZES, RANKING, Runner, commits
from benchmarks.realdata.para_bank import para_bank_kb
from hybridrag.evals.sets import held_out, paraphrases

HELD_OUT = 61  # questions of metaqa-paraphrase-test (scripts/make_paraphrases.py --held-out)
Pairs = list[tuple[Result, Result]]  # (templated, paraphrased) results of one row, hop by hop

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

HELD_TEXT = """### Held out: other questions, other wordings

`metaqa-paraphrase-test[:Khop][:original]` (`scripts/make_paraphrases.py --held-out`): {sizes} other MetaQA dev
questions at 1 / 2 / 3 hops, written in wordings of the script's `HELD_OUT` and `HELD_OUT_MULTI` tables that share
no template with the tuned set ("co-stars of ...", "who helmed movies penned by ...", "what tongue are ... in",
"release years of ...'s movies"), with the same noise, and tuned on by nobody. 1 hop: up to 5 a question type,
outside positions 300-1300 of the seed-0 shuffle of `dev_1hop.txt`; 2 and 3 hops: 3 of every question type,
outside positions 0-1300 (neither the SmolLM2 suite's questions nor the banks'); none is a question of the tuned
set. The same rows as above on them (SmolLM2: the first {limit} of each hop, the same bank KB); without `:Khop`
the name means the 1-hop questions."""

GAP_TEXT = """Wording gap, tuned against held out: templated minus paraphrased score of each row above, on the tuned
questions / on the held-out ones (a larger held-out gap: what tuning on the paraphrase set bought does not carry
over to other wordings). Each SmolLM2 figure is a difference of two scores on {limit} questions."""


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


def wording_check(kb_dir: str, limit: int, load: Callable[[str], list] = paraphrases, what: str = "") -> str:
    """How many of the SmolLM2 cells' questions are worded as a bank example word for word, entity masked.

    The bank's nearest-example search keeps only the matching example's relation path when it finds such a twin
    (docs/bank.md); a question with none gets the examples whose masked wording merely reads closest.
    """
    from hybridrag.agents.shots import bank as B
    from hybridrag.evals.datasets import sample
    from hybridrag.kb.base import open_kb

    kb = open_kb(kb_dir)
    banked = {B._normalise(e.masked) for e in B.bank_for(kb).examples}
    parts = []
    for h in (1, 2, 3):
        counts = []
        for variant in (f"original:{h}hop", f"{h}hop"):
            qs = sample(load(variant), limit, 0)
            masked = [B.mask_spans(q.question, [(m.start, m.end) for m in B.find_mentions(q.question, kb)]) for q in qs]
            counts.append(f"{sum(B._normalise(m) in banked for m in masked)}/{len(qs)}")
        parts.append(f"{h} hop{'s' * (h > 1)} {counts[0]} templated, {counts[1]} paraphrased")
    return (
        f"Of the SmolLM2 cells' {what}questions, worded as a bank example word for word once the entity is masked"
        " (so the bank shows exactly their relation path): " + "; ".join(parts) + "."
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


def tuned_name(hops: int, original: bool) -> str:
    """The tuned paraphrase set's dataset at one hop count, in MetaQA's wording or in people's."""
    return f"metaqa-paraphrase:{'original:' * original}{hops}hop"


def held_name(hops: int, original: bool) -> str:
    """The held-out set's dataset at one hop count (1 hop: the bare name, the cells of fusion's held-out row)."""
    return "metaqa-paraphrase-test" + ":original" * original + f":{hops}hop" * (hops > 1)


def row_pairs(runner: Runner, row: tuple, kb: str, name: Callable[[int, bool], str], sizes: dict) -> Pairs:
    """Run one row's cells: (templated, paraphrased) at 1, 2 and 3 hops."""
    m, llm, limit = row
    on = kb if llm == SMOLLM else None
    out = []
    for h in (1, 2, 3):
        n = min(limit or sizes[h], sizes[h])
        a = runner(Cell(m, name(h, True), llm, limit=limit, kb=on), n)
        b = runner(Cell(m, name(h, False), llm, limit=limit, kb=on), n)
        out.append((a, b))
    return out


def _key(method: str) -> str:
    return "hit@1" if method in ("fusion", *RANKING) else "answer_hits@1"


def _label(llm: str | None, limit: int | None) -> str:
    return {None: "none", "oracle": "stand-in", SMOLLM: f"SmolLM2 + bank (first {limit} a hop)"}[llm]


def _gap(pair: tuple[Result, Result], key: str) -> float | None:
    a, b = (T.score(r, key) for r in pair)
    return None if a is None or b is None else a - b


def score_rows(plan: list[tuple], runs: list[Pairs]) -> list[list[str]]:
    """Per row: method, LLM, score name and templated / paraphrased at 1, 2 and 3 hops."""
    return [
        [m, _label(llm, limit), _key(m), *(T.pair(a, b, _key(m), 3) for a, b in pairs)]
        for (m, llm, limit), pairs in zip(plan, runs, strict=True)
    ]


def gap_rows(plan: list[tuple], tuned: list[Pairs], held: list[Pairs]) -> list[list[str]]:
    """Per row and hop: the wording gap on the tuned questions / on the held-out ones."""
    rows = []
    for (m, llm, limit), t, h in zip(plan, tuned, held, strict=True):
        gaps = [[_gap(p, _key(m)) for p in (tp, hp)] for tp, hp in zip(t, h, strict=True)]
        rows.append([m, _label(llm, limit)] + [" / ".join("–" if g is None else f"{g:+.3f}" for g in x) for x in gaps])
    return rows


def para(runner: Runner, args: argparse.Namespace) -> tuple[str, int]:
    """The paraphrase set against MetaQA's wording: fusion, the stand-in, SmolLM2 with the bank; then held out."""
    kb = str(para_bank_kb())
    plan: list[tuple[str, str | None, int | None]] = [
        ("fusion", None, None),
        *((m, "oracle", None) for m in LLM_METHODS),
    ]
    plan += [(m, SMOLLM, args.para_limit) for m in LLM_METHODS]
    tuned = [row_pairs(runner, row, kb, tuned_name, PARA_SIZES) for row in plan]
    rows = score_rows(plan, tuned)
    done = [r for pairs in tuned for p in pairs for r in p]
    a = runner(Cell("fusion", "metaqa-paraphrase-test:original"), HELD_OUT)
    b = runner(Cell("fusion", "metaqa-paraphrase-test"), HELD_OUT)
    rows.append(  # the held-out table below has its 2 and 3 hops (and these two cells again)
        ["fusion", f"none, held out ({HELD_OUT} other questions, other wordings)", "hit@1", T.pair(a, b, "hit@1", 3)]
        + ["in the held-out table"] * 2
    )
    sizes = {h: len(held_out(f"{h}hop")) for h in (1, 2, 3)}
    held = [row_pairs(runner, row, kb, held_name, sizes) for row in plan]
    held_rows = score_rows(plan, held)
    done += [r for pairs in held for p in pairs for r in p]
    failed = sum(bool(r.failed) for r in done)
    head = ["method", "LLM", "score", "1 hop: templated / paraphrased", "2 hops", "3 hops"]
    cmd = (
        "\n\nCommands: `hybridrag eval --method M --dataset metaqa-paraphrase:original:Khop [--llm L] [--limit N]"
        " [--kb BANK_KB]` and the same with `--dataset metaqa-paraphrase:Khop`; held out: `--dataset"
        " metaqa-paraphrase-test:Khop:original` and `--dataset metaqa-paraphrase-test:Khop`. " + commits(done)
    )
    asked = [q.question for v in ("", "original") for q in paraphrases(v)]
    asked += [q.question for h in (1, 2, 3) for v in ("", "original:") for q in held_out(f"{v}{h}hop")]
    checks = bank_check(kb, asked) + "\n" + wording_check(kb, args.para_limit)
    held_check = wording_check(kb, args.para_limit, held_out, "held-out ")
    gap_head = ["method", "LLM", "1 hop: tuned / held out", "2 hops", "3 hops"]
    return (
        PARA_TEXT
        + "\n"
        + checks
        + "\n\n"
        + T.table(head, rows)
        + "\n\n"
        + HELD_TEXT.format(sizes=" / ".join(str(sizes[h]) for h in (1, 2, 3)), limit=args.para_limit)
        + "\n"
        + held_check
        + "\n\n"
        + T.table(head, held_rows)
        + "\n\n"
        + GAP_TEXT.format(limit=args.para_limit)
        + "\n\n"
        + T.table(gap_head, gap_rows(plan, tuned, held))
        + cmd,
        failed,
    )
