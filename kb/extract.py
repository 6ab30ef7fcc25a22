"""Facts extracted from a chunk: the reply schema of the extraction model, and the check of a reply.

The model (:mod:`agents.extraction.extractor`) answers with an :class:`Extraction`. :func:`clean`
keeps what the chunk supports: names must occur in the chunk, relations must fit the optional
schema (:mod:`kb.extract_schema`), and every item left out is counted by reason, never dropped
silently.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from hybridrag.kb.documents import Chunk
from hybridrag.kb.extract_schema import GraphSchema, label

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
        aliases = tuple(a.strip() for a in ent.aliases if name_key(a) not in ("", key) and in_chunk(a, chunk.text))
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
