"""``hybridrag kb ...``: commands on a KB directory (``hybridrag kb delete``).

Each subcommand is one function ``_name(kb_sub)`` that adds its parser to the ``kb`` group and
sets ``func`` to the function that runs it; :data:`SUBCOMMANDS` lists them. A new subcommand
(``kb show``) is one more such function, appended to :data:`SUBCOMMANDS`.
"""
# ruff: noqa: T201 - a CLI module: it prints its results, like app/cli.py

from __future__ import annotations

import argparse
from pathlib import Path


def _delete(kb_sub: argparse._SubParsersAction) -> None:
    """``hybridrag kb delete --kb DIR --document ID ... --source FILE ...``."""
    p = kb_sub.add_parser(
        "delete",
        help="delete documents or files from a KB: their passages, triples no other file or chunk states, "
        "entities nothing names any more, and their vectors (README: Update a KB)",
    )
    p.add_argument("--kb", required=True, type=Path, help="the KB directory")
    p.add_argument(
        "--document", nargs="+", default=[], metavar="ID", help="document ids (their key: the file name or its path)"
    )
    p.add_argument(
        "--source",
        nargs="+",
        default=[],
        metavar="FILE",
        help="triple, entity, passage or document files (path or name)",
    )
    p.add_argument("--wait", type=float, default=0, metavar="SECONDS", help="wait for another ingest to finish")
    graph = p.add_mutually_exclusive_group()
    graph.add_argument("--neo4j", metavar="URI", help="Neo4j server of the new build (default: the live build's)")
    graph.add_argument("--falkordb", metavar="URI", help="FalkorDB server of the new build (default: the live build's)")
    p.set_defaults(func=_run_delete)


def _run_delete(args: argparse.Namespace) -> int:
    from hybridrag.app.documents_cli import change_line
    from hybridrag.kb.kb_update import delete

    report = delete(
        args.kb, args.document, args.source, neo4j_uri=args.neo4j, falkordb_uri=args.falkordb, wait=args.wait
    )
    print(change_line(report, "changed"))
    return 0


def _show(kb_sub: argparse._SubParsersAction) -> None:
    """``hybridrag kb show --entity NAME [--kb DIR]``: app/graph_view.py."""
    from hybridrag.app.graph_view import add_show_arguments

    add_show_arguments(kb_sub)


SUBCOMMANDS = (_delete, _show)


def add_kb_arguments(sub: argparse._SubParsersAction) -> None:
    """Add the ``kb`` command and its subcommands (:data:`SUBCOMMANDS`) to the top-level parser."""
    kb = sub.add_parser("kb", help="change or look into a KB directory: delete, show (hybridrag kb --help)")
    kb_sub = kb.add_subparsers(dest="kb_command", required=True, metavar="SUBCOMMAND")
    for add in SUBCOMMANDS:
        add(kb_sub)
