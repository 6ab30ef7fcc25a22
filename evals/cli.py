"""``hybridrag eval``: resolve a dataset and a method, run it, write records and the summary.

Datasets (``--dataset``) are the named sets of :mod:`hybridrag.evals.sets`; or ``--questions FILE``
(MetaQA format, JSONL or a STaRK CSV) with ``--kb DIR`` or ``--skb DIR`` (default: the bundled
sample KB).

``--llm oracle[:p=0.3]`` runs an LLM method with the perfect-LLM stand-in of
:mod:`hybridrag.evals.oracle` (MetaQA-style questions only): the results are ceilings of the
method's machinery and are labelled so (``label`` in the summary, ``-oracle`` in the output folder).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from hybridrag.evals.datasets import load_questions, sample, stark_kb, with_answer_names
from hybridrag.evals.markdown import provenance
from hybridrag.evals.sets import EvalSet, paraphrases, resolve_dataset  # noqa: F401 - importable from here
from hybridrag.kb.model import KBError

DEFAULT_RUNS = Path("eval-runs")


def add_eval_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``hybridrag eval`` options to ``parser``."""
    parser.add_argument("--method", required=True, help="method name (see `hybridrag ask --help`)")
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--dataset", help="metaqa-1hop|2hop|3hop, metaqa-hybrid-100|50|0[:Khop], advhotpotqa[:PATH] or stark:DIR"
    )
    src.add_argument("--questions", type=Path, help="question file: MetaQA format, JSONL or STaRK CSV")
    parser.add_argument("--kb", help="KB directory (overrides the dataset's KB)")
    parser.add_argument("--skb", type=Path, help="SKB directory in the STaRK layout, converted into a KB")
    parser.add_argument("--limit", type=int, help="evaluate the first N of a seeded shuffle of the questions")
    parser.add_argument("--llm", help="chat model spec for LLM methods")
    parser.add_argument("--out", type=Path, help="output folder (default eval-runs/<method>-<dataset>)")
    parser.add_argument("--workers", type=int, help="concurrent questions (default 2 for fusion, else 1)")
    parser.add_argument("--top-k", type=int, default=20, dest="top_k", help="ranked items per question")
    parser.add_argument("--seed", type=int, default=0, help="seed of the question sample and hybrid split")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        dest="overrides",
        help="override a context field, e.g. --set mode=vector (repeatable)",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def parse_overrides(items: list[str]) -> dict:
    """``["mode=vector", "k1=5"]`` → ``{"mode": "vector", "k1": 5}`` (JSON values, else text)."""
    out = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--set expects FIELD=VALUE, got {item!r}")
        try:
            out[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            out[key.strip()] = raw
    return out


def _command(args: argparse.Namespace) -> str:
    parts = ["hybridrag", "eval", "--method", args.method]
    parts += ["--dataset", args.dataset] if args.dataset else ["--questions", str(args.questions)]
    for flag in ("kb", "skb", "limit", "llm", "workers", "out"):
        if getattr(args, flag, None) is not None:
            parts += [f"--{flag}", str(getattr(args, flag))]
    if args.top_k != 20:
        parts += ["--top-k", str(args.top_k)]
    if args.seed:
        parts += ["--seed", str(args.seed)]
    for o in args.overrides:
        parts += ["--set", o]
    return shlex.join(parts)


def _eval_set(args: argparse.Namespace) -> EvalSet:
    from hybridrag.kb.sample import cache_root

    progress = not args.no_progress
    if args.dataset:
        es = resolve_dataset(args.dataset, args.seed, progress, build_kb=not args.kb)  # --kb: its own KB only
    else:
        kb_dir = stark_kb(args.skb, cache_root(), progress) if args.skb else None
        es = EvalSet(args.questions.stem, load_questions(args.questions), kb_dir)
    if args.kb:
        es.kb_dir = None if args.kb == "sample" else Path(args.kb)  # as `ask --kb sample`: the bundled KB
    return es


RUN_KEYS = ("method", "dataset", "kb", "seed", "top_k", "overrides", "llm")


def _check_resume(out: Path, meta: dict) -> None:
    """Record the run's settings in ``out/run.json`` (a torn one is named in a warning and rewritten).

    Raises:
        ValueError: ``out`` is a file, cannot be written, or holds a run with other settings.
    """
    from hybridrag.evals.runner import check_out_dir, read_run_json, write_json_atomic

    check_out_dir(out)
    path = out / "run.json"
    settings = {k: meta.get(k) for k in RUN_KEYS}
    before = read_run_json(path)
    if before is not None:
        changed = [k for k in RUN_KEYS if before.get(k) != settings[k]]
        if changed:
            raise ValueError(f"{out} holds a run with other settings ({', '.join(changed)}); use another --out")
    write_json_atomic(path, settings)


def _warm_up(kb: Any, ctx: Any) -> None:
    """Load the KB's vectors, the embedding model and (LLM methods) the solved-example bank.

    Done before the first timed question, so no question's latency carries the one-off loading
    (``open_kb`` caches the KB, so the method's graph gets this same, warm object).
    """
    from hybridrag.agents.shots import bank_for

    try:
        kb.dense_search("warm-up", k=1)
        if hasattr(ctx, "llm"):
            bank_for(kb).nearest("warm-up", 1)
    except KBError as exc:  # a KB the method uses without dense search: its questions say so if it matters
        sys.stderr.write(f"warm-up skipped: {exc}\n")


def _respelled(kb: Any, questions: list) -> list:
    """The questions the graphs respell (``tools/spelling.py``) as they respell them: the stand-in knows both texts."""
    from dataclasses import replace

    from hybridrag.tools.spelling import kb_spelling

    spelled = [(q, kb_spelling(kb, q.question)[0]) for q in questions]
    return [replace(q, question=text) for q, text in spelled if text != q.question]


def _context(args: argparse.Namespace, es: EvalSet, kb: Any, questions: list) -> tuple[Any, dict, Any]:
    """The method's context (``--set`` overrides applied), the overrides, and the stand-in when asked for.

    An LLM method's chat model is loaded here, so a missing API key or model file fails before the
    first question.
    """
    from hybridrag.evals.oracle import run as oracle_run
    from hybridrag.evals.oracle.model import is_oracle_spec
    from hybridrag.graphs import context_class, context_for

    known = set(context_class(args.method).__dataclass_fields__)
    settings = {"kb": str(kb.directory), "top_k": args.top_k, "llm": args.llm}
    overrides = {k: v for k, v in settings.items() if v is not None and k in known}
    extra = parse_overrides(args.overrides)
    overrides.update(extra)
    ctx = context_for(args.method, **overrides)
    oracle = None
    if "llm" in known and is_oracle_spec(ctx.llm):  # the perfect-LLM stand-in, built from the gold
        asked = [*questions, *_respelled(kb, questions)] if getattr(ctx, "spelling", False) else questions
        oracle = oracle_run.setup(
            ctx.llm, asked, es.notes, getattr(ctx, "llm_base_url", ""), kb.graph.schema().relation_types
        )
    if "llm" in known:  # fail before the first question on a missing API key or model file
        from hybridrag.agents.llm.models import load_chat_model

        load_chat_model(ctx.llm, getattr(ctx, "llm_base_url", ""))
    return ctx, extra, oracle


def run_eval(args: argparse.Namespace) -> int:
    """Run ``hybridrag eval``; return 0, or 1 when every question failed."""
    from hybridrag.evals.oracle import run as oracle_run
    from hybridrag.evals.relevance import Judge
    from hybridrag.evals.runner import run_questions
    from hybridrag.graphs import get_graph
    from hybridrag.kb.base import open_kb
    from hybridrag.kb.sample import sample_kb_dir

    es = _eval_set(args)
    kb = open_kb(es.kb_dir or sample_kb_dir(not args.no_progress))
    questions = sample(with_answer_names(es.questions, kb.name), args.limit, args.seed)
    ctx, extra, oracle = _context(args, es, kb, questions)
    slug = re.sub(r"[^\w.-]+", "_", es.name) + "".join(f"-{k}={v}" for k, v in extra.items())
    slug += oracle_run.out_suffix(ctx.llm) if oracle else ""
    out = args.out or DEFAULT_RUNS / f"{args.method}-{slug}"
    workers = args.workers or (2 if args.method == "fusion" else 1)
    meta = {
        "method": args.method,
        "dataset": es.name,
        "kb": str(kb.directory),
        "limit": args.limit,
        "seed": args.seed,
        "top_k": args.top_k,
        "overrides": extra,
        "llm": getattr(ctx, "llm", None),
        "workers": workers,
        "command": _command(args),
        **es.notes,
        **provenance(),
    }
    if oracle:
        meta["label"] = oracle_run.label(args.method, ctx.llm)
    _check_resume(Path(out), meta)
    _warm_up(kb, ctx)
    judge = Judge.for_kb(kb, es.ceiling_graph)
    summary = run_questions(
        get_graph(args.method), ctx, questions, out, judge, workers, progress=not args.no_progress, meta=meta
    )
    from hybridrag.evals.summary import to_markdown

    text = oracle_run.finish(oracle, summary, Path(out)) if oracle else to_markdown(summary)
    sys.stdout.write(text + f"\nrecords and summary in {out}\n")
    return 1 if summary["n"] and summary["errors"] == summary["n"] else 0
