"""``hybridrag bank``: build, extend and inspect a KB's bank of solved examples (docs/bank.md)."""
# ruff: noqa: T201 - a CLI module: it prints its results, like app/cli.py

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


def add_bank_arguments(sub) -> None:
    """Register ``bank build``, ``bank add`` and ``bank show`` on the CLI's sub-parsers."""
    bank = sub.add_parser("bank", help="solved examples of a KB, used as few-shot examples (docs/bank.md)")
    cmds = bank.add_subparsers(dest="bank_command", required=True)
    build = cmds.add_parser("build", help="(re)build the bank: gold questions, schema examples, your examples")
    build.add_argument("--kb", required=True, type=Path, help="KB directory")
    build.add_argument("--questions", type=Path, help="questions with gold answers: MetaQA .txt or JSONL")
    build.add_argument(
        "--synth",
        type=int,
        default=2,
        metavar="N",
        help="schema-synthesized examples per relation path (default 2; 0: none)",
    )
    build.add_argument("--limit", type=int, metavar="N", help="use at most N questions (seeded sample)")
    build.add_argument("--seed", type=int, default=0)
    build.add_argument(
        "--keep-outliers",
        action="store_true",
        help="keep solved examples whose path their look-alikes outvote (left out by default, "
        "written to bank.outliers.jsonl)",
    )
    build.set_defaults(func=_build)
    add = cmds.add_parser("add", help="add your own solved examples or questions with answers")
    add.add_argument("--kb", required=True, type=Path, help="KB directory")
    add.add_argument(
        "--file",
        required=True,
        type=Path,
        help="JSONL {question, relations, topic, answers, outputs} or {question, answers}, "
        "or MetaQA 'question [Topic]<TAB>ans1|ans2'",
    )
    add.add_argument(
        "--keep-outliers", action="store_true", help="keep solved questions whose path their look-alikes outvote"
    )
    add.set_defaults(func=_add)
    show = cmds.add_parser("show", help="summarise the bank, or the nearest examples of a question")
    show.add_argument("--kb", required=True, type=Path, help="KB directory")
    show.add_argument("--question", help="print the nearest examples of this question")
    show.add_argument("-k", type=int, default=5, help="examples to print with --question (default 5)")
    show.add_argument("--role", help="prefer examples with outputs for this role")
    show.set_defaults(func=_show)


def _open(kb_dir: Path):
    from hybridrag.kb.base import open_kb

    return open_kb(kb_dir)


def _questions(path: Path, limit: int | None, seed: int) -> list:
    from hybridrag.evals.datasets import load_questions, sample

    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be at least 1, got {limit}")
    return sample(load_questions(path), limit, seed)


def _user_rows(kb, path: Path) -> tuple[list, list]:
    """(examples given with their relations, questions to solve) from a user file."""
    from dataclasses import replace

    from hybridrag.agents.shots.example import example_from_dict
    from hybridrag.agents.shots.mask import mask_name
    from hybridrag.kb.loaders import json_lines

    if path.suffix.lower() not in (".jsonl", ".json"):
        return [], _questions(path, None, 0)
    if not path.exists():
        raise FileNotFoundError(f"file not found: {path}")
    rels = set(kb.graph.schema().relation_types)
    given, to_solve = [], []
    with open(path, encoding="utf-8") as f:
        rows = list(json_lines(f, path))
    for no, row in rows:
        where = f"{path}:{no}"
        if isinstance(row, dict) and "relations" in row:
            ex = example_from_dict({"source": "user", **row}, where)
            unknown = [r for r in ex.relations if r not in rels]
            if unknown:
                raise ValueError(
                    f"{where}: relation {unknown[0]!r} is not in the KB (known: {', '.join(sorted(rels))})"
                )
            if "masked" not in row:
                ex = replace(ex, masked=mask_name(ex.question, ex.topic, kb))
            if not ex.topic_types:  # the KB knows them: nearest() matches examples by topic type
                types = [e.type for name in ex.topic for e in kb.graph.lookup(name)]
                ex = replace(ex, topic_types=tuple(dict.fromkeys(types)))
            given.append(ex)
        else:
            to_solve.append(_plain_question(row, where))
    return given, to_solve


def _plain_question(row, where: str):
    """A row without relations: a question with gold answers to solve on the KB."""
    from hybridrag.evals.datasets import Question

    if not isinstance(row, dict) or not isinstance(row.get("question"), str) or not row["question"].strip():
        raise ValueError(f"{where}: needs a non-empty 'question' (and 'answers', or 'relations')")
    answers = row.get("answers")
    answers = [answers] if isinstance(answers, str) else answers
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        raise ValueError(f"{where}: needs 'answers' (a list of names) or 'relations'")
    topic, hops = row.get("topic"), row.get("hops")
    return Question(
        id=where,
        question=row["question"].strip(),
        answers=tuple(answers),
        topic=topic if isinstance(topic, str) else None,
        hops=hops if isinstance(hops, int) else None,
    )


