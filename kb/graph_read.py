"""Reading values back from a Cypher server: keys to ids and entities, in slices when records are capped.

Traversal queries return fixed-size keys. These helpers turn keys into ids and entities. A server
that cannot send a large record (FalkorDB's Bolt layer hangs on records over 64 KB) has
``max_record_chars`` > 0: every string column is then cut to that many characters and sized, and the
rest is fetched with ``substring`` in further small records, so values of any length come back whole.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hybridrag.kb import neo4j_cypher as cy
from hybridrag.kb.model import Entity, KBError

if TYPE_CHECKING:
    from hybridrag.kb.graph_session import CypherSession

FIRST_ALIASES = 8  # aliases sent with an entity record; the others are fetched one by one
ID_CACHE_SIZE = 200_000


def _complete(
    store: CypherSession, template: str, params: dict[str, Any], expr: str, prefix: str | None, size: int | None
) -> str | None:
    """``prefix`` extended to ``size`` characters with ``substring`` queries (no-op when whole)."""
    if prefix is None or size is None:
        return prefix
    step = store.max_record_chars
    parts = [prefix]
    got = len(prefix)
    while got < size:
        recs = store._query(template.format(expr=expr), {**params, "start": got, "len": step})
        part = recs[0]["part"] if recs else None
        if not part:
            raise KBError(f"a value changed while it was read from {store.uri}; retry")
        parts.append(part)
        got += len(part)
    return "".join(parts)


def _aliases(store: CypherSession, rec: dict[str, Any]) -> list[str]:
    if not store.max_record_chars:
        return list(rec["aliases"] or [])
    key = {"key": rec["key"]}
    out = [
        _complete(store, cy.ENTITY_PART, {**key, "i": i}, "n.aliases[$i]", a, n)
        for i, (a, n) in enumerate(zip(rec["aliases"] or [], rec["aliases_n"] or [], strict=True))
    ]
    for i in range(len(out), rec["aliases_count"] or 0):
        head = store._query(cy.ALIAS_HEAD, {**key, "i": i, "len": store.max_record_chars})[0]
        out.append(_complete(store, cy.ENTITY_PART, {**key, "i": i}, "n.aliases[$i]", head["part"], head["n"]))
    return out  # type: ignore[return-value]


def _stored_entity(store: CypherSession, rec: dict[str, Any]) -> dict[str, Any]:
    """The record's stored (still encoded) values, completed when they were cut."""
    if not store.max_record_chars:
        return rec
    whole = {
        f: _complete(store, cy.ENTITY_PART, {"key": rec["key"]}, f"n.{f}", rec[f], rec[f"{f}_n"])
        for f in cy.TEXT_FIELDS
    }
    return {**whole, "key": rec["key"], "aliases": _aliases(store, rec)}


def entities(store: CypherSession, keys: list[str]) -> dict[str, Entity]:
    """Entities by key (unknown keys are left out)."""
    query = cy.BY_KEYS.format(fields=cy.entity_fields(store.max_record_chars, FIRST_ALIASES))
    return entity_records(store, store._by_keys(query, keys))


def looked_up(store: CypherSession, lookup_key: str) -> dict[str, Entity]:
    """Entities whose lookup keys hold ``lookup_key``, by key: one request (more only for cut values)."""
    query = cy.LOOKUP.format(fields=cy.entity_fields(store.max_record_chars, FIRST_ALIASES))
    return entity_records(store, store._query(query, {"k": lookup_key}))


def entity_records(store: CypherSession, recs: list[dict[str, Any]]) -> dict[str, Entity]:
    """Entities by key from records of :func:`kb.neo4j_cypher.entity_fields` (cut values completed)."""
    d = store.codec.dec
    out: dict[str, Entity] = {}
    for rec in recs:
        r = _stored_entity(store, rec)
        eid, name = d(r["id"]), d(r["name"])
        out[rec["key"]] = Entity(
            eid,
            eid if name is None else name,
            d(r["type"]) or "entity",
            d(r["text"]),
            store.codec.dec_all(r["aliases"]),
        )
        store._remember(rec["key"], eid)
    return out


