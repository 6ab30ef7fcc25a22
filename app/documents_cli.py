"""``hybridrag ingest --documents ...``: the options and the run of a document ingest."""
# ruff: noqa: T201 - a CLI module: it prints its results, like app/cli.py

from __future__ import annotations

import argparse

TRIPLE_OPTIONS = ("triples", "entities", "passages", "type_map")


def add_document_arguments(ing: argparse.ArgumentParser) -> None:
    """Options of ``ingest`` for documents (text, Markdown, PDF, HTML) and graph extraction."""
    g = ing.add_argument_group("documents", "build or extend a KB from documents (README: From documents to a KB)")
    g.add_argument(
        "--documents",
        nargs="+",
        metavar="PATH",
        help="text/Markdown/PDF/HTML files or directories; added to the KB when it exists",
    )
    g.add_argument("--chunk-size", type=int, default=1000, help="characters per chunk (default 1000)")
    g.add_argument("--chunk-overlap", type=int, default=150, help="characters shared by neighbouring chunks")
    g.add_argument(
        "--extract-llm",
        metavar="SPEC",
        help="chat model that extracts entities and relations from each chunk, e.g. "
        "openai:gpt-4o-mini or local:smollm2 (without it: passages only)",
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
    retried = f", asked again for {report.retried} chunks that had failed" if report.retried else ""
    print(
        f"built KB {report.directory}: added {len(report.added)} documents ({report.chunks} chunks){retried}; "
        f"now {c['entities']} entities, {c['triples']} triples, {c['passages']} passages{graph}"
    )
    return 0
