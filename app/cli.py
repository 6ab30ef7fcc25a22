"""The ``hybridrag`` command: ingest, ask, eval, serve."""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _ingest(args: argparse.Namespace) -> int:
    from hybridrag.app.documents_cli import run_ingest  # files or documents, new KB or a change: kb/kb_update.py

    return run_ingest(args)


def _ask(args: argparse.Namespace) -> int:
    from hybridrag.graphs import context_for, get_graph
    from hybridrag.graphs.runtime import resolve_kb
    from hybridrag.kb.base import same_kb_build
    from hybridrag.tools.retrieval import check_mentions

    if not args.question.strip():
        raise ValueError('empty question: ask something, e.g. hybridrag ask "who directed Forrest Gump"')
    for flag, value in (("--top-k", args.top_k), ("--max-iterations", args.max_iterations)):
        if value is not None and value < 1:
            raise ValueError(f"{flag} must be at least 1, not {value}")
    from hybridrag.app.setting_args import run_settings

    settings = {"kb": args.kb, "top_k": args.top_k, "llm": args.llm, "max_iterations": args.max_iterations}
    settings = {k: v for k, v in settings.items() if v is not None and k in _fields(args.method)}
    ctx = context_for(args.method, **{**settings, **run_settings(args.method, args.set)})
    with same_kb_build():  # one KB build for the whole question, even if a re-ingest swaps it
        check_mentions(resolve_kb(ctx), args.question)
        out = get_graph(args.method).invoke({"question": args.question}, context=ctx)
    if args.json:
        print(json.dumps(out, indent=2, ensure_ascii=False, default=str))
        return 0
    from hybridrag.app.display import render_text

    print(render_text(out))  # the answer first, then numbered items with their own evidence
    if args.trace:
        module = importlib.import_module(f"hybridrag.graphs.{args.method}")
        if hasattr(module, "render_trace"):  # the method's own reading of its refinement path
            print(module.render_trace(out.get("trace", [])))
        else:
            for step in out.get("trace", []):
                print(f"  - {step['node']}: {step['decision']}")
    return 0


def _fields(method: str) -> set[str]:
    from hybridrag.graphs import context_class

    return set(context_class(method).__dataclass_fields__)


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from hybridrag.app.operator import check_config, describe, operator_config
    from hybridrag.app.server import create_app

    config = operator_config(args)
    check_config(config)
    print(f"serving {describe(config)}", file=sys.stderr)
    uvicorn.run(create_app(config=config), host=args.host, port=args.port, log_level="info")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every sub-command."""
    from hybridrag.graphs import list_graphs

    p = argparse.ArgumentParser(prog="hybridrag", description="Hybrid RAG over knowledge graphs and text.")
    sub = p.add_subparsers(dest="command", required=True)
    ing = sub.add_parser("ingest", help="build a KB directory from triples, entities and passages, or documents")
    ing.add_argument("--kb", required=True, type=Path, help="output KB directory")
    ing.add_argument("--triples", nargs="*", default=[], help="triple files: s|r|o, .tsv, .csv or .jsonl")
    ing.add_argument("--entities", help="JSONL entities {id, name, type, text, aliases}")
    ing.add_argument("--passages", help="JSONL passages {id, text, entity_id}")
    ing.add_argument("--type-map", help="JSON {relation: [head_type, tail_type]} to type entities")
    ing.add_argument("--embeddings", default="local:all-MiniLM-L6-v2", help="embedding model spec")
    ing.add_argument(
        "--wait",
        type=float,
        default=0,
        metavar="SECONDS",
        help="wait this long for another ingest into the same --kb to finish (default: fail)",
    )
    graph = ing.add_mutually_exclusive_group()
    graph.add_argument("--neo4j", help="also load the graph into Neo4j at this bolt:// URI and use it")
    graph.add_argument("--falkordb", help="also load the graph into FalkorDB at this redis:// URI and use it")
    from hybridrag.app.documents_cli import add_document_arguments

    add_document_arguments(ing)
    ing.set_defaults(func=_ingest)
    ask = sub.add_parser("ask", help="answer a question")
    ask.add_argument("question")
    ask.add_argument("--kb", help="KB directory (default: the bundled sample KB)")
    ask.add_argument("--method", default="fusion", choices=list_graphs())
    ask.add_argument("--llm", help="chat model spec for LLM methods, e.g. openai:gpt-4o-mini or local:smollm2")
    ask.add_argument("--top-k", type=int, dest="top_k")
    ask.add_argument("--max-iterations", type=int, dest="max_iterations")
    ask.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="any setting of the method's context, e.g. --set mode=vector (repeatable; "
        "the fields: docs/serving.md); wins over --top-k and the others",
    )
    ask.add_argument("--json", action="store_true", help="print the full output as JSON")
    ask.add_argument("--trace", action="store_true", help="print the trace after the ranking")
    ask.set_defaults(func=_ask)
    ev = sub.add_parser("eval", help="evaluate a method on a dataset")
    from hybridrag.evals.cli import add_eval_arguments, run_eval

    add_eval_arguments(ev)
    ev.set_defaults(func=run_eval)
    srv = sub.add_parser("serve", help="serve every method with LangServe (docs/serving.md)")
    srv.add_argument("--host", default="127.0.0.1")
    srv.add_argument("--port", type=int, default=8000)
    from hybridrag.app.operator import add_operator_arguments

    add_operator_arguments(srv)
    srv.set_defaults(func=_serve)
    from hybridrag.app.bank_cli import add_bank_arguments

    add_bank_arguments(sub)
    from hybridrag.app.kb_cli import add_kb_arguments

    add_kb_arguments(sub)
    sub.add_parser(
        "train-reranker",
        add_help=False,
        help="train MoR's trajectory reranker on questions with gold answers "
        "(options: hybridrag train-reranker --help)",
    )
    return p


def _train_reranker(argv: list[str]) -> int:
    """``hybridrag train-reranker ...``: the options are app.train_reranker_cli's own."""
    from hybridrag.app.train_reranker_cli import main as train

    return train(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; known errors print one line and exit 2.

    Nothing heavy (torch, LangChain, LangGraph) is imported before the arguments are parsed:
    ``hybridrag --help`` and argument errors answer at once.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s: %(message)s")
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["train-reranker"]:  # its own parser; still one-line errors below
        args = argparse.Namespace(func=lambda _: _train_reranker(argv[1:]))
    else:
        args = build_parser().parse_args(argv)
    from hybridrag.agents.llm.models import ModelConfigError
    from hybridrag.kb.model import KBError
    from hybridrag.tools.web import WebSearchError

    try:
        return args.func(args)
    except (KBError, ModelConfigError, WebSearchError, FileNotFoundError, ValueError, TypeError, KeyError) as exc:
        if os.environ.get("HYBRIDRAG_DEBUG"):
            raise
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
