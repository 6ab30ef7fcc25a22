"""Where a document KB's facts come from: the chunk(s) each triple was extracted from.

A build made from documents holds, beside the graph and indexes:

- ``documents.jsonl``: one row per document (key, path, kind, sha256, when it was added, its
  chunks ``{"id", "page", "start"}`` (page for PDF, start a character offset in the page or text),
  whether its chunks went through extraction, and those whose extraction failed);
- ``provenance.jsonl``: one row per extracted triple, ``{"head", "relation", "tail",
  "head_name", "tail_name", "chunks": [chunk ids]}``;
- ``merges.jsonl``: one row per entity-resolution decision (:mod:`kb.resolve`);
- ``sources.jsonl``: one row per triple, entity or passage file (:mod:`kb.kb_contents`).

:func:`source_chunks` maps any method's evidence item back to chunk ids: a passage is a chunk
itself; a graph fact (``head → relation → tail``, hops chained, ``(inverse)`` read backwards)
names the chunks its triples came from.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from hybridrag.kb.extract import name_key
from hybridrag.kb.extract_schema import label
from hybridrag.kb.model import Triple

DOCUMENTS, PROVENANCE, MERGES = "documents.jsonl", "provenance.jsonl", "merges.jsonl"
SOURCES = "sources.jsonl"  # the input files of triples ingests: kb.kb_contents
ARROW = " → "


def write_jsonl(path: Path, rows) -> None:
    """One JSON object per line."""
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def read_jsonl(path: Path) -> list[dict]:
    """Rows of a JSONL part; an absent part is empty (a KB not made from documents)."""
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def provenance_rows(provenance: dict[Triple, list[str]], names: dict[str, str]) -> list[dict]:
    """Rows of ``provenance.jsonl``."""
    return [
        {
            "head": t.head,
            "relation": t.type,
            "tail": t.tail,
            "head_name": names.get(t.head, t.head),
            "tail_name": names.get(t.tail, t.tail),
            "chunks": chunks,
        }
        for t, chunks in provenance.items()
    ]


@dataclass
class Provenance:
    """Triples and passages of a document KB, back to their chunks."""

    triples: dict[Triple, list[str]] = field(default_factory=dict)
    by_names: dict[tuple[str, str, str], list[str]] = field(default_factory=dict)
    places: dict[str, dict] = field(default_factory=dict)

    @property
    def chunks(self) -> set[str]:
        """Ids of every chunk of the KB's documents."""
        return set(self.places)

    @classmethod
    def load(cls, build: str | Path) -> Provenance:
        """Read a build folder, or the live build of a KB directory."""
        path = Path(build)
        if not (path / "manifest.json").is_file() or (path / "current").is_symlink():
            from hybridrag.kb.kb_dir import resolve_build

            path = resolve_build(path).path
        out = cls()
        named: dict[tuple[str, str, str], Triple] = {}
        for row in read_jsonl(path / PROVENANCE):
            t = Triple(row["head"], row["relation"], row["tail"])
            out.triples[t] = list(row["chunks"])
            named[(name_key(row["head_name"]), label(row["relation"]), name_key(row["tail_name"]))] = t
        out.by_names = {k: out.triples[t] for k, t in named.items()}
        out.places = {
            c["id"]: {"document": row["key"], "path": row["path"], "page": c.get("page"), "start": c.get("start")}
            for row in read_jsonl(path / DOCUMENTS)
            for c in row.get("chunks", [])
        }
        return out

    def where(self, chunk_id: str) -> dict:
        """Where a chunk is: ``{"document", "path", "page", "start"}``; KeyError for an unknown id."""
        try:
            return dict(self.places[chunk_id])
        except KeyError:
            raise KeyError(f"no chunk {chunk_id!r} in this KB's documents") from None

    def fact_chunks(self, head: str, relation: str, tail: str) -> list[str]:
        """Chunks of a fact given by names (either direction of an ``(inverse)`` reading)."""
        rel = relation.strip()
        if rel.endswith("(inverse)"):
            head, tail, rel = tail, head, rel.removesuffix("(inverse)")
        return self.by_names.get((name_key(head), label(rel), name_key(tail)), [])

    def _hop(self, left: str, arrow: str, relation: str, right: str) -> list[str]:
        heads, tails = _names(left), _names(right)
        if arrow == "←":
            heads, tails = tails, heads
        return [c for h in heads for t in tails for c in self.fact_chunks(h, relation, t)]

    def source_chunks(self, evidence: dict) -> list[str]:
        """The chunk ids an evidence item (``{source, id, text, path}``) rests on; empty when none.

        Graph facts are read as the methods write them: ``A → r → B`` (hops chained, ``(inverse)``
        read backwards) and ``{A} ← r ← {B, C}`` (sets of names, the arrow giving the direction).
        """
        if evidence.get("id") in self.places:
            return [evidence["id"]]
        found: list[str] = []
        lines = [evidence.get("text", ""), *(p for p in evidence.get("path") or [] if isinstance(p, str))]
        for line in lines:
            parts = _HOP.split(str(line))
            for i in range(0, len(parts) - 4, 4):
                hop = self._hop(parts[i], parts[i + 1], parts[i + 2], parts[i + 4])
                found += [c for c in dict.fromkeys(hop) if c not in found]
        return found


_HOP = re.compile(r" (→|←) ")


def _names(part: str) -> list[str]:
    """The names of one path position: a name, or a ``{A, B}`` set (also tried whole)."""
    part = part.strip()
    if part.startswith("{") and part.endswith("}"):
        inner = part[1:-1]
        return list(dict.fromkeys([inner, *(n.strip() for n in inner.split(", "))]))
    return [part]
