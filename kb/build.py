"""Turn parsed entities and triples into graph arrays and a derived schema.

Everything per triple is done by C loops (``dict.fromkeys``, ``map``, ``np.fromiter``) or numpy
over the edge arrays, never a Python loop: at 2M triples a per-triple Python loop (and the
cyclic garbage collector re-scanning millions of young objects, see :func:`gc_paused`) made
the assembly grow faster than the KB.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import chain
from operator import attrgetter

import numpy as np

from hybridrag.kb.model import Entity, RelationType, Schema, Triple

_FIELDS = attrgetter("head", "type", "tail")


def triple_keys(triples: Iterable[Triple]) -> Iterator[tuple[str, str, str]]:
    """(head, type, tail) of each triple, made in C: equal keys exactly when the triples are equal."""
    return map(_FIELDS, triples)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Suspend the cyclic garbage collector (parsing and assembly allocate millions of acyclic objects)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _first_typed(ends: np.ndarray, typed: np.ndarray, n: int) -> np.ndarray:
    """Per entity 0..n-1: the first edge (index) where it is ``ends`` and the edge is ``typed``; -1 if none."""
    sel = np.flatnonzero(typed)
    first = np.full(n, -1, np.int64)
    ents, idx = np.unique(ends[sel], return_index=True)
    first[ents] = sel[idx]
    return first


def assemble(
    triples: Iterable[Triple],
    entities: dict[str, Entity],
    type_map: dict[str, tuple[str, str]] | None = None,
) -> tuple[list[Entity], np.ndarray, np.ndarray, np.ndarray, list[str], Schema]:
    """Deduplicate triples, create missing entities (typed by ``type_map``), derive the schema.

    Returns (entities, heads, rels, tails, relation names, schema). Triples keep their first
    occurrence; new entities follow the given ones in order of first mention (head before tail).
    An entity seen as a head takes the head type of the relation of its first typed triple as a
    head; otherwise the tail type of its first typed triple as a tail; otherwise "entity".
    """
    type_map = type_map or {}
    with gc_paused():
        unique = list(dict.fromkeys(triple_keys(triples)))
        m = len(unique)
        hs, rs, ts = zip(*unique, strict=True) if unique else ((), (), ())
        del unique
        rel_names = list(dict.fromkeys(rs))
        rel_index = {r: i for i, r in enumerate(rel_names)}
        rels = np.fromiter(map(rel_index.__getitem__, rs), np.int16, m)
        new_ids = [e for e in dict.fromkeys(chain.from_iterable(zip(hs, ts, strict=True))) if e not in entities]
        given = list(entities.values())
        ent_ids = [e.id for e in given] + new_ids
        index = dict(zip(ent_ids, range(len(ent_ids)), strict=True))
        heads = np.fromiter(map(index.__getitem__, hs), np.int32, m)
        tails = np.fromiter(map(index.__getitem__, ts), np.int32, m)
        del hs, ts, rs, index
        ent_list = given + _new_entities(new_ids, len(given), heads, rels, tails, rel_names, type_map)
    return ent_list, heads, rels, tails, rel_names, derive_schema(ent_list, heads, rels, tails, rel_names)


def _new_entities(
    new_ids: list[str],
    offset: int,
    heads: np.ndarray,
    rels: np.ndarray,
    tails: np.ndarray,
    rel_names: list[str],
    type_map: dict[str, tuple[str, str]],
) -> list[Entity]:
    """Entities for ids only triples name (rows ``offset``.. of the entity list), typed by ``type_map``."""
    n = offset + len(new_ids)
    typed = np.array([r in type_map for r in rel_names], bool)[rels] if len(rels) else np.zeros(0, bool)
    as_head, as_tail = _first_typed(heads, typed, n)[offset:], _first_typed(tails, typed, n)[offset:]
    head_t = [type_map[r][0] if r in type_map else "" for r in rel_names]
    tail_t = [type_map[r][1] if r in type_map else "" for r in rel_names]
    rel_of = rels.tolist()
    out = []
    for eid, h, t in zip(new_ids, as_head.tolist(), as_tail.tolist(), strict=True):
        etype = head_t[rel_of[h]] if h >= 0 else tail_t[rel_of[t]] if t >= 0 else "entity"
        out.append(Entity(eid, eid, etype))
    return out


def _ranked_types(
    rels: np.ndarray, ends: np.ndarray, type_ids: np.ndarray, n_rel: int, type_names: list[str]
) -> list[tuple[str, ...]]:
    """Per relation: the entity types at ``ends``, most frequent first, ties in order of first edge."""
    n_types = max(len(type_names), 1)
    keys = rels.astype(np.int64) * n_types + type_ids[ends]
    uniq, first, counts = np.unique(keys, return_index=True, return_counts=True)
    order = np.lexsort((first, -counts, uniq // n_types))
    ranked: list[list[str]] = [[] for _ in range(n_rel)]
    for key in uniq[order].tolist():
        ranked[key // n_types].append(type_names[key % n_types])
    return [tuple(r) for r in ranked]


def derive_schema(
    entities: list[Entity], heads: np.ndarray, rels: np.ndarray, tails: np.ndarray, rel_names: list[str]
) -> Schema:
    """Count entity types and collect head/tail types per relation type (most frequent first)."""
    types = [e.type for e in entities]
    type_names = list(dict.fromkeys(types))
    tindex = {t: i for i, t in enumerate(type_names)}
    type_ids = np.fromiter(map(tindex.__getitem__, types), np.int64, len(types))
    n_rel = len(rel_names)
    head_types = _ranked_types(rels, heads, type_ids, n_rel, type_names)
    tail_types = _ranked_types(rels, tails, type_ids, n_rel, type_names)
    counts = np.bincount(rels.astype(np.int64), minlength=n_rel).tolist() if n_rel else []
    rel_types = {
        name: RelationType(name, head_types[i], tail_types[i], int(counts[i])) for i, name in enumerate(rel_names)
    }
    return Schema(dict(Counter(types).most_common()), rel_types)
