"""Graph store on a Neo4j (or Bolt-compatible, e.g. FalkorDB) server through the official driver."""

from __future__ import annotations

import json
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from tqdm import tqdm

from kb import neo4j_cypher as cy
from kb.model import Entity, KBError, RelationType, Schema, Subgraph, Triple
from kb.store import Direction

REL_TYPE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _one_line(err: BaseException) -> str:
    return " ".join(str(err).split()) or type(err).__name__


def check_relation_type(name: str) -> str:
    """Return ``name`` if it can be a relationship type, else raise KBError."""
    if not isinstance(name, str) or not REL_TYPE.match(name):
        raise KBError(f"invalid relation type {name!r} for Neo4j: must match {REL_TYPE.pattern}")
    return name


def _entity(rec: Any) -> Entity:
    return Entity(rec["id"], rec["name"] or rec["id"], rec["type"] or "entity", rec["text"],
                  tuple(rec["aliases"] or ()))


def _triple(rec: Any) -> Triple:
    return Triple(rec["head"], rec["rel"], rec["tail"])


def _batches(rows: list, size: int, max_bytes: int) -> Iterator[list]:
    """Split rows into UNWIND batches of at most ``size`` rows and about ``max_bytes`` (0: no cap)."""
    chunk: list = []
    used = 0
    for row in rows:
        cost = len(json.dumps(row)) if max_bytes else 0
        if chunk and (len(chunk) >= size or (max_bytes and used + cost > max_bytes)):
            yield chunk
            chunk, used = [], 0
        chunk.append(row)
        used += cost
    if chunk:
        yield chunk


