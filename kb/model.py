"""Data model of a knowledge base: entities, typed relations, passages and the schema."""

from __future__ import annotations

from dataclasses import dataclass, field


class KBError(Exception):
    """Base class of every knowledge-base error shown to users as one line."""


class MalformedInputError(KBError):
    """A KB input file cannot be parsed; names the file and the line."""

    def __init__(self, path: str, line_no: int, problem: str) -> None:
        """Build the message ``path:line: problem``."""
        super().__init__(f"{path}:{line_no}: {problem}")
        self.path, self.line_no, self.problem = path, line_no, problem


class UnknownEntityError(KBError):
    """No entity in the KB matches an id or a name."""


class GraphUnavailableError(KBError):
    """The graph server is down, frozen or timed out: the server's fault, not the request's (503)."""


@dataclass(frozen=True)
class Entity:
    """A node of the knowledge graph, optionally carrying a text document."""

    id: str
    name: str
    type: str = "entity"
    text: str | None = None
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Triple:
    """A typed relation ``head -[type]-> tail`` between two entity ids."""

    head: str
    type: str
    tail: str

    def verbalise(self, names: dict[str, str] | None = None) -> str:
        """Return ``head → relation → tail`` with entity names when given."""
        n = names or {}
        rel = self.type.replace("_", " ")
        return f"{n.get(self.head, self.head)} → {rel} → {n.get(self.tail, self.tail)}"


Relation = Triple


@dataclass(frozen=True)
class Passage:
    """A free text passage, optionally about one entity."""

    id: str
    text: str
    entity_id: str | None = None
    source: str = "doc"


@dataclass(frozen=True)
class RelationType:
    """A relation type with the entity types seen at its head and tail."""

    name: str
    head_types: tuple[str, ...]
    tail_types: tuple[str, ...]
    count: int = 0


@dataclass
class Schema:
    """Entity types and relation types of a KB, derived at ingest."""

    entity_types: dict[str, int] = field(default_factory=dict)
    relation_types: dict[str, RelationType] = field(default_factory=dict)

    def describe(self) -> str:
        """Return a compact text form used in LLM prompts."""
        ents = ", ".join(sorted(self.entity_types))
        rels = "; ".join(
            f"{r.name}({'|'.join(r.head_types)} -> {'|'.join(r.tail_types)})" for r in self.relation_types.values()
        )
        return f"Entity types: {ents}\nRelation types: {rels}"

    def to_dict(self) -> dict:
        """Return a JSON-serialisable form."""
        return {
            "entity_types": self.entity_types,
            "relation_types": {
                k: {"head_types": list(v.head_types), "tail_types": list(v.tail_types), "count": v.count}
                for k, v in self.relation_types.items()
            },
        }

    @classmethod
    def from_dict(cls, data: dict) -> Schema:
        """Inverse of :meth:`to_dict`."""
        rels = {
            k: RelationType(k, tuple(v["head_types"]), tuple(v["tail_types"]), v.get("count", 0))
            for k, v in data.get("relation_types", {}).items()
        }
        return cls(dict(data.get("entity_types", {})), rels)


@dataclass
class Subgraph:
    """Result of an ego-graph expansion: hop distance and a parent triple per node."""

    seeds: list[str]
    distance: dict[str, int]
    parent: dict[str, Triple]
    triples: list[Triple]

    def path_to(self, node: str) -> list[Triple]:
        """Return the triples leading from a seed to ``node`` (empty for a seed)."""
        path: list[Triple] = []
        while node in self.parent:
            t = self.parent[node]
            path.append(t)
            node = t.head if t.tail == node else t.tail
        return list(reversed(path))
