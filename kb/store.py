"""The graph-store protocol every backend implements, and the backend factory."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal, Protocol, runtime_checkable

from hybridrag.kb.model import Entity, Schema, Subgraph, Triple

Direction = Literal["out", "in", "both"]


@runtime_checkable
class GraphStore(Protocol):
    """Operations on a typed knowledge graph; ids are entity ids (strings)."""

    def get(self, entity_id: str) -> Entity | None:
        """Return the entity with this id, or None."""

    def get_many(self, ids: Iterable[str]) -> dict[str, Entity]:
        """Return the entities with these ids (unknown ids are left out)."""

    def lookup(self, name: str) -> list[Entity]:
        """Return entities whose id, name or alias equals ``name`` (case-insensitive)."""

    def neighbors(
        self,
        ids: Iterable[str],
        relations: Sequence[str] | None = None,
        direction: Direction = "both",
        target_type: str | None = None,
    ) -> list[Triple]:
        """Return the triples touching ``ids``, filtered by relation, direction, target type."""

    def ego_graph(self, ids: Iterable[str], radius: int = 2, relations: Sequence[str] | None = None) -> Subgraph:
        """Expand breadth-first from ``ids`` up to ``radius`` hops along ``relations``."""

    def paths(
        self, sources: Iterable[str], targets: Iterable[str], max_hops: int = 2, limit: int = 100
    ) -> list[list[Triple]]:
        """Return up to ``limit`` undirected paths of at most ``max_hops`` from sources to targets."""

    def triples(self, ids: Iterable[str]) -> list[Triple]:
        """Return the triples whose head and tail are both in ``ids``."""

    def schema(self) -> Schema:
        """Return the KB schema."""

    def counts(self) -> dict[str, int]:
        """Return ``{"entities": n, "triples": m}``."""
