"""LLM knowledge-graph extraction from chunks: one structured call per chunk, cached on disk.

Each chunk is sent to the extraction model through :func:`agents.llm.structured.call_structured`
(schema-checked, one retry, the configured structured-output method). The reply is cleaned
(:func:`clean`): names must occur in the chunk, relations must fit the optional schema, and
every item left out is counted by reason, never dropped silently. Replies are cached per chunk
under the KB directory (keyed by chunk text, model, structured method, schema and prompt
version), so a killed extraction continues where it stopped and an extended KB re-asks nothing.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, Field
from tqdm import tqdm

from kb.documents import Chunk
from kb.extract_schema import GraphSchema, label

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


class ExtractionCache:
    """One JSON file per extracted chunk under ``<kb>/.extract-cache/``, written atomically."""

    def __init__(self, folder: Path, model_name: str, method: str, schema: GraphSchema) -> None:
        """Cache for one model, structured method and schema (all part of every key)."""
        from prompts.extract import VERSION

        self.folder = folder
        self._salt = json.dumps([VERSION, model_name, method, schema.to_dict()], sort_keys=True)

    def _path(self, chunk: Chunk) -> Path:
        digest = hashlib.sha256(f"{self._salt}\n{chunk.text}".encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.json"

    def get(self, chunk: Chunk) -> tuple[Extraction, dict] | None:
        """The cached reply and its usage; None when absent or unreadable (then it is asked again)."""
        try:
            data = json.loads(self._path(chunk).read_text(encoding="utf-8"))
            return Extraction.model_validate(data["extraction"]), data.get("usage", {})
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, chunk: Chunk, found: Extraction, usage: dict) -> None:
        """Store a reply (temporary file, then rename: a kill never leaves half a file)."""
        path = self._path(chunk)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"chunk": chunk.id, "extraction": found.model_dump(), "usage": usage}),
                       encoding="utf-8")
        os.replace(tmp, path)


@dataclass
class ExtractionRun:
    """Facts per chunk, this run's LLM usage, how many chunks came from the cache or failed."""

    facts: list[ChunkFacts]
    usage: dict
    reused: int = 0
    failed: list[str] = field(default_factory=list)


def extract_chunks(chunks: Sequence[Chunk], model, cache: ExtractionCache, schema: GraphSchema,
                   method: str = "function_calling", progress: bool = True) -> ExtractionRun:
    """Extract every chunk (cached ones are not asked again); an unreachable model stops the run.

    A chunk whose replies could not be parsed is counted in ``failed`` and not cached, so the
    next run asks again.
    """
    from agents.llm.structured import add_usage, call_structured

    run = ExtractionRun([], {})
    for chunk in tqdm(chunks, desc="extracting", unit=" chunks", disable=not progress):
        hit = cache.get(chunk)
        if hit is not None:
            run.reused += 1
            found = hit[0]
        else:
            found, usage = call_structured(model, Extraction, build_messages(chunk, schema), role="extractor",
                                           method=method)
            run.usage = add_usage(run.usage, usage)
            if found is None:
                run.failed.append(chunk.id)
                continue
            cache.put(chunk, found, usage)
        run.facts.append(clean(chunk, found, schema))
    return run
