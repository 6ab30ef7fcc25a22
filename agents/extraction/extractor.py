"""LLM graph extraction from chunks: one structured call per chunk, cached on disk, bounded concurrency.

Each chunk goes to the extraction model through :func:`agents.llm.structured.call_structured`
(schema-checked, one retry, the configured structured-output method), quoted as a data block
(:mod:`prompts.extract`). Replies are cached per chunk as they arrive (:mod:`kb.extract_cache`),
so a killed extraction continues where it stopped; each reply is then checked by
:func:`kb.extract.clean`.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from langchain_core.messages import HumanMessage, SystemMessage
from tqdm import tqdm

from hybridrag.agents.llm.constrained import is_llama_cpp, question_spans
from hybridrag.agents.llm.structured import add_usage, call_structured
from hybridrag.kb.documents import Chunk
from hybridrag.kb.extract import ChunkFacts, Extraction, clean
from hybridrag.kb.extract_cache import ExtractionCache
from hybridrag.kb.extract_schema import GraphSchema
from hybridrag.prompts import extract as P
from hybridrag.prompts.data_block import data_block


def build_messages(chunk: Chunk, schema: GraphSchema) -> list:
    """The chat messages of one extraction call (the chunk as a data block)."""
    system = P.SYSTEM.format()
    if not schema.is_empty():
        entity_types, relations = schema.describe()
        system += "\n" + P.SCHEMA.format(entity_types=entity_types, relations=relations)
    passage = data_block(chunk.text, source="doc")
    return [SystemMessage(system), HumanMessage(P.CHUNK.format(passage=passage))]


@dataclass
class ExtractionRun:
    """Facts per chunk, LLM usage (this run's, and that of the cached replies it reused), failed chunks."""

    facts: list[ChunkFacts]
    usage: dict
    usage_cached: dict = field(default_factory=dict)
    reused: int = 0
    failed: list[str] = field(default_factory=list)


MAX_WORKERS = 16


def extraction_choices(chunk: Chunk, schema: GraphSchema) -> dict[str, list[str]]:
    """Allowed values of a constrained extraction, by field.

    Names are runs of up to 5 words of the chunk; types and relations come from the schema (free
    when the schema leaves them open).
    """
    spans = question_spans(chunk.text, max_words=5)
    choices = {"entities.name": spans, "relations.head": spans, "relations.tail": spans}
    if schema.entity_types:
        choices["entities.type"] = list(schema.entity_types)
    if schema.relations:
        choices["relations.relation"] = list(schema.relations)
    return choices


def _ask(
    model, chunk: Chunk, schema: GraphSchema, method: str, role: str = "extractor", retries: int = 1
) -> tuple[Extraction | None, dict]:
    """One extraction call, with ``retries`` more on an unparseable reply.

    A llama.cpp model decodes within the schema with the chunk's names (:mod:`agents.llm.constrained`):
    the bundled 135M model then replies with parseable JSON where unconstrained it mostly did not.
    """
    choices = extraction_choices(chunk, schema) if is_llama_cpp(model) else None
    return call_structured(
        model, Extraction, build_messages(chunk, schema), role=role, method=method, retries=retries, choices=choices
    )


def extract_within(
    chunks: Sequence[Chunk], model, schema: GraphSchema, method: str, max_calls: int, role: str = "extractor"
) -> tuple[list[Extraction | None], dict, int]:
    """Ask chunks in order, one at a time, never more than ``max_calls`` LLM calls in all (retries count).

    A chunk is retried once on an unparseable reply while two calls remain, else asked once.
    Returns the reply of each asked chunk (None: unparseable), the usage, and how many chunks
    were asked (the rest were not: the cap was reached). Nothing is cached: the texts are per
    question (SSRAG's web pages).
    """
    if max_calls < 0:
        raise ValueError(f"max_calls must be 0 or more, not {max_calls}")
    replies: list[Extraction | None] = []
    usage: dict = {}
    for chunk in chunks:
        left = max_calls - usage.get("llm_calls", 0)
        if left <= 0:
            break
        reply, used = _ask(model, chunk, schema, method, role, retries=min(1, left - 1))
        usage = add_usage(usage, used)
        replies.append(reply)
    return replies, usage, len(replies)


def extract_chunks(
    chunks: Sequence[Chunk],
    model,
    cache: ExtractionCache,
    schema: GraphSchema,
    method: str = "function_calling",
    progress: bool = True,
    workers: int = 1,
) -> ExtractionRun:
    """Extract every chunk (cached ones are not asked again), ``workers`` calls at a time (1 to 16).

    Each reply is cached as it arrives, so an unreachable model (which stops the run) or a kill
    loses no finished chunk. A chunk whose replies could not be parsed is counted in ``failed``
    and not cached, so the next run asks again. Facts come back in chunk order.
    """
    if not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"extraction workers must be from 1 to {MAX_WORKERS}, not {workers}")
    run = ExtractionRun([], {})
    found: dict[int, Extraction] = {}
    todo: list[int] = []
    failed: list[int] = []
    for i, chunk in enumerate(chunks):
        hit = cache.get(chunk)
        if hit is None:
            todo.append(i)
        else:
            found[i] = hit[0]
            run.reused += 1
            run.usage_cached = add_usage(run.usage_cached, hit[1])
    bar = tqdm(total=len(chunks), initial=run.reused, desc="extracting", unit=" chunks", disable=not progress)
    queue, running, error = iter(todo), {}, None

    def finish(fut, i: int) -> BaseException | None:
        """Record one finished call (cached at once); return its exception, if any."""
        if fut.exception() is not None:
            return fut.exception()
        reply, usage = fut.result()
        run.usage = add_usage(run.usage, usage)
        bar.update(1)
        if reply is None:
            failed.append(i)
        else:
            cache.put(chunks[i], reply, usage)
            found[i] = reply
        return None

    with bar, ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in range(len(todo) + 1):  # each round finishes at least one call
            while error is None and len(running) < workers and (i := next(queue, None)) is not None:
                running[pool.submit(_ask, model, chunks[i], schema, method)] = i
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED if error is None else ALL_COMPLETED)
            for fut in done:  # successes are cached even when a sibling call failed
                error = finish(fut, running.pop(fut)) or error
        if error is not None:  # no new call once one failed; the calls under way were finished above
            raise error
    run.failed = [chunks[i].id for i in sorted(failed)]
    run.facts = [clean(chunks[i], found[i], schema) for i in sorted(found)]
    return run
