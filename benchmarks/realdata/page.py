"""The sections of docs/benchmarks_realdata.md: their cells, tables and the prose that reads them.

Each section function takes the runner (``runner(cell, expected) -> Result``) and the suite's
arguments and returns its markdown and the number of failed cells.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from benchmarks.realdata import tables as T
from benchmarks.realdata.cells import LLM_METHODS, ORACLE_SETS, SMOLLM, Cell, Result
from hybridrag.evals.markdown import provenance

ADV = "advhotpotqa"
ADV_N = 154
PARA_SIZES = {1: 91, 2: 84, 3: 75}
FUSION_MODES = (
    ("fusion (hybrid, default)", ()),
    ("fusion vector-only", ("mode=vector",)),
    ("fusion BM25-only", ("mode=bm25",)),
)
RANKING = ("hybgrag", "mor")  # scored by Hit@1 of the ranked list on MetaQA; the others by answer Hits@1
Runner = Callable[[Cell, int], Result]


def header(cmd: str, args: argparse.Namespace) -> str:
    """Title, the command that wrote the page, its limits and provenance."""
    p = provenance()
    lines = [
        "# Real data: documents, untyped triples, free wording",
        "",
        f"Written by `{cmd}` (`python -m benchmarks realdata --help`; every cell is a `hybridrag eval` run,",
        f"cached in `{args.runs}`, so a re-run only rewrites this page; `--fresh` runs the cells again).",
        f"Run at commit {p.get('commit')}, finished {p.get('date')}, on a 2-core machine shared with other work",
        "(latencies are noisy).",
        f"Limits: AdvHotpotQA stand-in and no-LLM cells {args.limit or 'all ' + str(ADV_N)} questions, SmolLM2",
        f"cells the first {args.smollm_limit} of the seeded shuffle (seed 0); MetaQA typed/untyped",
        f"{args.metaqa_limit} questions per hop; paraphrase set: fusion and the stand-in every question, SmolLM2",
        f"the first {args.para_limit} of each hop (seeded shuffle)" + ". Stand-in rows (`--llm oracle`) are ceilings",
        "of each method's machinery with a perfect model, never a model's result.",
    ]
    return "\n".join(lines)


def commits(results: list[Result]) -> str:
    """The commits the cells ran at (a shared checkout moves while a suite runs), with their counts."""
    seen: dict[str, int] = {}
    for r in results:
        c = str(r.summary.get("commit", "unknown"))
        seen[c] = seen.get(c, 0) + 1
    return "Cells run at commit " + ", ".join(f"{c} ({n})" for c, n in seen.items()) + "."


def _adv_texts() -> dict[str, str]:
    from hybridrag.evals.documents_qa import load_advhotpotqa
    from hybridrag.evals.hybrid import datasets_root

    return load_advhotpotqa(datasets_root() / "advhotpotqa" / "dev.json")[1]


ADV_TEXT = """## AdvHotpotQA dev: every method

The 154 questions of `../shared/datasets/advhotpotqa/dev.json` over the documents KB built from their 615
paragraphs by the documents pipeline a user runs (one file per paragraph, no extraction model, so no graph);
308 paragraphs are planted near-duplicates stating wrong facts. Scores as `evals/documents_qa.py` defines them:
supporting-document recall@k (the record's evidence documents, else its ranked list's), both@10 (both
supporting documents in the top 10), answer EM / F1 (SQuAD normalisation), misled (the top document is planted,
or the answer is stated by a planted paragraph of the question and by none of its real ones). *gold shown*: the
share of questions whose evidence states the gold answer in a paragraph that is not planted, i.e. what an answer
role could read. *gold in answer prompt* (stand-in rows): an answer prompt of the method (answerer, answer check,
final answer) showed a supported gold answer; the stand-in's EM is bounded by it, and the gap between the two
columns is what the method's answer prompt leaves out of what it retrieved. Rounds: the loop count per question.

