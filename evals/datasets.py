"""Question sets: the Question record and loaders for MetaQA, JSONL and STaRK-layout files.

Supported inputs (every parse error names the file and line):

- MetaQA: ``question<TAB>answer1|answer2`` with the topic entity in brackets, e.g.
  ``what movies did [Tom Hanks] star in``. The brackets are removed from the text given to
  methods; the topic is kept in :attr:`Question.topic`. A sibling file named with ``_qtype``
  before the extension, as the MetaQA release names them (``qa_dev.txt`` →
  ``qa_dev_qtype.txt``; one type per line, same order), gives :attr:`Question.qtype`;
  ``<k>hop`` in the file name gives :attr:`Question.hops`, else the question type does
  (``actor_to_movie_to_director``: 2).
- JSONL: one object a line with ``question`` and ``answers`` (list or string), optional
  ``id``, ``answer_ids``, ``qtype``, ``topic`` and ``hops``.
- STaRK: a CSV with columns ``id,query,answer_ids`` where ``answer_ids`` is a Python list
  literal such as ``[12, 40]`` (extra columns are ignored), plus an SKB directory in the
  small layout :func:`stark_kb` converts into a KB. Answer names come from the SKB.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import random
import re
from dataclasses import dataclass, replace
from pathlib import Path

from hybridrag.kb.loaders import json_lines
from hybridrag.kb.model import KBError, MalformedInputError

_TOPIC = re.compile(r"\[([^\[\]]+)\]")
_HOPS = re.compile(r"(\d)hop")


@dataclass(frozen=True)
class Question:
    """One evaluation question with its gold answers.

    Attributes:
        id: Stable identifier (used to resume a run).
        question: Text given to the method (MetaQA brackets removed).
        answers: Gold answer names.
        answer_ids: Gold entity ids when known (STaRK, JSONL); empty otherwise.
        qtype: Question type (MetaQA relation path), or None.
        topic: Topic entity name (MetaQA brackets), or None.
        hops: Hop count between topic and answers (MetaQA), or None.
        supporting: Documents that state the answer (documents KBs; scoring only).
        planted: Documents planted to mislead (AdvHotpotQA; scoring only).
        unsupported: The question's other real documents (scoring only).
    """

    id: str
    question: str
    answers: tuple[str, ...]
    answer_ids: tuple[str, ...] = ()
    qtype: str | None = None
    topic: str | None = None
    hops: int | None = None
    supporting: tuple[str, ...] = ()
    planted: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()


def _lines(path: Path):
    if not path.exists():
        raise FileNotFoundError(f"question file not found: {path}")
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            yield no, line.rstrip("\r\n")


def load_metaqa(path: str | Path, qtype_path: str | Path | None = None, prefix: str | None = None) -> list[Question]:
    """Load a MetaQA question file (and its qtype file, found beside it when not given)."""
    path = Path(path)
    qtype_path = Path(qtype_path) if qtype_path else qtype_file(path)
    qtypes = [t.strip() for _, t in _lines(qtype_path)] if qtype_path.exists() else None
    hops_match = _HOPS.search(path.stem)
    hops = int(hops_match.group(1)) if hops_match else None
    prefix = prefix or path.stem
    out = []
    for no, line in _lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if len(parts) != 2:
            raise MalformedInputError(str(path), no, f"expected 'question<TAB>answers', got {len(parts)} fields")
        text, raw_answers = parts
        answers = tuple(a.strip() for a in raw_answers.split("|") if a.strip())
        if not text.strip() or not answers:
            raise MalformedInputError(str(path), no, "empty question or no answers")
        topic = _TOPIC.search(text)
        qtype = None
        if qtypes is not None:
            if no > len(qtypes):
                raise MalformedInputError(str(qtype_path), no, "qtype file has fewer lines than the questions")
            qtype = qtypes[no - 1] or None
        out.append(
            Question(
                id=f"{prefix}:{no}",
                question=_TOPIC.sub(r"\1", text).strip(),
                answers=answers,
                qtype=qtype,
                topic=topic.group(1).strip() if topic else None,
                hops=hops if hops is not None else qtype_hops(qtype),
            )
        )
    return out


def qtype_file(path: str | Path) -> Path:
    """The question-type file beside a MetaQA question file: ``_qtype`` before the extension."""
    path = Path(path)
    return path.with_name(f"{path.stem}_qtype{path.suffix}")


def qtype_hops(qtype: str | None) -> int | None:
    """Hops of a MetaQA question type (``movie_to_director_to_movie``: 2); None without one."""
    return qtype.count("_to_") or None if qtype else None


def _str_list(value, path: Path, no: int, field: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str | int):
        value = [value]
    if not isinstance(value, list):
        raise MalformedInputError(str(path), no, f"'{field}' must be a list or a string")
    return tuple(str(v).strip() for v in value if str(v).strip())


def load_jsonl(path: str | Path) -> list[Question]:
    """Load questions from JSONL rows ``{"question", "answers", ...}``.

    A row may name its ``supporting`` documents (file names in a documents KB): their recall is scored.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"question file not found: {path}")
    out = []
    with open(path, encoding="utf-8") as f:
        rows = list(json_lines(f, path))
    for no, obj in rows:
        text = obj.get("question")
        if not isinstance(text, str) or not text.strip():
            raise MalformedInputError(str(path), no, "needs a non-empty 'question'")
        answers = _str_list(obj.get("answers"), path, no, "answers")
        answer_ids = _str_list(obj.get("answer_ids"), path, no, "answer_ids")
        if not answers and not answer_ids:
            raise MalformedInputError(str(path), no, "needs 'answers' or 'answer_ids'")
        hops = obj.get("hops")
        out.append(
            Question(
                id=str(obj.get("id") or f"{path.stem}:{no}"),
                question=text.strip(),
                answers=answers,
                answer_ids=answer_ids,
                qtype=obj.get("qtype"),
                topic=obj.get("topic"),
                hops=int(hops) if hops is not None else None,
                supporting=_str_list(obj.get("supporting"), path, no, "supporting"),
            )
        )
    return out


