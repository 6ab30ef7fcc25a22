"""Parsers for KB input files; every error names the file and line number."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from hybridrag.kb.model import Entity, KBError, MalformedInputError, Passage, Triple


def check_input_file(path: Path) -> None:
    """Raise a one-line error unless ``path`` is an existing regular file."""
    if not path.exists():
        raise FileNotFoundError(f"input file not found: {path}")
    if path.is_dir():
        raise KBError(f"input {path} is a directory, not a file: name the file inside it")


def text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield (line number, line) of a UTF-8 file; bad UTF-8 raises with its line and column."""
    check_input_file(path)
    with open(path, "rb") as f:
        for no, raw in enumerate(f, 1):
            try:
                yield no, raw.decode("utf-8-sig" if no == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise MalformedInputError(
                    str(path),
                    no,
                    f"invalid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1}); save the file as UTF-8",
                ) from None


def detect_format(path: Path) -> str:
    """Guess the triple format from the file suffix: pipe, tsv, csv or jsonl."""
    suffix = path.suffix.lower()
    return {".tsv": "tsv", ".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl"}.get(suffix, "pipe")


def _csv_rows(path: Path) -> Iterator[tuple[int, list[str]]]:
    reader = csv.reader(line for _, line in text_lines(path))
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise MalformedInputError(str(path), reader.line_num + 1, f"invalid CSV ({exc})") from None


def read_triples(path: Path, fmt: str | None = None) -> Iterator[Triple]:
    """Yield triples from ``s|r|o`` (MetaQA), TSV, CSV or JSONL (head, relation, tail)."""
    fmt = fmt or detect_format(path)
    if fmt == "jsonl":
        for no, obj in json_lines((line for _, line in text_lines(path)), path):
            fields = [obj.get("head"), obj.get("relation", obj.get("type")), obj.get("tail")]
            for p in fields:
                _require_scalar(p, "head, relation and tail", path, no)
            yield _triple_from(fields, path, no)
        return
    if fmt == "csv":
        rows: Iterable[tuple[int, list[str]]] = _csv_rows(path)
    else:
        sep = "\t" if fmt == "tsv" else "|"
        rows = ((no, line.rstrip("\r\n").split(sep)) for no, line in text_lines(path))
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


def _require_scalar(value: object, what: str, path: Path, no: int) -> None:
    """Ids and names must be JSON strings or numbers, not lists, objects or booleans."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, str | int | float)):
        raise MalformedInputError(str(path), no, f"{what} must be a string, not a JSON {type(value).__name__}")


def _scalar(obj: dict, key: str, path: Path, no: int) -> str | None:
    """The field ``key`` as stripped text (None when absent, null or blank)."""
    value = obj.get(key)
    _require_scalar(value, f"{key!r}", path, no)
    text = "" if value is None else str(value).strip()
    return text or None


def json_lines(f: Iterable[str], path: Path) -> Iterator[tuple[int, dict]]:
    """Yield (line number, object) for each non-blank JSONL line; bad lines raise with their number."""
    no = 0
    lines = iter(f)
    while True:
        try:
            line = next(lines)
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            raise MalformedInputError(
                str(path), no + 1, f"invalid UTF-8 at or after this line ({exc.reason})"
            ) from None
        no += 1
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
    for no, obj in json_lines((line for _, line in text_lines(path)), path):
        eid = _scalar(obj, "id", path, no) or _scalar(obj, "name", path, no)
        if not eid:
            raise MalformedInputError(str(path), no, "entity needs an 'id' or a 'name'")
        aliases = obj.get("aliases") or []
        if not isinstance(aliases, list):
            raise MalformedInputError(str(path), no, "'aliases' must be a list of strings")
        for a in aliases:
            _require_scalar(a, "each alias", path, no)
        text = obj.get("text")
        if text is not None and not isinstance(text, str):
            raise MalformedInputError(str(path), no, f"'text' must be a string, not a JSON {type(text).__name__}")
        yield Entity(
            id=eid,
            name=_scalar(obj, "name", path, no) or eid,
            type=_scalar(obj, "type", path, no) or "entity",
            text=text,
            aliases=tuple(str(a) for a in aliases if a is not None),
        )


def read_passages(path: Path) -> Iterator[Passage]:
    """Yield passages from JSONL rows ``{"id", "text", "entity_id", "source"}``."""
    for no, obj in json_lines((line for _, line in text_lines(path)), path):
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip():
            raise MalformedInputError(str(path), no, "passage needs a non-empty 'text'")
        yield Passage(
            id=_scalar(obj, "id", path, no) or f"p{no}",
            text=text.strip(),
            entity_id=_scalar(obj, "entity_id", path, no),
            source=_scalar(obj, "source", path, no) or "doc",
        )


def read_type_map(path: Path) -> dict[str, tuple[str, str]]:
    """Read a JSON ``{relation: [head_type, tail_type]}`` used to type untyped entities."""
    path = Path(path)
    check_input_file(path)
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedInputError(str(path), raw[: exc.start].count(b"\n") + 1, "invalid UTF-8") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedInputError(str(path), exc.lineno, f"invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise MalformedInputError(
            str(path),
            1,
            f"expected a JSON object {{relation: [head_type, tail_type]}}, not a JSON {type(data).__name__}",
        )
    out = {}
    for rel, pair in data.items():
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(t, str) and t for t in pair)):
            at = text.find(json.dumps(rel, ensure_ascii=False))
            line = text[:at].count("\n") + 1 if at >= 0 else 1
            raise MalformedInputError(str(path), line, f"relation {rel!r} needs [head_type, tail_type]")
        out[rel] = (pair[0], pair[1])
    return out
