"""One solved example of a KB: a question, its topic entities, relation path and answers."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

MASK = "<E>"
SOURCES = ("schema", "run", "user")


@dataclass(frozen=True)
class SolvedExample:
    """A question solved on one KB, used as a few-shot example by every method.

    Attributes:
        question: The question text (entity names as written).
        masked: The question with each topic-entity mention replaced by ``<E>``.
        topic: Names of the topic entities.
        topic_types: KB entity type of each topic entity.
        relations: KB relation names from the topic to the answers (plain names, the
            direction is found by the traversal, as in the methods' relation paths).
        answer_type: KB entity type of the answers.
        answers: Answer names.
        source: ``schema`` (synthesized from the KB), ``run`` (a question with gold answers)
            or ``user`` (the user's own file).
        outputs: Optional role-specific outputs keyed by role name.
        directions: Optional direction of each hop, ``out`` (head to tail) or ``in``.
    """

    question: str
    masked: str
    topic: tuple[str, ...]
    topic_types: tuple[str, ...]
    relations: tuple[str, ...]
    answer_type: str
    answers: tuple[str, ...]
    source: str
    outputs: dict = field(default_factory=dict, hash=False)
    directions: tuple[str, ...] = ()

    @property
    def hops(self) -> int:
        """Number of relations on the path."""
        return len(self.relations)

    def to_json(self) -> str:
        """One JSONL line."""
        row = asdict(self)
        if not row["outputs"]:
            row.pop("outputs")
        if not row["directions"]:
            row.pop("directions")
        return json.dumps(row, ensure_ascii=False)


_TUPLES = ("topic", "topic_types", "relations", "answers", "directions")


def example_from_dict(row: dict, where: str) -> SolvedExample:
    """Build an example from a JSON object; a ValueError names ``where`` (``file:line``) and the problem."""
    if not isinstance(row, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(row).__name__}")
    for key in ("question", "relations"):
        if not row.get(key):
            raise ValueError(f"{where}: needs a non-empty {key!r}")
    values = {}
    for key in _TUPLES:
        value = row.get(key, ())
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{where}: {key!r} must be a list of strings")
        values[key] = tuple(value)
    source = row.get("source", "user")
    if source not in SOURCES:
        raise ValueError(f"{where}: source {source!r} is not one of {', '.join(SOURCES)}")
    outputs = row.get("outputs") or {}
    if not isinstance(outputs, dict):
        raise ValueError(f"{where}: 'outputs' must be an object keyed by role name")
    if values["directions"] and len(values["directions"]) != len(values["relations"]):
        raise ValueError(f"{where}: 'directions' must have one entry per relation")
    question = str(row["question"]).strip()
    return SolvedExample(
        question=question,
        masked=str(row.get("masked") or question),
        topic=values["topic"],
        topic_types=values["topic_types"],
        relations=values["relations"],
        answer_type=str(row.get("answer_type") or ""),
        answers=values["answers"],
        source=source,
        outputs=dict(outputs),
        directions=values["directions"],
    )
