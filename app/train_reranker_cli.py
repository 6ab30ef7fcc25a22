r"""Train MoR's trajectory reranker (§3.3, Eq. 7) on questions with gold answers.

    hybridrag train-reranker --dataset metaqa-1hop --dataset metaqa-2hop --dataset metaqa-3hop \
        --skip-first 1000 --limit 600 --out /tmp/mor/reranker

Runs MoR up to its candidates for each training question (the planner is ``--llm``, the
perfect-LLM stand-in by default, so the plans are the gold ones), labels each candidate gold
by id or name, trains the network of :mod:`agents.mor.neural` on a training part
(:mod:`agents.mor.training`) and reports Hit@1 / MRR of the reranked lists on the held-out part
for the trained network, the linear training-free reranker and the semantic score alone, over
the same candidates. Writes ``reranker.npz``, ``loss.png`` (training and held-out loss per
epoch) and ``metrics.json``.

``--skip-first N`` leaves out the first N questions of each file's seed-0 order: the ones
``hybridrag eval --limit N`` asks, so the evaluations stay on questions the network never saw.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import replace
from pathlib import Path

from hybridrag.agents.mor import training as tr
from hybridrag.agents.mor.organize import best_attempt
from hybridrag.evals.cli import parse_overrides, resolve_dataset
from hybridrag.evals.datasets import Question, load_questions, sample, with_answer_names


def collect(questions: list[Question], ctx, progress: bool = True) -> list[tuple[Question, list[dict], list[bool]]]:
    """Each question's reranked attempt's candidates and their gold flags (graph run to the candidates)."""
    from tqdm import tqdm

    from hybridrag.graphs.mor import graph
    from hybridrag.graphs.runtime import resolve_kb

    kb, out = resolve_kb(ctx), []
    ctx = replace(ctx, reranker="structure")  # the candidates do not depend on the reranker
    for q in tqdm(questions, desc="collect candidates", unit="q", disable=not progress):
        run = graph.invoke({"question": q.question}, context=ctx, output_keys=["attempts"])
        best = best_attempt(run.get("attempts") or [])
        cands = best["candidates"] if best else []
        golds = {g.lower() for g in (*q.answers, *q.answer_ids)}
        out.append((q, cands, [c["id"].lower() in golds or kb.name(c["id"]).lower() in golds for c in cands]))
    return out


def plot(curve: list[float], held: list[float], path: Path) -> None:
    """Training and held-out Eq. 7 loss per epoch as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(range(1, len(curve) + 1), curve, label="training")
    ax.plot(range(1, len(held) + 1), held, label="held-out")
    ax.set_xlabel("epoch")
    ax.set_ylabel("Eq. 7 loss (mean per query)")
    ax.set_title("MoR trajectory reranker")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def _questions(args) -> tuple[list[Question], str | None, dict]:
    picked, kb_dir, notes = [], args.kb, {}
    for name in args.dataset or []:
        es = resolve_dataset(name, progress=not args.no_progress)
        kb_dir, notes = kb_dir or str(es.kb_dir), es.notes
        picked += sample(es.questions, len(es.questions), 0)[args.skip_first :][: args.limit]
    for path in args.questions or []:
        qs = load_questions(path)
        picked += sample(qs, len(qs), 0)[args.skip_first :][: args.limit]
    if not picked:
        raise SystemExit("train-reranker: give --dataset or --questions with questions beyond --skip-first")
    if not kb_dir:
        raise SystemExit("train-reranker: --questions needs --kb")
    return picked, kb_dir, notes


def parser() -> argparse.ArgumentParser:
    """The command's options."""
    p = argparse.ArgumentParser(prog="train-reranker", description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", action="append", help="metaqa-1hop|2hop|3hop|metaqa-hybrid-... (repeatable)")
    p.add_argument("--questions", action="append", type=Path, help="question file with gold answers (repeatable)")
    p.add_argument("--kb", help="KB directory (needed with --questions)")
    p.add_argument("--llm", default="oracle", help="planner model (default: the perfect-LLM stand-in)")
    p.add_argument("--skip-first", type=int, default=1000, help="questions of each file's eval order left out")
    p.add_argument("--limit", type=int, default=600, help="training questions per file")
    p.add_argument("--holdout", type=float, default=0.2, help="share of them held out for the metric")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="MoR setting for the candidate runs",
    )
    p.add_argument("--out", type=Path, required=True, help="output folder (weights, loss.png, metrics.json)")
    p.add_argument("--no-progress", action="store_true")
    return p


def main(argv: list[str] | None = None) -> int:
    """Collect, train, compare, write; 0 on success."""
    from hybridrag.evals.oracle import run as oracle_run
    from hybridrag.evals.oracle.model import is_oracle_spec
    from hybridrag.graphs import context_for
    from hybridrag.graphs.runtime import resolve_kb

    args = parser().parse_args(argv)
    if not 0 < args.holdout < 1:
        raise SystemExit("train-reranker: --holdout must be between 0 and 1")
    questions, kb_dir, notes = _questions(args)
    ctx = context_for("mor", kb=kb_dir, llm=args.llm, top_k=20, **parse_overrides(args.overrides))
    kb = resolve_kb(ctx)
    questions = with_answer_names(questions, kb.name)
    if is_oracle_spec(ctx.llm):
        oracle_run.setup(ctx.llm, questions, notes)
    rows = collect(questions, ctx, not args.no_progress)
    random.Random(args.seed).shuffle(rows)
    cut = int(len(rows) * (1 - args.holdout))
    train_rows, held_rows = rows[:cut], rows[cut:]
    length = ctx.fingerprint_length
    train_q, held_q = tr.encode_all(train_rows, kb, length), tr.encode_all(held_rows, kb, length)
    held_curve: list[float] = []
    config = tr.TrainConfig(hidden=args.hidden, epochs=args.epochs, lr=args.lr, seed=args.seed)
    meta = {
        "trained_on": [*(args.dataset or []), *map(str, args.questions or [])],
        "skip_first": args.skip_first,
        "questions": len(train_rows),
    }

    net, curve = tr.train(
        train_q,
        length,
        config,
        meta,
        progress=not args.no_progress,
        snapshot=lambda n: held_curve.append(tr.query_loss(n, held_q)),
    )
    args.out.mkdir(parents=True, exist_ok=True)
    net.save(args.out / "reranker.npz")
    plot(curve, held_curve, args.out / "loss.png")
    report = {
        "train_questions": len(train_rows),
        "heldout_questions": len(held_rows),
        "with_gold_candidate": {
            "train": sum(any(y) for *_, y in train_rows),
            "heldout": sum(any(y) for *_, y in held_rows),
        },
        "loss": {
            "train_first": curve[0],
            "train_last": curve[-1],
            "heldout_first": held_curve[0],
            "heldout_last": held_curve[-1],
        },
        "heldout": tr.compare(held_rows, net, kb, length),
        "config": vars(config),
        "meta": meta,
    }
    (args.out / "metrics.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    sys.stdout.write(json.dumps(report["heldout"], indent=1) + f"\nweights, loss.png, metrics.json in {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
