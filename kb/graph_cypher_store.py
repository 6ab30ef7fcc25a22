"""The GraphStore protocol over any Cypher server; subclasses only say how a query is sent.

Entities are ``:Entity`` nodes and triples typed relationships (see :mod:`kb.neo4j_cypher`). String
values are stored through the store's :class:`~kb.graph_codec.Codec` and matched by digest keys, so
no user string reaches the query text even on servers that splice parameters into it. Requests stay
under ``max_message_bytes`` and returned strings are read in slices of ``max_record_chars`` when the
server has such limits (FalkorDB over Bolt); 0 means no limit.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from hybridrag.kb import graph_cypher_walk as walk
from hybridrag.kb import graph_read as rd
from hybridrag.kb import neo4j_cypher as cy
from hybridrag.kb.graph_codec import PLAIN, Codec, digest
from hybridrag.kb.graph_namespace import delete_namespace
from hybridrag.kb.graph_pools import node_pools
from hybridrag.kb.graph_write import batches, message_bytes, write_graph, write_meta, write_owner
from hybridrag.kb.model import Entity, KBError, RelationType, Schema, Subgraph, Triple
from hybridrag.kb.store import Direction

REL_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_relation_type(name: str) -> str:
    """Return ``name`` if it can be a relationship type, else raise KBError."""
    if not isinstance(name, str) or not REL_TYPE.match(name):
        raise KBError(f"invalid relation type {name!r} for a graph server: must match {REL_TYPE.pattern}")
    return name


class CypherGraphStore:
    """GraphStore on a Cypher server; subclasses implement :meth:`_query`."""

    codec: Codec = PLAIN
    max_message_bytes = 0
    max_record_chars = 0
    uri = ""
    namespace: str | None = None  # a build's label namespace (kb.graph_namespace); None: plain labels

    def _query(self, query: str, params: dict[str, Any], write: bool = False) -> list[dict[str, Any]]:
        """Run one query; return its records as dicts. Errors: KBError / GraphUnavailableError."""
        raise NotImplementedError  # abstract: each server store (Neo4j, FalkorDB) implements it

    # -- helpers -----------------------------------------------------------------------
    @property
    def _id_cache(self) -> dict[str, str]:
        if "_ids" not in self.__dict__:
            self.__dict__["_ids"] = {}
        return self.__dict__["_ids"]

    def _remember(self, key: str, entity_id: str) -> None:
        cache = self._id_cache
        if len(cache) >= rd.ID_CACHE_SIZE:
            cache.clear()
        cache[key] = entity_id

    def _by_keys(self, query: str, keys: list[str], **extra: Any) -> list[dict[str, Any]]:
        """Run ``query`` over ``$keys`` in as few requests as the message cap allows."""
        out: list[dict[str, Any]] = []
        base = message_bytes(query, {"keys": [], **extra})
        for chunk, _ in batches(keys, 5000, self.max_message_bytes, base):
            out.extend(self._query(query, {"keys": chunk, **extra}))
        return out

    def _keyed(self, ids: Iterable[str]) -> dict[str, str]:
        """Digest key -> id for the requested ids, in request order."""
        return {digest(i): i for i in dict.fromkeys(ids)}

    def _resolve(self, keys: Iterable[str], known: dict[str, str]) -> dict[str, str]:
        """Ids of ``keys``: ``known`` ones, the others from the id cache or the server."""
        need = [k for k in keys if k not in known]
        return {**rd.ids(self, need), **known} if need else known

    def _triples(self, recs: list[dict[str, Any]], known: dict[str, str]) -> list[Triple]:
        """Triples from records of head key, rel, tail key."""
        names = self._resolve((k for r in recs for k in (r["head"], r["tail"])), known)
        return [Triple(names[r["head"]], r["rel"], names[r["tail"]]) for r in recs]

    def check_format(self) -> bool:
        """Refuse a graph written by another hybridrag format or value encoding; False when empty."""
        found, codec, _ = rd.meta(self)
        if found and codec != self.codec.name:
            why = "an older hybridrag" if codec is None else f"values encoded as {codec!r}"
            raise KBError(
                f"the graph at {self.uri} was written with {why}, not {self.codec.name!r}; "
                "clear it and re-run `hybridrag ingest`"
            )
        return found

    # -- writing ---------------------------------------------------------------------
    def write(
        self,
        entities: Iterable[Entity],
        triples: Iterable[Triple],
        progress: bool = True,
        batch_size: int = 5000,
        owner: dict[str, Any] | None = None,
    ) -> None:
        """Merge entities and typed relationships in batches, then store the derived schema.

        ``owner`` (KB id and path, build id, shared flag) goes on the meta node first, so a graph cut
        short has one.
        """
        if owner is not None:
            write_owner(self, owner)
        write_graph(self, entities, triples, progress, batch_size, check_relation_type)
        write_meta(self, self._derive_schema().to_dict())

    def _derive_schema(self) -> Schema:
        def ranked(c: Counter) -> tuple[str, ...]:
            return tuple(k for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))

        types: Counter = Counter()
        names: dict[str, str] = {}
        for r in self._query(cy.SCHEMA_TYPES, {}):
            names[r["type_key"]] = rd.entity_field(self, r["example"], "type") or "entity"
            types[names[r["type_key"]]] += r["c"]
        heads: dict[str, Counter] = defaultdict(Counter)
        tails: dict[str, Counter] = defaultdict(Counter)
        for r in self._query(cy.SCHEMA_RELATIONS, {}):
            heads[r["rel"]][names.get(r["head_type"], "entity")] += r["c"]
            tails[r["rel"]][names.get(r["tail_type"], "entity")] += r["c"]
        rels = {
            k: RelationType(k, ranked(heads[k]), ranked(tails[k]), sum(heads[k].values()))
            for k in sorted(heads, key=lambda k: (-sum(heads[k].values()), k))
        }
        return Schema({k: types[k] for k in ranked(types)}, rels)

    def clear(self, batch_size: int = 10000) -> None:
        """Delete every node and relationship (of the store's namespace only, when it has one)."""
        if self.namespace:
            delete_namespace(self, self.namespace, batch_size)
        else:
            while self._query(cy.CLEAR, {"batch": int(batch_size)}, write=True)[0]["c"]:
                pass
        self._id_cache.clear()

    # -- lookups -----------------------------------------------------------------------
    def get(self, entity_id: str) -> Entity | None:
        """Return the entity with this id, or None."""
        return self.get_many([entity_id]).get(entity_id)

    def get_many(self, ids: Iterable[str]) -> dict[str, Entity]:
        """Entities by id (unknown ids are left out)."""
        keyed = self._keyed(ids)
        found = rd.entities(self, list(keyed))
        return {i: found[k] for k, i in keyed.items() if k in found and found[k].id == i}

    def lookup(self, name: str) -> list[Entity]:
        """Entities whose id, name or alias equals ``name`` case-insensitively; exact-case first."""
        name = name.strip()
        lc = name.lower()
        found = []
        for e in rd.looked_up(self, digest(lc)).values():
            if lc in (e.id.lower(), e.name.lower(), *(a.lower() for a in e.aliases)):
                found.append((name not in (e.id, e.name, *e.aliases), e.id, e))
        return [e for *_, e in sorted(found, key=lambda x: x[:2])]

    def counts(self) -> dict[str, int]:
        """Return entity and triple counts."""
        return {
            "entities": self._query(cy.COUNT_ENTITIES, {})[0]["c"],
            "triples": self._query(cy.COUNT_TRIPLES, {})[0]["c"],
        }

    def schema(self) -> Schema:
        """Return the schema stored at write time (derived from the graph when missing)."""
        _, _, schema = rd.meta(self)
        return Schema.from_dict(json.loads(schema)) if schema else self._derive_schema()

    # -- traversal -----------------------------------------------------------------------
    def _edges(
        self, ids: Iterable[str], relations: Sequence[str] | None, direction: Direction, target_type: str | None = None
    ) -> list[tuple[str, Triple, str]]:
        """(source id, triple, other end id) of the edges touching ``ids``."""
        if direction not in cy.PATTERNS:
            raise KBError(f"unknown direction {direction!r}: use out, in or both")
        extra: dict[str, Any] = {}
        if relations is not None:  # a stored type always matches REL_TYPE: others cannot match
            extra["rels"] = [r for r in dict.fromkeys(relations) if isinstance(r, str) and REL_TYPE.match(r)]
            if not extra["rels"]:
                return []
        if target_type is not None:
            extra["type_key"] = digest(target_type)
        keyed = self._keyed(ids)
        query = cy.neighbors(direction, relations is not None, target_type is not None, self.max_record_chars)
        recs = [r for r in self._by_keys(query, list(keyed), **extra) if r["src"] in keyed]
        known = dict(keyed)
        rd.other_ends(self, recs, known)  # the other end's id (and name) came along unless cut
        names = self._resolve((k for r in recs for k in (r["head"], r["tail"], r["other"])), known)
        return [
            (keyed[r["src"]], Triple(names[r["head"]], r["rel"], names[r["tail"]]), names[r["other"]]) for r in recs
        ]

    def names(self, ids: Iterable[str]) -> dict[str, str]:
        """Display names by id (unknown ids are left out); names a traversal brought along are not read again."""
        keyed = self._keyed(ids)
        return rd.names(self, list(keyed.values()), keyed)

    def node_pools(self, ids: Iterable[str], limit: int) -> dict[str, list[Triple]]:
        """Each known node of ``ids``: its edges, or a hub's (over ``limit``) first ``limit`` by (relation, head, tail).

        One request for all the nodes (:func:`kb.graph_pools.node_pools`), one more per hub.
        """
        return node_pools(self, self._keyed(ids), int(limit))

    def within_hops(self, seeds: Iterable[str], ids: Iterable[str], depth: int) -> set[str]:
        """The ``ids`` within ``depth`` undirected hops of ``seeds``, found by a walk on the server."""
        return rd.within_hops(self, list(self._keyed(seeds)), self._keyed(ids), int(depth))

    def neighbors(
        self,
        ids: Iterable[str],
        relations: Sequence[str] | None = None,
        direction: Direction = "both",
        target_type: str | None = None,
    ) -> list[Triple]:
        """Return the triples touching ``ids``, filtered by relation, direction, target type."""
        return [t for _, t, _ in self._edges(ids, relations, direction, target_type)]

    def ego_graph(self, ids: Iterable[str], radius: int = 2, relations: Sequence[str] | None = None) -> Subgraph:
        """Breadth-first expansion, one query (or one per message chunk) per hop (:mod:`kb.graph_cypher_walk`)."""
        return walk.ego_graph(self, ids, radius, relations)

    def paths(
        self, sources: Iterable[str], targets: Iterable[str], max_hops: int = 2, limit: int = 100
    ) -> list[list[Triple]]:
        """Up to ``limit`` simple undirected paths of at most ``max_hops`` hops, shortest first.

        Found on the server in chunks under a message cap (:func:`kb.graph_cypher_walk.paths`).
        """
        return walk.paths(self, sources, targets, max_hops, limit)

    def triples(self, ids: Iterable[str]) -> list[Triple]:
        """Return the triples whose head and tail are both in ``ids``."""
        keyed = self._keyed(ids)
        params = {"keys": list(keyed)}
        if not self.max_message_bytes or message_bytes(cy.TRIPLES, params) <= self.max_message_bytes:
            return self._triples(self._query(cy.TRIPLES, params), keyed)
        return [t for t in self.neighbors(keyed.values(), direction="out") if t.tail in keyed.values()]
