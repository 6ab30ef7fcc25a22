"""``hybridrag ingest``: the options and the run of an ingest of files or documents, new or into a KB.

Into a directory that holds a KB, an ingest needs ``--add``, ``--update`` or ``--replace``
(:mod:`kb.kb_update`); documents without one are added when new, skipped when unchanged.
"""
# ruff: noqa: T201 - a CLI module: it prints its results, like app/cli.py

from __future__ import annotations

import argparse

TRIPLE_OPTIONS = ("triples", "entities", "passages", "type_map")


def add_document_arguments(ing: argparse.ArgumentParser) -> None:
    """Options of ``ingest`` for documents (text, Markdown, PDF, HTML) and graph extraction, and the modes."""
    g = ing.add_argument_group("documents", "build or extend a KB from documents (README: From documents to a KB)")
    g.add_argument(
        "--documents",
        nargs="+",
        metavar="PATH",
        help="text/Markdown/PDF/HTML files or directories; new ones are added to the KB when it exists",
    )
    g.add_argument("--chunk-size", type=int, default=1000, help="characters per chunk (default 1000)")
    g.add_argument("--chunk-overlap", type=int, default=150, help="characters shared by neighbouring chunks")
    g.add_argument(
        "--extract-llm",
        metavar="SPEC",
        help="chat model that extracts entities and relations from each chunk, e.g. "
        "openai:gpt-4o-mini or local:smollm2, or rules (sentence patterns, no model; without it: passages only)",
    )
    g.add_argument(
        "--llm-base-url",
        default="",
        metavar="URL",
        help="OpenAI-compatible server for --extract-llm (vLLM, Ollama, llama.cpp server)",
    )
    g.add_argument(
        "--schema", metavar="FILE", help='JSON {"entity_types": [...], "relations": {name: [head_type, tail_type]}}'
    )
    g.add_argument(
        "--structured-method",
        default="function_calling",
        choices=["function_calling", "json_schema", "json_mode"],
        help="how the extractor is asked for structured output",
    )
    g.add_argument(
        "--extract-workers",
        type=int,
        default=1,
        metavar="N",
        help="extraction calls at a time (1-16; for remote models; default 1)",
    )
    g.add_argument(
        "--merge-threshold",
        type=float,
        default=0.92,
        help="name similarity at which two extracted entities are merged (0.5-1.0)",
    )
    add_mode_arguments(ing)


def add_mode_arguments(ing: argparse.ArgumentParser) -> None:
    """``--add``, ``--update``, ``--replace``: what an ingest does to a KB the directory already holds."""
    g = ing.add_argument_group(
        "an existing KB", "how the files change a KB the --kb directory holds (README: Update a KB)"
    )
    mode = g.add_mutually_exclusive_group()
    mode.add_argument(
        "--add", dest="mode", action="store_const", const="add", help="add files or documents the KB does not hold"
    )
    mode.add_argument(
        "--update",
        dest="mode",
        action="store_const",
        const="update",
        help="replace files or documents the KB holds (same file name) with their new content",
    )
    mode.add_argument(
        "--replace", dest="mode", action="store_const", const="replace", help="rebuild the KB from these inputs only"
    )


def run_ingest(args: argparse.Namespace) -> int:
    """``hybridrag ingest``: documents, or triple/entity/passage files; one summary line."""
    from hybridrag.kb.model import KBError

    try:
        if args.documents:
            return run_document_ingest(args)
        return _run_file_ingest(args)
    except OSError as exc:  # disk full, permissions: one line; the previous build stays live
        if isinstance(exc, FileNotFoundError):
            raise
        raise KBError(f"ingest into {args.kb} failed: {exc}; the previous build (if any) is unchanged") from exc


