"""The optional extraction schema: which entity types and relations a document KB may hold.

A schema file is JSON::

    {"entity_types": ["person", "organization", "city"],
     "relations": {"founded": ["person", "organization"], "located_in": ["organization", "city"]}}

``relations`` may also be a plain list of names (no type constraint). Every name is normalised
as the extracted ones are (:func:`label`): lower case, words joined by ``_``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from hybridrag.kb.model import KBError

_NON_WORD = re.compile(r"[^0-9a-z]+")


def label(text: str) -> str:
    """A type or relation name as stored: lower case, runs of other characters as one ``_``."""
    return _NON_WORD.sub("_", str(text).strip().lower()).strip("_")


@dataclass(frozen=True)
class GraphSchema:
    """Allowed entity types (empty: any) and relations with optional head/tail types (empty: any)."""

    entity_types: tuple[str, ...] = ()
    relations: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)

    def describe(self) -> tuple[str, str]:
        """The entity types and the relations, as the extraction prompt states them."""
        rels = [f"{r} ({h or 'any'} -> {t or 'any'})" if (h or t) else r for r, (h, t) in self.relations.items()]
        return ", ".join(self.entity_types) or "any", "; ".join(rels) or "any"

    def to_dict(self) -> dict:
        """JSON form (also part of the extraction cache key)."""
        return {"entity_types": list(self.entity_types), "relations": {r: list(ht) for r, ht in self.relations.items()}}

    def is_empty(self) -> bool:
        """True when nothing is constrained."""
        return not self.entity_types and not self.relations


def _types(value: object, where: str) -> tuple[str | None, str | None]:
    if not (isinstance(value, list | tuple) and len(value) == 2):
        raise KBError(f"{where}: a relation's types must be [head_type, tail_type], not {value!r}")
    return tuple(label(v) if v else None for v in value)  # type: ignore[return-value]


def load_schema(path: str | Path | None) -> GraphSchema:
    """Read and check a schema file; None is the empty schema. Problems are one-line KBErrors."""
    if path is None:
        return GraphSchema()
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KBError(f"--schema {path}: no such file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise KBError(f"--schema {path}: not a JSON file ({exc})") from None
    if not isinstance(data, dict) or set(data) - {"entity_types", "relations"}:
        raise KBError(f"--schema {path}: expected an object with 'entity_types' and/or 'relations'")
    types = data.get("entity_types", [])
    if not isinstance(types, list) or not all(isinstance(t, str) and label(t) for t in types):
        raise KBError(f"--schema {path}: 'entity_types' must be a list of names")
    raw = data.get("relations", {})
    if isinstance(raw, list):
        raw = {r: [None, None] for r in raw}
    if not isinstance(raw, dict) or not all(isinstance(r, str) and label(r) for r in raw):
        raise KBError(f"--schema {path}: 'relations' must be a list of names or {{name: [head_type, tail_type]}}")
    rels = {label(r): _types(v, f"--schema {path}: relation {r!r}") for r, v in raw.items()}
    allowed = {label(t) for t in types}
    for r, (h, t) in rels.items():
        unknown = [x for x in (h, t) if x and allowed and x not in allowed]
        if unknown:
            raise KBError(f"--schema {path}: relation {r!r} uses type {unknown[0]!r}, not in 'entity_types'")
    schema = GraphSchema(tuple(dict.fromkeys(label(t) for t in types)), rels)
    if schema.is_empty():
        raise KBError(f"--schema {path}: lists no entity types and no relations")
    return schema
