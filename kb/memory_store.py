"""The embedded graph store: entities in lists, edges in compact CSR arrays."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from hybridrag.kb.cancel import check_cancelled
from hybridrag.kb.jsonl import read_rows
from hybridrag.kb.kb_dir import CURRENT, resolve_build
from hybridrag.kb.model import Entity, Schema, Subgraph, Triple
from hybridrag.kb.store import Direction


def _csr(src: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Return (indptr, order) grouping edge positions by ``src`` node."""
    order = np.argsort(src, kind="stable")
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, order.astype(np.int32)


class InMemoryGraphStore:
    """Graph store held in memory; saved to and loaded from a KB directory."""

    def __init__(
        self,
        entities: list[Entity],
        heads: np.ndarray,
        rels: np.ndarray,
        tails: np.ndarray,
        relation_names: list[str],
        schema: Schema,
    ) -> None:
        """Build the indexes from entity list and integer edge arrays."""
        self.entities = entities
        self.relation_names = relation_names
        self._rel_index = {r: i for i, r in enumerate(relation_names)}
        self.heads, self.rels, self.tails = heads, rels, tails
        self._schema = schema
        self.index_of = {e.id: i for i, e in enumerate(entities)}
        self._by_name: dict[str, list[int]] = {}
        for i, e in enumerate(entities):
            for key in {e.id.lower(), e.name.lower(), *(a.lower() for a in e.aliases)}:
                self._by_name.setdefault(key, []).append(i)
        n = len(entities)
        self._out_ptr, self._out_edges = _csr(heads, n)
        self._in_ptr, self._in_edges = _csr(tails, n)
        self._types = np.array([e.type for e in entities], dtype=object)
        self._both_csr: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._id_list: list[str] | None = None

    # -- lookups -------------------------------------------------------------
    def get(self, entity_id: str) -> Entity | None:
        """Return the entity with this id, or None."""
        i = self.index_of.get(entity_id)
        return None if i is None else self.entities[i]

    def get_many(self, ids: Iterable[str]) -> dict[str, Entity]:
        """Entities by id (unknown ids are left out)."""
        return {i: self.entities[self.index_of[i]] for i in ids if i in self.index_of}

    def lookup(self, name: str) -> list[Entity]:
        """Return entities whose id, name or alias equals ``name`` (case-insensitive)."""
        key = name.strip()
        found = [self.entities[i] for i in self._by_name.get(key.lower(), [])]
        return sorted(found, key=lambda e: e.name != key and e.id != key)  # exact case first

    def counts(self) -> dict[str, int]:
        """Return entity and triple counts."""
        return {"entities": len(self.entities), "triples": int(len(self.heads))}

    def schema(self) -> Schema:
        """Return the KB schema."""
        return self._schema

    def _triple(self, e: int) -> Triple:
        ents = self.entities
        return Triple(ents[self.heads[e]].id, self.relation_names[self.rels[e]], ents[self.tails[e]].id)

    # -- traversal -------------------------------------------------------------
    def edge_ids(
        self, idx: Iterable[int], relations: Sequence[str] | None = None, direction: Direction = "both"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Return (edge ids, neighbour index) of edges touching entity indexes ``idx``."""
        parts_e, parts_n = [], []
        for i in idx:
            if direction in ("out", "both"):
                e = self._out_edges[self._out_ptr[i] : self._out_ptr[i + 1]]
                parts_e.append(e)
                parts_n.append(self.tails[e])
            if direction in ("in", "both"):
                e = self._in_edges[self._in_ptr[i] : self._in_ptr[i + 1]]
                parts_e.append(e)
                parts_n.append(self.heads[e])
        if not parts_e:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        edges, nbrs = np.concatenate(parts_e), np.concatenate(parts_n)
        if relations is not None:
            keep = np.isin(self.rels[edges], [self._rel_index[r] for r in relations if r in self._rel_index])
            edges, nbrs = edges[keep], nbrs[keep]
        return edges, nbrs

    def _indexes(self, ids: Iterable[str]) -> list[int]:
        return [self.index_of[i] for i in dict.fromkeys(ids) if i in self.index_of]

    def neighbors(
        self,
        ids: Iterable[str],
        relations: Sequence[str] | None = None,
        direction: Direction = "both",
        target_type: str | None = None,
    ) -> list[Triple]:
        """Return the triples touching ``ids``, filtered by relation, direction, target type."""
        edges, nbrs = self.edge_ids(self._indexes(ids), relations, direction)
        if target_type is not None:
            keep = self._types[nbrs] == target_type
            edges = edges[keep]
        return [self._triple(e) for e in edges]

    def _both(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr, edge ids, neighbours) of every node's out-edges then in-edges (built once, on first use).

        The order within a node is :meth:`edge_ids`' order for ``direction="both"``, so a frontier
        gathered from these arrays visits edges exactly as a one-node-at-a-time expansion does.
        """
        if self._both_csr is None:
            out_deg = np.diff(self._out_ptr)
            ptr = self._out_ptr + self._in_ptr
            m = len(self.heads)
            edges = np.empty(2 * m, dtype=np.int32)
            nbrs = np.empty(2 * m, dtype=np.int32)
            rank = np.arange(m, dtype=np.int64)
            node = self.heads[self._out_edges]
            at = ptr[node] + rank - self._out_ptr[node]
            edges[at], nbrs[at] = self._out_edges, self.tails[self._out_edges]
            node = self.tails[self._in_edges]
            at = ptr[node] + out_deg[node] + rank - self._in_ptr[node]
            edges[at], nbrs[at] = self._in_edges, self.heads[self._in_edges]
            self._both_csr = (ptr, edges, nbrs)
        return self._both_csr

    def _ids(self) -> list[str]:
        """Entity ids by index (cached on first use)."""
        if self._id_list is None:
            self._id_list = [e.id for e in self.entities]
        return self._id_list

    def _gather(self, frontier: np.ndarray, allowed: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(edge ids, neighbours) of a whole frontier, node by node, relation mask applied."""
        ptr, edges, nbrs = self._both()
        starts, lens = ptr[frontier], ptr[frontier + 1] - ptr[frontier]
        total = int(lens.sum())
        if total == 0:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        at = np.repeat(starts - np.cumsum(lens) + lens, lens) + np.arange(total)
        e, n = edges[at], nbrs[at]
        if allowed is not None:
            keep = allowed[self.rels[e]]
            e, n = e[keep], n[keep]
        return e, n

    def ego_graph(self, ids: Iterable[str], radius: int = 2, relations: Sequence[str] | None = None) -> Subgraph:
        """Expand breadth-first from ``ids`` up to ``radius`` hops along ``relations``.

        One numpy gather per level over the whole frontier; triples are made once, for the edges
        seen. Distances, parents and triple order are those of a FIFO breadth-first search that
        expands one node at a time (out-edges, then in-edges, in stored order).
        """
        seeds = self._indexes(ids)
        allowed = None
        if relations is not None:
            allowed = np.zeros(len(self.relation_names), dtype=bool)
            allowed[[self._rel_index[r] for r in relations if r in self._rel_index]] = True
        visited = np.zeros(len(self.entities), dtype=bool)
        visited[seeds] = True
        frontier = np.asarray(seeds, dtype=np.int64)
        found, parents, seen = [frontier], [], []
        for _ in range(max(radius, 0)):
            if not len(frontier):
                break
            check_cancelled()  # a hub's level can take a while: a stopped run ends here
            edges, nbrs = self._gather(frontier, allowed)
            seen.append(edges)
            fresh = ~visited[nbrs]
            new, via = nbrs[fresh], edges[fresh]
            first = np.sort(np.unique(new, return_index=True)[1])  # first sighting of each new node
            frontier, via = new[first].astype(np.int64), via[first]
            visited[frontier] = True
            found.append(frontier)
            parents.append(via)
        edge_list = np.concatenate(seen) if seen else np.zeros(0, np.int32)
        kept = edge_list[np.sort(np.unique(edge_list, return_index=True)[1])]
        ids, names = self._ids(), self.relation_names
        made = {
            e: Triple(ids[h], names[r], ids[t])
            for e, h, r, t in zip(
                kept.tolist(),
                self.heads[kept].tolist(),
                self.rels[kept].tolist(),
                self.tails[kept].tolist(),
                strict=True,
            )
        }
        distance = {ids[i]: d for d, level in enumerate(found) for i in level.tolist()}
        parent = {
            ids[n]: made[e]
            for level, via in zip(found[1:], parents, strict=True)
            for n, e in zip(level.tolist(), via.tolist(), strict=True)
        }
        return Subgraph(seeds=[ids[i] for i in seeds], distance=distance, parent=parent, triples=list(made.values()))

    def paths(
        self, sources: Iterable[str], targets: Iterable[str], max_hops: int = 2, limit: int = 100
    ) -> list[list[Triple]]:
        """Return up to ``limit`` simple undirected paths of at most ``max_hops`` hops."""
        target_idx = set(self._indexes(targets))
        out: list[list[Triple]] = []
        stack: list[tuple[int, list[int], list[int]]] = [(s, [s], []) for s in self._indexes(sources)]
        while stack and len(out) < limit:
            check_cancelled()  # the paths grow as degree^hops: a stopped run ends here
            node, visited, path = stack.pop()
            if path and node in target_idx:
                out.append([self._triple(e) for e in path])
                continue
            if len(path) >= max_hops:
                continue
            edges, nbrs = self.edge_ids([node])
            for e, n in zip(edges.tolist(), nbrs.tolist(), strict=True):
                if n not in visited:
                    stack.append((n, [*visited, n], [*path, e]))
        return sorted(out, key=len)

    def triples(self, ids: Iterable[str]) -> list[Triple]:
        """Return the triples whose head and tail are both in ``ids``."""
        idx = self._indexes(ids)
        inside = np.zeros(len(self.entities), dtype=bool)
        inside[idx] = True
        edges, nbrs = self.edge_ids(idx, direction="out")
        return [self._triple(e) for e in edges[inside[nbrs]]]

    # -- persistence -----------------------------------------------------------
    def save(self, directory: Path) -> None:
        """Write ``graph.npz`` and ``entities.jsonl`` into ``directory``."""
        directory.mkdir(parents=True, exist_ok=True)
        np.savez(directory / "graph.npz", heads=self.heads, rels=self.rels, tails=self.tails)
        with open(directory / "entities.jsonl", "w", encoding="utf-8") as f:
            for e in self.entities:
                row = [e.id, e.name, e.type, e.text, list(e.aliases)]
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        meta = {"relations": self.relation_names, "schema": self._schema.to_dict()}
        (directory / "graph.json").write_text(json.dumps(meta, indent=1), encoding="utf-8")

    @classmethod
    def load(cls, directory: Path) -> InMemoryGraphStore:
        """Read a store written by :meth:`save` (in a build folder, or the live build of a KB directory)."""
        if not (directory / "graph.npz").exists() and (directory / CURRENT).is_symlink():
            directory = resolve_build(directory).path
        with np.load(directory / "graph.npz") as npz:
            heads, rels, tails = npz["heads"], npz["rels"], npz["tails"]
        if not len(heads) == len(rels) == len(tails):
            raise ValueError(f"graph.npz edge arrays differ in length ({len(heads)}, {len(rels)}, {len(tails)})")
        meta = json.loads((directory / "graph.json").read_text(encoding="utf-8"))
        rows = read_rows(directory / "entities.jsonl")
        entities = [Entity(r[0], r[1], r[2], r[3], tuple(r[4])) for r in rows]
        n = len(entities)
        if len(heads) and max(int(heads.max()), int(tails.max())) >= n:
            raise ValueError(
                f"graph.npz names entity {max(int(heads.max()), int(tails.max()))} but entities.jsonl has {n} rows"
            )
        if len(rels) and int(rels.max()) >= len(meta["relations"]):
            raise ValueError(
                f"graph.npz names relation {int(rels.max())} but graph.json lists {len(meta['relations'])}"
            )
        return cls(entities, heads, rels, tails, meta["relations"], Schema.from_dict(meta["schema"]))
