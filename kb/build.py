"""Turn parsed entities and triples into graph arrays and a derived schema."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

import numpy as np

from kb.model import Entity, RelationType, Schema, Triple


def assemble(
    triples: Iterable[Triple],
    entities: dict[str, Entity],
    type_map: dict[str, tuple[str, str]] | None = None,
) -> tuple[list[Entity], np.ndarray, np.ndarray, np.ndarray, list[str], Schema]:
    """Deduplicate triples, create missing entities (typed by ``type_map``), derive the schema.

    Returns (entities, heads, rels, tails, relation names, schema). An entity seen as a head
    takes the head type of its relation; otherwise the tail type.
    """
    type_map = type_map or {}
    unique = list(dict.fromkeys(triples))
    inferred: dict[str, str] = {}
    for t in unique:
        if t.type in type_map:
            inferred.setdefault(t.head, type_map[t.type][0])
    for t in unique:
        if t.type in type_map:
            inferred.setdefault(t.tail, type_map[t.type][1])
    ents = dict(entities)
    for t in unique:
        for eid in (t.head, t.tail):
            if eid not in ents:
                ents[eid] = Entity(eid, eid, inferred.get(eid, "entity"))
    ent_list = list(ents.values())
    index = {e.id: i for i, e in enumerate(ent_list)}
    rel_names = list(dict.fromkeys(t.type for t in unique))
    rel_index = {r: i for i, r in enumerate(rel_names)}
    heads = np.fromiter((index[t.head] for t in unique), np.int32, len(unique))
    tails = np.fromiter((index[t.tail] for t in unique), np.int32, len(unique))
    rels = np.fromiter((rel_index[t.type] for t in unique), np.int16, len(unique))
    return ent_list, heads, rels, tails, rel_names, derive_schema(ent_list, heads, rels, tails, rel_names)


def derive_schema(
    entities: list[Entity], heads: np.ndarray, rels: np.ndarray, tails: np.ndarray, rel_names: list[str]
) -> Schema:
    """Count entity types and collect head/tail types per relation type."""
    types = [e.type for e in entities]
    head_t: dict[int, Counter] = defaultdict(Counter)
    tail_t: dict[int, Counter] = defaultdict(Counter)
    for h, r, t in zip(heads.tolist(), rels.tolist(), tails.tolist(), strict=True):
        head_t[r][types[h]] += 1
        tail_t[r][types[t]] += 1
    rel_types = {
        name: RelationType(
            name,
            tuple(k for k, _ in head_t[i].most_common()),
            tuple(k for k, _ in tail_t[i].most_common()),
            int(sum(head_t[i].values())),
        )
        for i, name in enumerate(rel_names)
    }
    return Schema(dict(Counter(types).most_common()), rel_types)