def _save(kb, examples: list) -> None:
    from hybridrag.agents.shots.bank import Bank, bank_path, write_bank_file

    path = bank_path(kb.directory)
    seen, unique = set(), []
    for e in examples:  # one example per question and path; the first (user before run) wins
        key = (e.question.casefold(), e.relations)
        if key not in seen:
            seen.add(key)
            unique.append(e)
    n = write_bank_file(path, unique)
    Bank(kb, unique, path).vectors(progress=True)
    counts = Counter(e.source for e in unique)
    print(f"bank {path}: {n} examples ({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})")


def _report(kb, source: Path, tally) -> None:
    """Print a solve tally; the outvoted examples go to ``bank.outliers.jsonl`` (nothing is lost)."""
    from hybridrag.agents.shots.bank import bank_path, read_bank_file, write_bank_file

    print(f"{source}: {tally.line()}")
    if tally.dropped:
        path = bank_path(kb.directory).with_name("bank.outliers.jsonl")
        earlier = read_bank_file(path) if path.exists() else []  # an earlier build's or add's: kept
        new = {(e.question, e.relations) for e in tally.dropped}
        write_bank_file(path, [e for e in earlier if (e.question, e.relations) not in new] + tally.dropped)
        print(f"{len(tally.dropped)} outvoted examples written to {path} (keep them: --keep-outliers)")


def _existing(kb) -> list:
    from hybridrag.agents.shots.bank import open_bank

    bank = open_bank(kb)
    return list(bank.examples) if bank else []


def _build(args: argparse.Namespace) -> int:
    from hybridrag.agents.shots.solve import solve_all
    from hybridrag.agents.shots.synth import synthesize
    from hybridrag.agents.shots.walk import Walker

    if args.synth < 0:
        raise ValueError(f"--synth must be 0 or more, got {args.synth}")
    if args.limit is not None and not args.questions:
        raise ValueError("--limit needs --questions (it samples the question file)")
    kb = _open(args.kb)
    walker = Walker(kb.graph)
    user = [e for e in _existing(kb) if e.source == "user"]
    run = []
    if args.questions:
        run, tally = solve_all(
            kb,
            _questions(args.questions, args.limit, args.seed),
            "run",
            True,
            walker,
            user,
            consensus=not args.keep_outliers,
        )
        _report(kb, args.questions, tally)
    schema = synthesize(kb, per_path=args.synth, seed=args.seed, walker=walker) if args.synth else []
    print(f"schema: {len(schema)} examples synthesized")
    _save(kb, user + run + schema)
    return 0


def _add(args: argparse.Namespace) -> int:
    from hybridrag.agents.shots.solve import solve_all
    from hybridrag.agents.shots.synth import synthesize

    kb = _open(args.kb)
    given, to_solve = _user_rows(kb, args.file)
    old = _existing(kb) or synthesize(kb)
    solved, tally = (
        solve_all(kb, to_solve, "user", True, voters=given + old, consensus=not args.keep_outliers)
        if to_solve
        else ([], None)
    )
    if tally is not None:
        _report(kb, args.file, tally)
    _save(kb, given + solved + old)
    return 0


def _show(args: argparse.Namespace) -> int:
    from hybridrag.agents.shots.bank import bank_for, bank_path
    from hybridrag.agents.shots.mask import mask_question

    kb = _open(args.kb)
    bank = bank_for(kb)
    built = bank_path(kb.directory).exists()
    where = bank_path(kb.directory) if built else "not built: synthesized from the schema"
    print(
        f"bank of {kb.directory} ({where}): {len(bank)} examples"
        + (f", {bank.stale} stale left out" if bank.stale else "")
    )
    if args.question:
        print(f"masked: {mask_question(args.question, kb)}")
        for e in bank.nearest(args.question, args.k, args.role):
            print(
                json.dumps(
                    {
                        "question": e.question,
                        "relations": list(e.relations),
                        "answer_type": e.answer_type,
                        "source": e.source,
                        "answers": list(e.answers[:5]),
                    },
                    ensure_ascii=False,
                )
            )
        return 0
    for label, counts in (
        ("source", Counter(e.source for e in bank.examples)),
        ("hops", Counter(str(e.hops) for e in bank.examples)),
        ("answer type", Counter(e.answer_type for e in bank.examples)),
    ):
        print(f"  {label}: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    for answer_type, examples in bank.by_type(1).items():
        e = examples[0]
        print(f"  e.g. [{answer_type}] {e.question}  ->  {' / '.join(e.relations)}")
    sys.stdout.flush()
    return 0
