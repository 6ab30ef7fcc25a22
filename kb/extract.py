"""LLM knowledge-graph extraction from chunks: one structured call per chunk, cached on disk.

Each chunk is sent to the extraction model through :func:`agents.llm.structured.call_structured`
(schema-checked, one retry, the configured structured-output method). The reply is cleaned
(:func:`clean`): names must occur in the chunk, relations must fit the optional schema, and
every item left out is counted by reason, never dropped silently. Replies are cached per chunk
under the KB directory (:mod:`kb.extract_cache`), so a killed extraction continues where it
stopped and an extended KB re-asks nothing.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field
from tqdm import tqdm

from kb.documents import Chunk
from kb.extract_schema import GraphSchema, label

if TYPE_CHECKING:
    from kb.extract_cache import ExtractionCache

log = logging.getLogger(__name__)
MAX_ITEMS = 64  # entities, and relations, kept per chunk; the rest is counted as over_cap


class ExtractedEntity(BaseModel):
    """An entity named by the chunk."""

    name: str = Field(description="the name exactly as the passage writes it")
    type: str = Field(default="", description="a short lower-case type, e.g. person, organization, city")
    aliases: list[str] = Field(default_factory=list, description="other names the passage gives it")


class ExtractedRelation(BaseModel):
    """A fact the chunk states: head -[relation]-> tail."""

    head: str = Field(description="name of the head entity")
    relation: str = Field(description="snake_case relation, e.g. founded_by")
    tail: str = Field(description="name of the tail entity")


class Extraction(BaseModel):
    """Entities and relations of one passage."""

    entities: list[ExtractedEntity] = Field(default_factory=list)
    relations: list[ExtractedRelation] = Field(default_factory=list)


@dataclass
class ChunkFacts:
    """What one chunk contributes: entities (name, type, aliases), triples by name, items left out."""

    chunk_id: str
    entities: dict[str, tuple[str, str, tuple[str, ...]]] = field(default_factory=dict)  # key -> entity
    triples: list[tuple[str, str, str]] = field(default_factory=list)  # (head key, relation, tail key)
    dropped: Counter = field(default_factory=Counter)


def name_key(name: str) -> str:
    """Case- and spacing-insensitive key of a name."""
    return " ".join(re.findall(r"\w+", str(name).casefold()))


def in_chunk(name: str, text: str) -> bool:
    """Whether the chunk names ``name``: as a phrase, or every word of it (two letters or more)."""
    key, body = name_key(name), f" {name_key(text)} "
    if not key:
        return False
    words = [w for w in key.split() if len(w) > 1] or key.split()
    return f" {key} " in body or all(f" {w} " in body for w in words)


def _entity_type(raw: str, schema: GraphSchema) -> str | None:
    """The stored type; None when the schema does not allow it (a relation may still type the entity)."""
    kind = label(raw) or "entity"
    return None if schema.entity_types and kind not in schema.entity_types else kind


def clean(chunk: Chunk, found: Extraction, schema: GraphSchema) -> ChunkFacts:
    """Keep the entities and triples the chunk supports and the schema allows; count the rest by reason."""
    facts = ChunkFacts(chunk.id)
    dropped = facts.dropped
    types: dict[str, str | None] = {}
    names: dict[str, tuple[str, tuple[str, ...]]] = {}
    dropped["over_cap"] += max(0, len(found.entities) - MAX_ITEMS) + max(0, len(found.relations) - MAX_ITEMS)
    for ent in found.entities[:MAX_ITEMS]:
        key = name_key(ent.name)
        if not key or not in_chunk(ent.name, chunk.text):
            dropped["entity_not_in_chunk"] += 1
            continue
        aliases = tuple(a.strip() for a in ent.aliases
                        if name_key(a) not in ("", key) and in_chunk(a, chunk.text))
        old = names.get(key, (ent.name.strip(), ()))
        names[key] = (old[0], tuple(dict.fromkeys(old[1] + aliases)))
        types[key] = types.get(key) or _entity_type(ent.type, schema)
    for rel in found.relations[:MAX_ITEMS]:
        relation, head, tail = label(rel.relation), name_key(rel.head), name_key(rel.tail)
        if not relation or (schema.relations and relation not in schema.relations):
            dropped["relation_not_in_schema" if relation else "relation_unnamed"] += 1
            continue
        if not head or not tail or head == tail:
            dropped["relation_endpoint_missing" if head != tail else "self_loop"] += 1
            continue
        if not all(k in names or in_chunk(n, chunk.text) for k, n in ((head, rel.head), (tail, rel.tail))):
            dropped["relation_endpoint_not_in_chunk"] += 1
            continue
        want = schema.relations.get(relation, (None, None))
        for k, n, t in ((head, rel.head, want[0]), (tail, rel.tail, want[1])):
            names.setdefault(k, (n.strip(), ()))
            if types.get(k) is None and t:
                types[k] = t
        if any(t and types.get(k) and types[k] != t for k, t in ((head, want[0]), (tail, want[1]))):
            dropped["relation_type_mismatch"] += 1
            continue
        facts.triples.append((head, relation, tail))
    untyped = {k for k in names if types.get(k) is None and schema.entity_types}
    dropped["entity_type_not_in_schema"] += len(untyped)
    if untyped:
        kept = [t for t in facts.triples if t[0] not in untyped and t[2] not in untyped]
        dropped["relation_entity_off_schema"] += len(facts.triples) - len(kept)
        facts.triples = kept
    facts.triples = list(dict.fromkeys(facts.triples))
    facts.entities = {k: (n, types.get(k) or "entity", a) for k, (n, a) in names.items() if k not in untyped}
    facts.dropped = +dropped
    return facts


def build_messages(chunk: Chunk, schema: GraphSchema) -> list:
    """The chat messages of one extraction call (the chunk as a data block)."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from prompts import extract as P
    from prompts.data_block import data_block

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


def _ask(model, chunk: Chunk, schema: GraphSchema, method: str) -> tuple[Extraction | None, dict]:
    from agents.llm.structured import call_structured

    return call_structured(model, Extraction, build_messages(chunk, schema), role="extractor", method=method)


def extract_chunks(chunks: Sequence[Chunk], model, cache: ExtractionCache, schema: GraphSchema,
                   method: str = "function_calling", progress: bool = True, workers: int = 1) -> ExtractionRun:
    """Extract every chunk (cached ones are not asked again), ``workers`` calls at a time (1 to 16).

    Each reply is cached as it arrives, so an unreachable model (which stops the run) or a kill
    loses no finished chunk. A chunk whose replies could not be parsed is counted in ``failed``
    and not cached, so the next run asks again. Facts come back in chunk order.
    """
    from concurrent.futures import ALL_COMPLETED, FIRST_COMPLETED, ThreadPoolExecutor, wait

    from agents.llm.structured import add_usage

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