The stand-in on real text (`evals/oracle/text_gold.py`, `evals/oracle/text_roles.py`): per question it knows the
gold answer, the supporting paragraphs, rationale sentences and supporting titles, and answers each prompt from
what the prompt shows: it names a gold answer only when a data block of the prompt states it in text that reads
as a real paragraph (its closest paragraph of the question is not a planted one), and says "I do not know"
otherwise; entity roles name the supporting titles the question or prompt names, else the question's own
capitalised phrases; it never names a title or answer the prompt does not show (its leak check raises)."""


def adv(runner: Runner, args: argparse.Namespace) -> tuple[str, int]:
    """AdvHotpotQA: fusion's modes, each LLM method with the stand-in and SmolLM2, planted ranks."""
    n = args.limit or ADV_N
    texts, failed = _adv_texts(), 0
    rows: list[str] = []
    planted: list[list[str]] = []
    commands: list[list[str]] = []
    plan: list[tuple[str, str, Cell, int]] = [
        (label, "none", Cell("fusion", ADV, sets=sets, limit=args.limit), n) for label, sets in FUSION_MODES
    ]
    for m in LLM_METHODS:
        plan.append((m, "stand-in", Cell(m, ADV, "oracle", ORACLE_SETS.get(m, ()), args.limit), n))
        plan.append((m, "SmolLM2", Cell(m, ADV, SMOLLM, limit=args.smollm_limit), args.smollm_limit))
    for label, llm, cell, expected in plan:
        r = runner(cell, expected)
        failed += bool(r.failed)
        rows.append(T.adv_row(label, llm, r, texts))
        planted.append(T.planted_cells(f"{label}, {llm}", r))
        commands.append([f"{label}, {llm}", f"`{cell.command()}`", str(r.summary.get("commit", "–"))])
    body = [
        ADV_TEXT,
        T.ADV_HEAD,
        *rows,
        "\nWhere the planted paragraphs land (`benchmarks/realdata/planted.py`, also `python scripts/planted_ranks.py"
        " RUN_DIR`): planted first = the top document is planted; above a supporting = the best planted document ranks"
        " above some supporting document (one not returned counts as below); above its original = a planted document"
        " ranks above the supporting paragraph it imitates; in top 5 / 10 = planted documents there, mean per question"
        " (each question has 2).\n",
        T.table(["run", *T.PLANTED_KEYS], planted),
        "\nCommands:\n",
        T.table(["row", "command", "commit of the run"], commands),
    ]
    return "\n".join(body), failed


def typed(runner: Runner, args: argparse.Namespace) -> tuple[str, int]:
    """MetaQA with its type map against the untyped KB, the stand-in, per hop."""
    head = "## Untyped triples: MetaQA without its type map\n\n"
    if not args.untyped_kb:
        return head + "Not run: no `--untyped-kb` given.", 0
    rows, failed, done = [], 0, []
    for m in LLM_METHODS:
        for h in (1, 2, 3):
            a = runner(Cell(m, f"metaqa-{h}hop", "oracle", limit=args.metaqa_limit), args.metaqa_limit)
            b = runner(
                Cell(m, f"metaqa-{h}hop", "oracle", limit=args.metaqa_limit, kb=str(args.untyped_kb)), args.metaqa_limit
            )
            failed += bool(a.failed) + bool(b.failed)
            done += [a, b]
            rows.append([m, str(h), T.pair(a, b, "hit@1"), T.pair(a, b, "answer_hits@1")])
    text = (
        "The README's `hybridrag ingest --kb K --triples kb.txt` on MetaQA with no `--type-map`"
        f" (here `{args.untyped_kb}`; ingest infers the types from the relation signatures) against the"
        " dataset's typed KB, the perfect-LLM stand-in,"
        f" the first {args.metaqa_limit} of the seed-0 shuffle of each hop's dev questions (the same in both columns)."
        " Hit@1 of the ranked list and answer Hits@1 (a gold answer as a whole phrase of `answer`).\n\n"
    )
    cmd = (
        "\n\nCommands: `hybridrag eval --method M --dataset metaqa-Khop --llm oracle --limit N` and the same with"
        " `--kb UNTYPED_KB`. " + commits(done)
    )
    return head + text + T.table(
        ["method", "hops", "Hit@1 typed / untyped", "answer Hits@1 typed / untyped"], rows
    ) + cmd, failed


SECTIONS: dict[str, Callable[[Runner, argparse.Namespace], tuple[str, int]]] = {
    "adv": adv,
    "typed": typed,
}  # and "para" (benchmarks/realdata/para.py, which reads this module): see benchmarks.realdata.main.SECTIONS