def _run_file_ingest(args: argparse.Namespace) -> int:
    from hybridrag.kb.kb_update import change_files

    report = change_files(
        args.kb,
        getattr(args, "mode", None),
        args.triples,
        args.entities,
        args.passages,
        args.type_map,
        embeddings=args.embeddings,
        neo4j_uri=args.neo4j,
        falkordb_uri=args.falkordb,
        wait=args.wait,
    )
    built = report.build
    if built is None:
        print(f"KB {report.directory} unchanged: it holds {', '.join(report.unchanged)} with this content already")
        return 0
    c = built.counts
    reused = (
        f" ({built.embed_chunks_reused} of {built.embed_chunks} chunks reused from an interrupted run)"
        if built.embed_chunks_reused
        else ""
    )
    if getattr(args, "mode", None) in ("add", "update"):
        print(change_line(report, "changed"))
        return 0
    print(
        f"built KB {built.directory}: {c['entities']} entities, {c['triples']} triples, "
        f"{c['passages']} passages; graph {built.seconds['graph']:.1f}s, "
        f"embeddings {built.seconds['embed']:.1f}s{reused}"
    )
    return 0


def change_line(report, verb: str) -> str:
    """One line: what a change added, updated, deleted and removed, and what the KB holds now."""
    parts = [
        f"{what} {', '.join(keys)}"
        for what, keys in (
            ("added", report.added),
            ("updated", report.updated),
            ("deleted", report.deleted),
            ("unchanged", report.unchanged),
        )
        if keys
    ]
    r, c = report.removed, report.build.counts
    gone = f"removed {r.get('triples', 0)} triples, {r.get('passages', 0)} passages, {r.get('entities', 0)} entities"
    now = f"now {c['entities']} entities, {c['triples']} triples, {c['passages']} passages"
    return f"{verb} KB {report.directory}: {'; '.join(parts)}; {gone}; {now}"


def run_document_ingest(args: argparse.Namespace) -> int:
    """Ingest ``args.documents``; print one summary line (warnings go to stderr)."""
    from hybridrag.agents.extraction import ingest_documents

    mixed = [f"--{o.replace('_', '-')}" for o in TRIPLE_OPTIONS if getattr(args, o)]
    if mixed:
        raise ValueError(
            f"--documents cannot be combined with {', '.join(mixed)}: ingest those first, "
            f"then add the documents to the same --kb"
        )
    from hybridrag.agents.llm.models import LLMUnavailableError
    from hybridrag.kb.model import KBError

    try:
        report = ingest_documents(
            args.kb,
            args.documents,
            chunk_size=args.chunk_size,
            chunk_overlap=args.chunk_overlap,
            extract_llm=args.extract_llm,
            llm_base_url=args.llm_base_url,
            schema=args.schema,
            structured_method=args.structured_method,
            merge_threshold=args.merge_threshold,
            embeddings=args.embeddings,
            neo4j_uri=args.neo4j,
            falkordb_uri=args.falkordb,
            wait=args.wait,
            workers=args.extract_workers,
            mode=getattr(args, "mode", None),
        )
    except LLMUnavailableError as exc:
        raise KBError(
            f"extraction stopped: {exc}; the chunks extracted so far are cached in "
            f"{args.kb}/.extract-cache, re-run to continue"
        ) from None
    if not report.added and not report.retried:
        print(f"KB {report.directory} unchanged: its {len(report.unchanged)} documents are already in it")
        return 0
    c, x = report.counts, report.extraction
    graph = ""
    if x:
        usage = x.get("usage", {})
        graph = (
            f"; extraction: {x['chunks_extracted']} chunks asked, {x['chunks_from_cache']} from cache, "
            f"{len(x['chunks_failed'])} failed, {usage.get('llm_calls', 0)} LLM calls, "
            f"{usage.get('input_tokens', 0) + usage.get('output_tokens', 0)} tokens, "
            f"{sum(x['merges'].values())} merges"
        )
    verb = "updated" if getattr(args, "mode", None) == "update" else "added"
    retried = f", asked again for {report.retried} chunks that had failed" if report.retried else ""
    print(
        f"built KB {report.directory}: {verb} {len(report.added)} documents ({report.chunks} chunks){retried}; "
        f"now {c['entities']} entities, {c['triples']} triples, {c['passages']} passages{graph}"
    )
    return 0