def load_stark_csv(path: str | Path) -> list[Question]:
    """Load a STaRK questions CSV (``id,query,answer_ids``); answer names are left empty."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"question file not found: {path}")
    out = []
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        missing = {"id", "query", "answer_ids"} - set(reader.fieldnames or [])
        if missing:
            raise MalformedInputError(str(path), 1, f"missing columns: {', '.join(sorted(missing))}")
        for row in reader:
            no = reader.line_num
            try:
                ids = ast.literal_eval(row["answer_ids"] or "")
            except (ValueError, SyntaxError):
                raise MalformedInputError(str(path), no, "answer_ids must be a list literal like [1, 2]") from None
            if not isinstance(ids, list | tuple) or not ids:
                raise MalformedInputError(str(path), no, "answer_ids must be a non-empty list")
            if not (row["query"] or "").strip():
                raise MalformedInputError(str(path), no, "empty query")
            out.append(
                Question(
                    id=str(row["id"]).strip(),
                    question=row["query"].strip(),
                    answers=(),
                    answer_ids=tuple(str(i) for i in ids),
                )
            )
    return out


def load_questions(path: str | Path) -> list[Question]:
    """Load any supported question file, chosen by suffix (.jsonl/.json, .csv, else MetaQA)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".jsonl", ".json"):
        return load_jsonl(path)
    if suffix == ".csv":
        return load_stark_csv(path)
    return load_metaqa(path)


def with_answer_names(questions: list[Question], name_of) -> list[Question]:
    """Fill empty ``answers`` from ``answer_ids`` with ``name_of(id)`` (e.g. the KB's name lookup)."""
    return [q if q.answers else replace(q, answers=tuple(name_of(i) for i in q.answer_ids)) for q in questions]


def sample(questions: list[Question], limit: int | None, seed: int = 0) -> list[Question]:
    """The first ``limit`` questions of a seeded permutation (nested: a larger limit extends a smaller)."""
    if limit is None or limit >= len(questions):
        return list(questions)
    order = list(range(len(questions)))
    random.Random(seed).shuffle(order)
    return [questions[i] for i in order[:limit]]


SKB_NODES, SKB_EDGES, SKB_PASSAGES = "node_info.jsonl", "edges.tsv", "passages.jsonl"


def stark_kb(skb_dir: str | Path, cache: Path, progress: bool = False, **ingest_options) -> Path:
    """Convert an SKB directory into a KB under ``cache`` once, and return the KB directory.

    The supported layout (a small stand-in for STaRK's pickled SKBs; export yours to it):
    ``node_info.jsonl`` (one node a line: ``id``, ``name``, ``type``, ``text``, optional
    ``aliases``), ``edges.tsv`` (``head_id<TAB>relation<TAB>tail_id``, no header) and an
    optional ``passages.jsonl`` (``id``, ``text``, ``entity_id``). The KB is rebuilt when any
    of these files changes (the cache folder name hashes their paths, sizes and times).
    """
    from filelock import FileLock

    from hybridrag.kb.ingest import ingest

    skb = Path(skb_dir).resolve()
    nodes, edges, passages = skb / SKB_NODES, skb / SKB_EDGES, skb / SKB_PASSAGES
    for needed in (nodes, edges):
        if not needed.exists():
            raise KBError(f"SKB directory {skb} lacks {needed.name} (expected {SKB_NODES} and {SKB_EDGES})")
    files = [p for p in (nodes, edges, passages) if p.exists()]
    stamp = hashlib.sha1(repr([(str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files]).encode())
    out = Path(cache) / f"stark-{skb.name}-{stamp.hexdigest()[:10]}"
    if not (out / "manifest.json").exists():
        out.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(out) + ".lock"):
            if not (out / "manifest.json").exists():
                ingest(
                    out,
                    [edges],
                    entities=nodes,
                    passages=passages if passages.exists() else None,
                    progress=progress,
                    **ingest_options,
                )
    return out