def ids(store: CypherSession, keys: list[str]) -> dict[str, str]:
    """Entity ids by key, from the store's cache or the server (unknown keys are left out)."""
    cache = store._id_cache
    out = {k: cache[k] for k in keys if k in cache}
    missing = [k for k in dict.fromkeys(keys) if k not in out]
    if missing:
        query = cy.BY_KEYS.format(fields=cy.id_fields(store.max_record_chars))
        for rec in store._by_keys(query, missing):
            stored = _complete(store, cy.ENTITY_PART, {"key": rec["key"]}, "n.id", rec["id"], rec.get("id_n"))
            out[rec["key"]] = store.codec.dec(stored)  # type: ignore[assignment]
            store._remember(rec["key"], out[rec["key"]])
    return out


def entity_field(store: CypherSession, key: str, field: str) -> str | None:
    """One string field of the entity with this key (decoded)."""
    if field not in cy.TEXT_FIELDS:
        raise KBError(f"unknown entity field {field!r}")
    cap = store.max_record_chars
    column = f"left(n.{field}, {cap}) AS v, size(n.{field}) AS n" if cap else f"n.{field} AS v"
    recs = store._query(f"MATCH (n:Entity {{key: $key}}) RETURN {column}", {"key": key})
    if not recs:
        return None
    stored = _complete(store, cy.ENTITY_PART, {"key": key}, f"n.{field}", recs[0]["v"], recs[0].get("n"))
    return store.codec.dec(stored)


def meta(store: CypherSession) -> tuple[bool, str | None, str | None]:
    """(meta node found, codec name, decoded schema JSON) of the graph."""
    recs = store._query(cy.META_READ.format(schema=cy.meta_schema(store.max_record_chars)), {})
    if not recs:
        return False, None, None
    rec = recs[0]
    if rec["codec"] != store.codec.name:
        return True, rec["codec"], None
    stored = _complete(store, cy.META_PART, {}, "n.schema", rec["schema"], rec.get("schema_n"))
    return True, rec["codec"], store.codec.dec(stored)


def _name_cache(store: CypherSession) -> dict[str, str]:
    if "_names" not in store.__dict__:
        store.__dict__["_names"] = {}
    return store.__dict__["_names"]


def remember_name(store: CypherSession, entity_id: str, stored: str | None, size: int | None) -> None:
    """Keep the name that came along with a traversal record (a name cut to the record cap is not kept)."""
    if stored is not None and size is not None and len(stored) < size:
        return
    cache = _name_cache(store)
    if len(cache) >= ID_CACHE_SIZE:
        cache.clear()
    name = store.codec.dec(stored)
    cache[entity_id] = entity_id if name is None else name


def names(store: CypherSession, wanted: list[str], keyed: dict[str, str]) -> dict[str, str]:
    """Display names of the ids ``wanted`` (``keyed``: their digest keys → ids); unknown ids are left out.

    Names that came along with an earlier traversal are not read again; the others are read as
    key and name only (not the whole entity record).
    """
    cache = _name_cache(store)
    out = {i: cache[i] for i in wanted if i in cache}
    missing = [k for k, i in keyed.items() if i not in out]
    if missing:
        query = cy.BY_KEYS.format(fields=cy.name_fields(store.max_record_chars))
        for rec in store._by_keys(query, missing):
            eid = keyed[rec["key"]]
            stored = _complete(store, cy.ENTITY_PART, {"key": rec["key"]}, "n.name", rec["name"], rec.get("name_n"))
            remember_name(store, eid, stored, None)
            out[eid] = cache.get(eid, eid)
    return out


def within_hops(store: CypherSession, seeds: list[str], keyed: dict[str, str], depth: int) -> set[str]:
    """Ids of ``keyed`` (digest key → id) within ``depth`` undirected hops of the ``seeds`` keys (a server walk)."""
    if not keyed or not seeds:
        return set()
    if depth < 1:
        return {i for k, i in keyed.items() if k in set(seeds)}
    found = store._by_keys(cy.within_hops(depth), list(keyed), seeds=seeds)
    return {keyed[r["key"]] for r in found if r["key"] in keyed}


def other_ends(store: CypherSession, recs: list[dict[str, Any]], known: dict[str, str]) -> None:
    """Add to ``known`` (key → id) the other ends whose id came along whole; keep their names too."""
    for r in recs:
        if r.get("other") is None:
            continue
        if r.get("other_id_n") is None or len(r["other_id"]) >= r["other_id_n"]:
            known.setdefault(r["other"], store.codec.dec(r["other_id"]))
            remember_name(store, known[r["other"]], r.get("other_name"), r.get("other_name_n"))
