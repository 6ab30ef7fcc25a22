"""Parsers for KB input files; every error names the file and line number."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

from kb.model import Entity, MalformedInputError, Passage, Triple


def _open(path: Path):
    if not path.exists():
        raise FileNotFoundError(f"input file not found: {path}")
    return open(path, encoding="utf-8", newline="")


def detect_format(path: Path) -> str:
    """Guess the triple format from the file suffix: pipe, tsv, csv or jsonl."""
    suffix = path.suffix.lower()
    return {".tsv": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl"}.get(suffix, "pipe")


def read_triples(path: Path, fmt: str | None = None) -> Iterator[Triple]:
    """Yield triples from ``s|r|o`` (MetaQA), TSV, CSV or JSONL (head, relation, tail)."""
    fmt = fmt or detect_format(path)
    with _open(path) as f:
        if fmt == "jsonl":
            for no, obj in json_lines(f, path):
                yield _triple_from(
                    [obj.get("head"), obj.get("relation", obj.get("type")), obj.get("tail")], path, no
                )
            return
        if fmt == "csv":
            rows = enumerate(csv.reader(f), 1)
        else:
            sep = "\t" if fmt == "tsv" else "|"
            rows = ((no, line.rstrip("\r\n").split(sep)) for no, line in enumerate(f, 1))
        for no, parts in rows:
            if not parts or parts == [""]:
                continue
            if no == 1 and fmt == "csv" and [p.lower() for p in parts] == ["head", "relation", "tail"]:
                continue
            yield _triple_from(parts, path, no)


def _triple_from(parts: list, path: Path, no: int) -> Triple:
    if len(parts) != 3:
        raise MalformedInputError(str(path), no, f"expected 3 fields (head, relation, tail), got {len(parts)}")
    head, rel, tail = (str(p).strip() if p is not None else "" for p in parts)
    if not head or not rel or not tail:
        raise MalformedInputError(str(path), no, "empty head, relation or tail")
    return Triple(head, rel, tail)


def json_lines(f, path: Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank JSONL line; bad lines raise with their number."""
    for no, line in enumerate(f, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MalformedInputError(str(path), no, f"invalid JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise MalformedInputError(str(path), no, "expected a JSON object")
        yield no, obj


def read_entities(path: Path) -> Iterator[Entity]:
    """Yield entities from JSONL rows ``{"id", "name", "type", "text", "aliases"}``."""
    with _open(path) as f:
        for no, obj in json_lines(f, path):
            eid = str(obj.get("id") or obj.get("name") or "").strip()
            if not eid:
                raise MalformedInputError(str(path), no, "entity needs an 'id' or a 'name'")
            aliases = obj.get("aliases") or []
            if not isinstance(aliases, list):
                raise MalformedInputError(str(path), no, "'aliases' must be a list of strings")
            yield Entity(
                id=eid,
                name=str(obj.get("name") or eid),
                type=str(obj.get("type") or "entity"),
                text=obj.get("text"),
                aliases=tuple(str(a) for a in aliases),
            )


def read_passages(path: Path) -> Iterator[Passage]:
    """Yield passages from JSONL rows ``{"id", "text", "entity_id", "source"}``."""
    with _open(path) as f:
        for no, obj in json_lines(f, path):
            text = obj.get("text")
            if not isinstance(text, str) or not text.strip():
                raise MalformedInputError(str(path), no, "passage needs a non-empty 'text'")
            yield Passage(
                id=str(obj.get("id") or f"p{no}"),
                text=text.strip(),
                entity_id=obj.get("entity_id"),
                source=str(obj.get("source") or "doc"),
            )


def read_type_map(path: Path) -> dict[str, tuple[str, str]]:
    """Read a JSON ``{relation: [head_type, tail_type]}`` used to type untyped entities."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise MalformedInputError(str(path), exc.lineno, f"invalid JSON ({exc.msg})") from None
    out = {}
    for rel, pair in data.items():
        if not (isinstance(pair, list) and len(pair) == 2):
            raise MalformedInputError(str(path), 1, f"relation {rel!r} needs [head_type, tail_type]")
        out[rel] = (str(pair[0]), str(pair[1]))
    return out