class Neo4jGraphStore:
    """GraphStore whose entities are ``:Entity`` nodes and whose triples are typed relationships."""

    def __init__(self, driver: Any, uri: str = "", database: str | None = None) -> None:
        """Wrap an open ``neo4j`` driver; use :meth:`connect` to build one."""
        self._driver, self.uri = driver, uri
        self._session_kw = {"database": database} if database else {}
        self._apoc: bool | None = None
        # Some Bolt servers (FalkorDB 4.16) crash on messages past ~8 KB; 0 means no byte cap.
        self.max_batch_bytes = int(os.environ.get("HYBRIDRAG_NEO4J_MAX_BATCH_BYTES", "0"))

    @classmethod
    def connect(
        cls, uri: str, auth: tuple[str, str] | None = None, database: str | None = None
    ) -> Neo4jGraphStore:
        """Open a driver and check the server answers; failures become a one-line KBError."""
        import neo4j

        try:
            driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        except Exception as e:  # bad URI scheme, bad auth value
            raise KBError(f"cannot reach Neo4j at {uri}: {_one_line(e)}") from None
        try:
            driver.verify_connectivity(**({"database": database} if database else {}))
        except Exception as e:
            driver.close()
            raise KBError(f"cannot reach Neo4j at {uri}: {_one_line(e)}") from None
        return cls(driver, uri, database)

    def close(self) -> None:
        """Close the driver."""
        self._driver.close()

    def __enter__(self) -> Neo4jGraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, query: str, **params: Any) -> list[Any]:
        import neo4j.exceptions as ne

        try:
            with self._driver.session(**self._session_kw) as session:
                return list(session.run(query, params))
        except (ne.Neo4jError, ne.DriverError) as e:
            raise KBError(f"Neo4j query failed at {self.uri}: {_one_line(e)}") from None

    # -- writing ---------------------------------------------------------------------
    def write(self, entities: Iterable[Entity], triples: Iterable[Triple], progress: bool = True,
              batch_size: int = 5000) -> None:
        """Merge entities and typed relationships in UNWIND batches, then store the derived schema."""
        ents = {e.id: e for e in entities}
        trips = list(dict.fromkeys(triples))
        by_type: dict[str, list[list[str]]] = defaultdict(list)
        for t in trips:
            by_type[check_relation_type(t.type)].append([t.head, t.tail])
            for eid in (t.head, t.tail):
                ents.setdefault(eid, Entity(eid, eid))
        for q in cy.INDEXES:
            try:
                self._run(q)
            except KBError:
                pass  # exists already, or unsupported by this server
        rows = [
            {"id": e.id, "name": e.name, "name_lc": e.name.lower(), "type": e.type, "text": e.text,
             "aliases": list(e.aliases), "aliases_lc": [a.lower() for a in e.aliases]}
            for e in ents.values()
        ]
        total = len(rows) + len(trips)
        with tqdm(total=total, desc="neo4j write", unit=" items", disable=not progress) as bar:
            for chunk in _batches(rows, batch_size, self.max_batch_bytes):
                self._run(cy.MERGE_NODES, rows=chunk)
                bar.update(len(chunk))
            for rel, pairs in by_type.items():
                query = cy.merge_edges(rel)
                for chunk in _batches(pairs, batch_size, self.max_batch_bytes):
                    self._run(query, rows=chunk)
                    bar.update(len(chunk))
        self._run(cy.META_WRITE, schema=json.dumps(self._derive_schema().to_dict()))

    def _derive_schema(self) -> Schema:
        def ranked(c: Counter) -> tuple[str, ...]:
            return tuple(k for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))

        types = Counter({r["type"] or "entity": r["c"] for r in self._run(cy.SCHEMA_TYPES)})
        heads: dict[str, Counter] = defaultdict(Counter)
        tails: dict[str, Counter] = defaultdict(Counter)
        for r in self._run(cy.SCHEMA_RELATIONS):
            heads[r["rel"]][r["head_type"] or "entity"] += r["c"]
            tails[r["rel"]][r["tail_type"] or "entity"] += r["c"]
        rels = {k: RelationType(k, ranked(heads[k]), ranked(tails[k]), sum(heads[k].values()))
                for k in sorted(heads, key=lambda k: (-sum(heads[k].values()), k))}
        return Schema({k: types[k] for k in ranked(types)}, rels)

    def clear(self, batch_size: int = 10000) -> None:
        """Delete every node and relationship (tests, re-ingest)."""
        while self._run(cy.CLEAR, batch=batch_size)[0]["c"]:
            pass

    # -- lookups -----------------------------------------------------------------------
    def get(self, entity_id: str) -> Entity | None:
        """Return the entity with this id, or None."""
        recs = self._run(cy.GET, id=entity_id)
        return _entity(recs[0]) if recs else None

    def get_many(self, ids: Iterable[str]) -> dict[str, Entity]:
        """Entities by id in as few round trips as the batch limits allow."""
        out: dict[str, Entity] = {}
        for chunk in _batches(list(dict.fromkeys(ids)), 5000, self.max_batch_bytes):
            out.update((r["id"], _entity(r)) for r in self._run(cy.GET_MANY, ids=chunk))
        return out

    def lookup(self, name: str) -> list[Entity]:
        """Entities whose id, name or alias equals ``name`` case-insensitively; exact-case first."""
        name = name.strip()
        return [_entity(r) for r in self._run(cy.LOOKUP, name=name, lc=name.lower())]

    def counts(self) -> dict[str, int]:
        """Return entity and triple counts."""
        return {
            "entities": self._run(cy.COUNT_ENTITIES)[0]["c"],
            "triples": self._run(cy.COUNT_TRIPLES)[0]["c"],
        }

    def schema(self) -> Schema:
        """Return the schema stored at write time (derived from the graph when missing)."""
        recs = self._run(cy.META_READ)
        if recs and recs[0]["schema"]:
            return Schema.from_dict(json.loads(recs[0]["schema"]))
        return self._derive_schema()

    # -- traversal -----------------------------------------------------------------------
    def _edges(self, ids: list[str], relations: Sequence[str] | None, direction: Direction,
               target_type: str | None = None) -> list[Any]:
        if direction not in cy.PATTERNS:
            raise KBError(f"unknown direction {direction!r}: use out, in or both")
        query = cy.neighbors(direction, relations is not None, target_type is not None)
        return self._run(query, ids=ids, rels=list(relations or []), target_type=target_type)

    def neighbors(self, ids: Iterable[str], relations: Sequence[str] | None = None,
                  direction: Direction = "both", target_type: str | None = None) -> list[Triple]:
        """Return the triples touching ``ids``, filtered by relation, direction, target type."""
        return [_triple(r) for r in self._edges(list(dict.fromkeys(ids)), relations, direction, target_type)]

    def _existing(self, ids: Iterable[str]) -> list[str]:
        wanted = list(dict.fromkeys(ids))
        found = {r["id"] for r in self._run(cy.EXISTING, ids=wanted)}
        return [i for i in wanted if i in found]

    def ego_graph(
        self, ids: Iterable[str], radius: int = 2, relations: Sequence[str] | None = None
    ) -> Subgraph:
        """Breadth-first expansion, one Cypher query per hop."""
        seeds = self._existing(ids)
        dist = {i: 0 for i in seeds}
        parent: dict[str, Triple] = {}
        seen: dict[Triple, None] = {}
        frontier = seeds
        for d in range(radius):
            if not frontier:
                break
            order = {n: k for k, n in enumerate(frontier)}
            recs = sorted(self._edges(frontier, relations, "both"),
                          key=lambda r: (order[r["src"]], r["head"] != r["src"], r["rel"], r["other"]))
            nxt: list[str] = []
            for r in recs:
                t = _triple(r)
                seen[t] = None
                if r["other"] not in dist:
                    dist[r["other"]] = d + 1
                    parent[r["other"]] = t
                    nxt.append(r["other"])
            frontier = nxt
        return Subgraph(seeds=seeds, distance=dist, parent=parent, triples=list(seen))

    def paths(self, sources: Iterable[str], targets: Iterable[str], max_hops: int = 2,
              limit: int = 100) -> list[list[Triple]]:
        """Up to ``limit`` simple undirected paths of at most ``max_hops`` hops, shortest first."""
        if int(max_hops) < 1 or limit < 1:
            return []
        recs = self._run(cy.paths(int(max_hops)), sources=list(dict.fromkeys(sources)),
                         targets=list(dict.fromkeys(targets)), limit=int(limit))
        return [[Triple(*t) for t in r["path"]] for r in recs]

    def triples(self, ids: Iterable[str]) -> list[Triple]:
        """Return the triples whose head and tail are both in ``ids``."""
        return [_triple(r) for r in self._run(cy.TRIPLES, ids=list(dict.fromkeys(ids)))]

    def one_hop_dice(self, seeds: list[str], query: str, limit: int) -> list[tuple[Triple, float]] | None:
        """The fusion paper's Cypher (APOC Dice) ranking of seed triples, or None without APOC."""
        if self._apoc is None:
            import neo4j.exceptions as ne

            try:
                with self._driver.session(**self._session_kw) as session:
                    session.run(cy.APOC_PROBE).consume()
                self._apoc = True
            except ne.Neo4jError:  # unknown function: no APOC on this server
                self._apoc = False
        if not self._apoc:
            return None
        recs = self._run(cy.ONE_HOP_DICE, seeds=list(dict.fromkeys(seeds)), query=query, limit=int(limit))
        return [(_triple(r), float(r["score"])) for r in recs]
